package errorssvc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/defectshowcase/showcase/platform/defects"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
)

var (
	successBody = []byte(`{"success":true}`)
	failureBody = []byte(`{"success":false}`)
)

// unsupportedMediaType is endpoint 4's 415 message.
const unsupportedMediaType = "Unsupported Media Type: send application/json"

// bodyStatus maps a body problem to its status code.
func bodyStatus(p reqparse.BodyProblem) int {
	switch p {
	case reqparse.BodyUnsupportedMediaType:
		return http.StatusUnsupportedMediaType
	case reqparse.BodyTooLarge:
		return http.StatusRequestEntityTooLarge
	default:
		return http.StatusBadRequest
	}
}

// fieldOrFail reads the body's property name, or answers in the
// {"success": false} shape of endpoints 2 and 3 and returns false: 415, 413,
// or 400 for invalid JSON, a body that is not an object or lacks the property.
func (s *Service) fieldOrFail(w http.ResponseWriter, r *http.Request, name string) (json.RawMessage, bool) {
	obj, ok := s.objectOrFail(w, r)
	if !ok {
		return nil, false
	}
	raw, ok := obj[name]
	if !ok {
		respond.JSON(w, http.StatusBadRequest, failureBody)
	}
	return raw, ok
}

// objectOrFail reads the body's object, or answers 415, 413 or 400 in the
// {"success": false} shape.
func (s *Service) objectOrFail(w http.ResponseWriter, r *http.Request) (reqparse.Object, bool) {
	obj, problem := reqparse.ReadObject(r, s.maxBody)
	if problem != reqparse.BodyOK {
		respond.JSON(w, bodyStatus(problem), failureBody)
		return nil, false
	}
	return obj, true
}

// declaredMediaType reports whether the body is application/json, the one
// media type the contract declares: the endpoints check it with their
// defect switched off. (With it on they take any +json type, as the
// original did.)
func declaredMediaType(r *http.Request) bool {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return err == nil && mt == "application/json"
}

// stringOrFail decodes raw as a JSON string, or answers 400 naming field.
func stringOrFail(w http.ResponseWriter, raw json.RawMessage, field string) (string, bool) {
	if reqparse.KindOf(bytes.TrimSpace(raw)) != reqparse.KindString {
		respond.Fail(w, http.StatusBadRequest, field+" must be a string")
		return "", false
	}
	var v string
	_ = json.Unmarshal(raw, &v) // valid: the whole body was validated
	return v, true
}

// --- Endpoint 2 -------------------------------------------------------------

func (s *Service) improperInputTypeHandling(w http.ResponseWriter, r *http.Request) {
	planted := s.defects.Active(defects.ERR01)
	if !planted && !declaredMediaType(r) {
		respond.JSON(w, http.StatusUnsupportedMediaType, failureBody)
		return
	}
	raw, ok := s.fieldOrFail(w, r, "number")
	if !ok {
		return
	}
	var number string
	if planted {
		number = pythonStr(raw)
	} else if number, ok = stringOrFail(w, raw, "number"); !ok {
		return
	}
	// Switched off, the digits are exactly what the corrected contract's
	// pattern ^[0-9]*$ allows; planted, any Unicode decimal digit counts,
	// as Python's int() of one character reads it.
	digit := asciiDigit
	if planted {
		digit = reqparse.DigitValue
	}
	digits, err := cardDigits(number, digit)
	if err != nil {
		// DEFECT(ERR-01): a character that is not a digit is not handled;
		// the request dies here and ends in a 500. Switched off, it is
		// rejected as invalid input.
		if planted {
			panic(err)
		}
		de := err.(digitError)
		respond.Fail(w, http.StatusBadRequest, fmt.Sprintf("number must contain digits only: %s at position %d is not one", strconv.QuoteRune(de.char), de.pos))
		return
	}
	if luhnChecksum(digits)%10 == 0 {
		respond.JSON(w, http.StatusOK, successBody)
		return
	}
	respond.JSON(w, http.StatusOK, failureBody)
}

// pythonStr is the text Python's str() gives the decoded JSON value: a string
// as it is, an integer as its digits, true/false/null as True/False/None, and
// anything else as its JSON text. Only whether every character is a digit
// matters, and a float, a negative number, an array or an object never is.
func pythonStr(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	switch reqparse.KindOf(raw) {
	case reqparse.KindString:
		var s string
		_ = json.Unmarshal(raw, &s) // valid: the whole body was validated
		return s
	case reqparse.KindBool:
		if raw[0] == 't' {
			return "True"
		}
		return "False"
	case reqparse.KindNull:
		return "None"
	case reqparse.KindNumber:
		if string(raw) == "-0" { // Python reads -0 as the integer 0
			return "0"
		}
	}
	return string(raw)
}

// digitError is the unhandled failure of a non-digit character.
type digitError struct {
	char rune
	pos  int
}

func (e digitError) Error() string {
	return fmt.Sprintf("invalid literal for int() with base 10: %s (character %d)", strconv.QuoteRune(e.char), e.pos)
}

// cardDigits converts every character of the card number to its value
// with digit; the first character that is not a digit is the error.
func cardDigits(number string, digit func(rune) (int, bool)) ([]int, error) {
	digits := make([]int, 0, len(number))
	pos := 0
	for _, c := range number {
		d, ok := digit(c)
		if !ok {
			return nil, digitError{char: c, pos: pos}
		}
		digits = append(digits, d)
		pos++
	}
	return digits, nil
}

