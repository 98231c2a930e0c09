package errorssvc

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/reqparse"
	"github.com/defectshowcase/showcase/platform/respond"
)

// The planted variants of endpoints 2, 3 and 4. With their defect active
// they take any +json media type, as the original did.

// luhnOfAnything is endpoint 2 as planted: whatever number is, its text as
// Python's str() gives it is read digit by digit, any script's digits
// counting, as Python's int() of one character reads them.
func (s *Service) luhnOfAnything(w http.ResponseWriter, r *http.Request) {
	raw, ok := s.fieldOrFail(w, r, "number")
	if !ok {
		return
	}
	digits, err := cardDigits(pythonStr(raw), reqparse.DigitValue)
	if err != nil {
		// DEFECT(ERR-01): a character that is not a digit is not handled;
		// the request dies here and ends in a 500.
		observe.Triggered(w, r)
		panic(err)
	}
	answerLuhn(w, digits)
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

// storeInNarrowColumn is endpoint 3 as planted: the value, whatever its
// JSON type, goes to the records table (see store.go).
func (s *Service) storeInNarrowColumn(w http.ResponseWriter, r *http.Request) {
	raw, ok := s.fieldOrFail(w, r, "text")
	if !ok {
		return
	}
	value, err := sqliteValue(raw)
	if err == nil {
		// The insert finishes even if the client leaves: every answered
		// 200 is a committed row, and no half-done work is left behind.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
		err = s.store.insert(ctx, records, value)
		cancel()
	}
	if err != nil {
		if !storeFailed(w, err) {
			// DEFECT(ERR-02): text the contract accepts fails the narrow
			// column's check, and the database's error text reaches the
			// client. (A store that cannot write fails the same way, but
			// that is the disk, not the defect.)
			observe.Triggered(w, r)
		}
		respond.Fail(w, http.StatusInternalServerError, err.Error())
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

// encodeToASCII is endpoint 4 as planted: the text is encoded to ASCII and
// the failure is not handled.
func (s *Service) encodeToASCII(w http.ResponseWriter, r *http.Request) {
	raw, ok := s.textOrFail(w, r)
	if !ok {
		return
	}
	if k := reqparse.KindOf(raw); k != reqparse.KindString {
		// DEFECT(ERR-03): a value that is not a string is encoded unchecked.
		observe.Triggered(w, r)
		respond.Fail(w, http.StatusInternalServerError, fmt.Sprintf("cannot encode a JSON %s to ASCII: not a string", k))
		return
	}
	var text string
	_ = json.Unmarshal(raw, &text)
	if err := encodeASCII(text); err != nil {
		// DEFECT(ERR-03): the encoding failure is not handled as a client
		// error; non-ASCII text, which the contract accepts, ends in a 500.
		observe.Triggered(w, r)
		respond.Fail(w, http.StatusInternalServerError, err.Error())
		return
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
