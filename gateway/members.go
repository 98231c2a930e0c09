package gateway

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// members calls fn with each top-level member of body, in order, when body
// is a JSON object as the services read one (reqparse.DecodeObject: UTF-8,
// valid JSON, an object); it reports whether it was. encoding/json decides
// validity; what is left, finding the members of a valid object, is a walk
// that allocates nothing but an escaped key, cheaper than decoding the object
// into a map at each request (BenchmarkRequestParallel). A key given twice is given
// twice; the value is the member's raw JSON, spaces trimmed.
func members(body []byte, fn func(key, value []byte)) bool {
	if !utf8.Valid(body) || !json.Valid(body) {
		return false
	}
	i := skipSpace(body, 0)
	if body[i] != '{' {
		return false
	}
	i++
	for {
		i = skipSpace(body, i)
		switch body[i] {
		case '}':
			return true
		case ',':
			i = skipSpace(body, i+1)
		}
		end := stringEnd(body, i)
		key := body[i+1 : end-1]
		if bytes.IndexByte(key, '\\') >= 0 {
			var s string
			_ = json.Unmarshal(body[i:end], &s) // valid: json.Valid said so
			key = []byte(s)
		}
		i = skipSpace(body, end) + 1 // the colon
		i = skipSpace(body, i)
		vend := valueEnd(body, i)
		fn(key, bytes.TrimRight(body[i:vend], " \t\r\n"))
		i = vend
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// stringEnd is the index just past the string that starts at b[i].
func stringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			j++
		case '"':
			return j + 1
		}
	}
	return len(b)
}

// valueEnd is the index just past the value that starts at b[i], or of the
// comma or brace that follows a scalar.
func valueEnd(b []byte, i int) int {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = stringEnd(b, i) - 1
			if depth == 0 {
				return i + 1
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',':
			if depth == 0 {
				return i
			}
		}
	}
	return i
}
