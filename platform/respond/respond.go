// Package respond is the one JSON writer of the correct paths: compact bodies,
// Content-Type application/json and an exact Content-Length.
package respond

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
)

// ContentTypeJSON is the media type of every JSON response.
const ContentTypeJSON = "application/json"

// Raw writes body with the given status and content type.
func Raw(w http.ResponseWriter, status int, contentType string, body []byte) {
	h := w.Header()
	h["Content-Type"] = []string{contentType}
	h["Content-Length"] = []string{strconv.Itoa(len(body))}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// JSON writes an already encoded JSON body.
func JSON(w http.ResponseWriter, status int, body []byte) {
	Raw(w, status, ContentTypeJSON, body)
}

// Value encodes v compactly and writes it. v must be encodable (the callers
// pass plain structs and maps of strings); if it is not, that is a bug and it
// becomes a 500 with the error shape rather than a half-written body.
func Value(w http.ResponseWriter, status int, v any) {
	body, err := marshal(v)
	if err != nil {
		Error(w, http.StatusInternalServerError, "response encoding failed")
		return
	}
	JSON(w, status, body)
}

// marshal encodes v compactly without escaping <, > and &: the bodies are
// read by tools and people, never embedded in HTML.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

type errorBody struct {
	Error string `json:"error"`
}

// Error writes {"error": msg}.
func Error(w http.ResponseWriter, status int, msg string) {
	Value(w, status, errorBody{Error: msg})
}

// Failure is the failure shape of the storing endpoints and of unhandled
// errors: {"success": false} with an optional "error".
type Failure struct {
	Success bool   `json:"success"`
	Error   string `json:"error,omitempty"`
}

// Fail writes {"success": false, "error": msg}, or {"success": false} when
// msg is empty.
func Fail(w http.ResponseWriter, status int, msg string) {
	Value(w, status, Failure{Error: msg})
}
