package errorssvc

import (
	"bytes"
	"encoding/json"
	"mime"
	"net/http"

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

// textOrFail reads endpoint 4's text property, or answers in its
// {"success": false, "error": ...} shape: 415, 413, or 400 for invalid
// JSON, a body that is not an object or lacks the property.
func (s *Service) textOrFail(w http.ResponseWriter, r *http.Request) (json.RawMessage, bool) {
	obj, problem := reqparse.ReadObject(r, s.maxBody)
	switch problem {
	case reqparse.BodyOK:
	case reqparse.BodyUnsupportedMediaType:
		respond.Fail(w, http.StatusUnsupportedMediaType, unsupportedMediaType)
		return nil, false
	case reqparse.BodyTooLarge:
		respond.Fail(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return nil, false
	case reqparse.BodyNotObject:
		respond.Fail(w, http.StatusBadRequest, "Missing text")
		return nil, false
	default:
		respond.Fail(w, http.StatusBadRequest, "Invalid JSON")
		return nil, false
	}
	raw, ok := obj["text"]
	if !ok {
		respond.Fail(w, http.StatusBadRequest, "Missing text")
	}
	return raw, ok
}
