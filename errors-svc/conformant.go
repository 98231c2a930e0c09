package errorssvc

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
)

// The conformant variants of endpoints 2, 3 and 4: each takes only the
// body the (corrected) contract declares, as application/json, and rejects
// anything else as the client's error.

// luhnOfDigits is endpoint 2 with its defect switched off: number must be a
// string of the ASCII digits the corrected contract's pattern ^[0-9]*$
// allows; anything else is 400.
func (s *Service) luhnOfDigits(w http.ResponseWriter, r *http.Request) {
	if !declaredMediaType(r) {
		respond.JSON(w, http.StatusUnsupportedMediaType, failureBody)
		return
	}
	raw, ok := s.fieldOrFail(w, r, "number")
	if !ok {
		return
	}
	number, ok := stringOrFail(w, raw, "number")
	if !ok {
		return
	}
	digits, err := cardDigits(number, asciiDigit)
	if err != nil {
		de := err.(digitError)
		respond.Fail(w, http.StatusBadRequest, fmt.Sprintf("number must contain digits only: %s at position %d is not one", strconv.QuoteRune(de.char), de.pos))
		return
	}
	answerLuhn(w, digits)
}

// asciiDigit is the value of an ASCII digit, the only kind [0-9] matches.
func asciiDigit(c rune) (int, bool) {
	if '0' <= c && c <= '9' {
		return int(c - '0'), true
	}
	return 0, false
}

// maxText is the length the contract promises endpoint 3 stores.
const maxText = 255

// storeText is endpoint 3 with its defect switched off: the body the contract
// declares, {"text": <string of at most 255 characters>} and no other
// property, is stored in the texts table; anything else is rejected with
// 400.
func (s *Service) storeText(w http.ResponseWriter, r *http.Request) {
	if !declaredMediaType(r) {
		respond.JSON(w, http.StatusUnsupportedMediaType, failureBody)
		return
	}
	obj, ok := s.objectOrFail(w, r)
	if !ok {
		return
	}
	raw, ok := obj["text"]
	if !ok {
		respond.JSON(w, http.StatusBadRequest, failureBody)
		return
	}
	if len(obj) != 1 {
		respond.Fail(w, http.StatusBadRequest, "text is the only property")
		return
	}
	text, ok := stringOrFail(w, raw, "text")
	if !ok {
		return
	}
	if n := utf8.RuneCountInString(text); n > maxText {
		respond.Fail(w, http.StatusBadRequest, fmt.Sprintf("text must be at most %d characters, not %d", maxText, n))
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	err := s.store.insert(ctx, texts, text)
	cancel()
	if err != nil { // the checks above make the table's own check unreachable
		storeFailed(w, err)
		respond.Fail(w, http.StatusInternalServerError, "the text could not be stored")
		return
	}
	respond.JSON(w, http.StatusOK, successBody)
}

// acceptAnyText is endpoint 4 with its defect switched off: a character beyond
// ASCII is no failure, the text is accepted, as the contract says; a value
// that is not a string is 400.
func (s *Service) acceptAnyText(w http.ResponseWriter, r *http.Request) {
	if !declaredMediaType(r) {
		respond.Fail(w, http.StatusUnsupportedMediaType, unsupportedMediaType)
		return
	}
	raw, ok := s.textOrFail(w, r)
	if !ok {
		return
	}
	if reqparse.KindOf(raw) != reqparse.KindString {
		respond.Fail(w, http.StatusBadRequest, "text must be a string")
		return
	}
	respond.JSON(w, http.StatusOK, successBody)
}