// asciiDigit is the value of an ASCII digit, the only kind [0-9] matches.
func asciiDigit(c rune) (int, bool) {
	if '0' <= c && c <= '9' {
		return int(c - '0'), true
	}
	return 0, false
}

// luhnChecksum is the Luhn sum: from the right, every second digit doubled,
// the digits of each product added.
func luhnChecksum(digits []int) int {
	sum := 0
	for i := range digits {
		d := digits[len(digits)-1-i]
		if i%2 == 1 {
			d *= 2
			if d > 9 {
				d -= 9
			}
		}
		sum += d
	}
	return sum
}

// --- Endpoint 3 -------------------------------------------------------------

func (s *Service) exceedingColumnSize(w http.ResponseWriter, r *http.Request) {
	if !s.defects.Active(defects.ERR02) {
		s.storeText(w, r)
		return
	}
	raw, ok := s.fieldOrFail(w, r, "text")
	if !ok {
		return
	}
	value, err := sqliteValue(raw)
	if err == nil {
		// The insert finishes even if the client leaves: every answered
		// 200 is a committed row, and no half-done work is left behind.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
		err = s.store.insert(ctx, value)
		cancel()
	}
	if err != nil {
		respond.Fail(w, http.StatusInternalServerError, err.Error())
		return
	}
	respond.JSON(w, http.StatusOK, successBody)
}

// maxText is the length the contract promises endpoint 3 stores.
const maxText = 255

// storeText is endpoint 3 with ERR-02 switched off (see New): the body the
// contract declares, {"text": <string of at most 255 characters>} and no
// other property, is stored; anything else is rejected with 400.
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
	err := s.store.insert(ctx, text)
	cancel()
	if err != nil { // the checks above make the table's own check unreachable
		respond.Fail(w, http.StatusInternalServerError, "the text could not be stored")
		return
	}
	respond.JSON(w, http.StatusOK, successBody)
}

// sqliteValue is the value SQLite binds for a JSON value: strings as text,
// integers as INTEGER (REAL beyond 64 bits, as SQLite reads such literals),
// other numbers as REAL, booleans as 1/0, null as NULL. Arrays and objects
// cannot be bound.
func sqliteValue(raw json.RawMessage) (any, error) {
	raw = bytes.TrimSpace(raw)
	switch k := reqparse.KindOf(raw); k {
	case reqparse.KindString:
		var s string
		_ = json.Unmarshal(raw, &s)
		return s, nil
	case reqparse.KindNumber:
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return i, nil
		}
		f, _ := strconv.ParseFloat(string(raw), 64) // ±Inf beyond float64
		return f, nil
	case reqparse.KindBool:
		if raw[0] == 't' {
			return int64(1), nil
		}
		return int64(0), nil
	case reqparse.KindNull:
		return nil, nil
	default:
		return nil, fmt.Errorf("Error binding parameter 1: type '%s' is not supported", k)
	}
}

// --- Endpoint 4 -------------------------------------------------------------

func (s *Service) improperUnicodeEncoding(w http.ResponseWriter, r *http.Request) {
	planted := s.defects.Active(defects.ERR03)
	if !planted && !declaredMediaType(r) {
		respond.Fail(w, http.StatusUnsupportedMediaType, unsupportedMediaType)
		return
	}
	obj, problem := reqparse.ReadObject(r, s.maxBody)
	switch problem {
	case reqparse.BodyOK:
	case reqparse.BodyUnsupportedMediaType:
		respond.Fail(w, http.StatusUnsupportedMediaType, unsupportedMediaType)
		return
	case reqparse.BodyTooLarge:
		respond.Fail(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	case reqparse.BodyNotObject:
		respond.Fail(w, http.StatusBadRequest, "Missing text")
		return
	default:
		respond.Fail(w, http.StatusBadRequest, "Invalid JSON")
		return
	}
	raw, ok := obj["text"]
	if !ok {
		respond.Fail(w, http.StatusBadRequest, "Missing text")
		return
	}
	if k := reqparse.KindOf(raw); k != reqparse.KindString {
		if planted { // part of ERR-03: the value is encoded unchecked
			respond.Fail(w, http.StatusInternalServerError, fmt.Sprintf("cannot encode a JSON %s to ASCII: not a string", k))
		} else {
			respond.Fail(w, http.StatusBadRequest, "text must be a string")
		}
		return
	}
	var text string
	_ = json.Unmarshal(raw, &text)
	if err := encodeASCII(text); err != nil {
		// DEFECT(ERR-03): the encoding failure is not handled as a client
		// error; non-ASCII text, which the contract accepts, ends in a 500.
		// Switched off, a character beyond ASCII is no failure: the text is
		// accepted, as the contract says.
		if planted {
			respond.Fail(w, http.StatusInternalServerError, err.Error())
			return
		}
	}
	respond.JSON(w, http.StatusOK, successBody)
}

// encodeASCII fails on the first character outside ASCII, naming it and its
// position the way Python's ascii codec does.
func encodeASCII(text string) error {
	pos := 0
	for _, c := range text {
		if c >= 0x80 {
			return fmt.Errorf("'ascii' codec can't encode character '%s' in position %d: ordinal not in range(128)", pyEscape(c), pos)
		}
		pos++
	}
	return nil
}

func pyEscape(c rune) string {
	switch {
	case c <= 0xff:
		return fmt.Sprintf(`\x%02x`, c)
	case c <= 0xffff:
		return fmt.Sprintf(`\u%04x`, c)
	default:
		return fmt.Sprintf(`\U%08x`, c)
	}
}
