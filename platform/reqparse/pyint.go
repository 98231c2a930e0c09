package reqparse

import (
	"math/big"
	"strings"
	"unicode"
)

// MaxIntDigits is Python's default limit on the digits of an int() parse;
// longer text is not an integer.
const MaxIntDigits = 4300

// ParseInt reads s the way Python's int(s) does for base 10: surrounding
// whitespace, an optional sign, digits of any script (Unicode category Nd)
// with single underscores between them, at most MaxIntDigits digits. The
// value has arbitrary size.
func ParseInt(s string) (*big.Int, bool) {
	s = strings.TrimFunc(s, isPySpace)
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	if s == "" {
		return nil, false
	}
	ascii := make([]byte, 0, len(s))
	lastUnderscore := true // a leading underscore is as bad as a double one
	for _, r := range s {
		if r == '_' {
			if lastUnderscore {
				return nil, false
			}
			lastUnderscore = true
			continue
		}
		d, ok := DigitValue(r)
		if !ok {
			return nil, false
		}
		ascii = append(ascii, byte('0'+d))
		lastUnderscore = false
	}
	if lastUnderscore || len(ascii) > MaxIntDigits {
		return nil, false
	}
	v, ok := new(big.Int).SetString(string(ascii), 10)
	if !ok {
		return nil, false
	}
	if neg {
		v.Neg(v)
	}
	return v, true
}

// isPySpace is Python's str.isspace: Unicode White_Space plus the
// information separators U+001C..U+001F.
func isPySpace(r rune) bool {
	return unicode.IsSpace(r) || (r >= 0x1c && r <= 0x1f)
}

// DigitValue returns the value of a Unicode decimal digit (category Nd), as
// Python's int() of that one character would. Unicode encodes every Nd digit
// in runs of ten, zero first, so the value is the offset within its run.
func DigitValue(r rune) (int, bool) {
	if '0' <= r && r <= '9' {
		return int(r - '0'), true
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return 0, false
	}
	for _, rg := range unicode.Nd.R16 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); lo <= r && r <= hi && rg.Stride == 1 {
			return int(r-lo) % 10, true
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if lo, hi := rune(rg.Lo), rune(rg.Hi); lo <= r && r <= hi && rg.Stride == 1 {
			return int(r-lo) % 10, true
		}
	}
	return 0, false
}

// ParseStrictInt reads an integer as an OpenAPI "integer" query value is
// written: an optional sign and ASCII digits, nothing around them, at most
// MaxIntDigits digits. The value has arbitrary size; bounds are the caller's.
func ParseStrictInt(s string) (*big.Int, bool) {
	digits := strings.TrimPrefix(strings.TrimPrefix(s, "+"), "-")
	if len(s)-len(digits) > 1 || digits == "" || len(digits) > MaxIntDigits {
		return nil, false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return nil, false
		}
	}
	return new(big.Int).SetString(s, 10)
}
