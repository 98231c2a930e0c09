package reqparse

import (
	"strings"
	"unicode/utf8"
)

// QueryFirst returns the first value of name in a raw query string, split the
// way Werkzeug split it: pairs on '&' only (a ';' is part of a value), key and
// value on the first '=', '+' as a space, malformed percent escapes kept as
// they are, invalid UTF-8 replaced. A pair without '=' has the empty value.
// It does not allocate unless a key or value needs unescaping.
func QueryFirst(rawQuery, name string) (string, bool) {
	for rawQuery != "" {
		var pair string
		pair, rawQuery, _ = strings.Cut(rawQuery, "&")
		if pair == "" {
			continue
		}
		key, value, _ := strings.Cut(pair, "=")
		if key != name && unescape(key) != name {
			continue
		}
		return unescape(value), true
	}
	return "", false
}

func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		if !utf8.ValidString(s) { // raw bytes, decoded as Werkzeug did: replaced
			return strings.ToValidUTF8(s, "\uFFFD")
		}
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	if !utf8.Valid(b) {
		return strings.ToValidUTF8(string(b), "\uFFFD")
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c <= 'F':
		return c - 'A' + 10
	default:
		return c - 'a' + 10
	}
}
