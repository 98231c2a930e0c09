// Package reqparse reads requests the way the original demo did: JSON bodies
// as Flask's get_json read them, query strings as Werkzeug split them, and
// integers as Python's int() parsed them.
package reqparse

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"
)

// DefaultMaxBodyBytes bounds a request body unless a service is configured otherwise.
const DefaultMaxBodyBytes = 1 << 20

// BodyProblem says why a body could not be read as a JSON object. Each
// endpoint answers it in its own failure shape.
type BodyProblem int

const (
	BodyOK                   BodyProblem = iota
	BodyUnsupportedMediaType             // 415: Content-Type absent or not JSON
	BodyTooLarge                         // 413: more than the configured limit
	BodyInvalidJSON                      // 400: empty, malformed, not UTF-8
	BodyNotObject                        // 400: valid JSON, but not an object
)

// Object is a decoded JSON object with its values still raw, so that each
// endpoint can see exactly which JSON type a property had.
type Object map[string]json.RawMessage

// IsJSONMediaType reports whether a Content-Type value names JSON:
// application/json or any type with the +json suffix, parameters allowed.
func IsJSONMediaType(contentType string) bool {
	if contentType == "" {
		return false
	}
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return false
	}
	return mt == "application/json" || (strings.HasSuffix(mt, "+json") && strings.Contains(mt, "/"))
}

// ReadObject reads r's body, at most maxBytes of it, as a JSON object.
func ReadObject(r *http.Request, maxBytes int64) (Object, BodyProblem) {
	if !IsJSONMediaType(r.Header.Get("Content-Type")) {
		return nil, BodyUnsupportedMediaType
	}
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBodyBytes
	}
	if r.ContentLength > maxBytes {
		return nil, BodyTooLarge
	}
	var body []byte
	var err error
	if r.ContentLength > 0 {
		// Read into exactly its size: io.ReadAll would grow its buffer by
		// doubling, to twice the body at worst.
		body = make([]byte, r.ContentLength)
		_, err = io.ReadFull(r.Body, body)
	} else {
		body, err = io.ReadAll(io.LimitReader(r.Body, maxBytes+1))
	}
	if err != nil {
		return nil, BodyInvalidJSON // the client broke off mid-body
	}
	if int64(len(body)) > maxBytes {
		return nil, BodyTooLarge
	}
	return DecodeObject(body)
}

// DecodeObject decodes body as a JSON object. Duplicate keys keep the last
// value, as Python's json module does.
func DecodeObject(body []byte) (Object, BodyProblem) {
	if !utf8.Valid(body) || !json.Valid(body) {
		return nil, BodyInvalidJSON
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); t[0] != '{' {
		return nil, BodyNotObject
	}
	var obj Object
	if err := json.Unmarshal(body, &obj); err != nil {
		return nil, BodyInvalidJSON
	}
	return obj, BodyOK
}

// JSONKind is the JSON type of a raw value.
type JSONKind int

const (
	KindNull JSONKind = iota
	KindBool
	KindNumber
	KindString
	KindArray
	KindObject
)

// String names the kind the way JSON does.
func (k JSONKind) String() string {
	return [...]string{"null", "boolean", "number", "string", "array", "object"}[k]
}

// KindOf returns the JSON type of a valid raw value.
func KindOf(v json.RawMessage) JSONKind {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return KindNull
	}
	switch v[0] {
	case 'n':
		return KindNull
	case 't', 'f':
		return KindBool
	case '"':
		return KindString
	case '[':
		return KindArray
	case '{':
		return KindObject
	default:
		return KindNumber
	}
}
