package catalogue

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// Contract mutants: the second mode beside the ten planted defects. A
// mutant is an operator (a way of breaking the contract, named as
// mutation analysis and API testing name it) applied to one operation of
// the corrected contract under one condition on the request. A seed draws
// a set of them (DrawMutants); the gateway plants them in front of a
// service that otherwise keeps its contract (DEFECTS=none), so every seed
// gives defects that no tool can have been tuned to.
//
// A mutant's ID says all three and nothing else: the same ID is the same
// mutant under every seed, and MutantOf rebuilds it from the ID alone.

// Operator is a way of breaking the contract.
type Operator struct {
	Name    string // as the ID spells it: wrong-type
	Title   string // a few words
	Summary string // what it does to an answer, in the field's words
	// Classes are the classes of check that detect it; Faces the further
	// findings that are the same fault.
	Classes, Faces []Class
	CWE            int
	WFC            []int
	OWASP          string
	CodesNote      string
	// applies says whether the operator fits the operation at all: no
	// skip-validation where the operation takes no input.
	applies func(op *mutantOp) bool
	// apply is the answer with the operator applied to the conformant
	// answer a of an operation; the caller compares the two.
	apply func(op *mutantOp, a Answer) Answer
	// shows is what the changed answer shows, in words.
	shows func(op *mutantOp, conformant, mutated Answer) string
}

// Answer is an answer to a request: what a mutant changes.
type Answer struct {
	Status      int
	ContentType string
	Body        []byte
	// Wait is how long the answer is held before it is sent.
	Wait time.Duration
}

// Same reports whether two answers are the same to a client.
func (a Answer) Same(b Answer) bool {
	return a.Status == b.Status && a.ContentType == b.ContentType && bytes.Equal(a.Body, b.Body) && a.Wait == b.Wait
}

// SlowWait is how long the slow operator holds an answer: beyond the one
// second that contract-testing tools take as a response-time limit, and a
// timer, so it is the same on any machine.
const SlowWait = 1500 * time.Millisecond

const contentTypeJSON = "application/json"

// The operators, in the order the docs table lists them.
var Operators = []Operator{
	{Name: "undeclared-status", Title: "Undeclared status",
		Summary: "answers 422, a status the operation does not declare",
		Classes: []Class{UndocumentedStatus}, WFC: []int{WFCSchemaMismatch},
		// A 422 to a request the contract allows is also a valid request
		// rejected, as a tool that sends valid input sees it.
		Faces:     []Class{RejectedValid},
		CodesNote: "F101: an undeclared status is a response not matching the operation's declared responses",
		applies:   func(op *mutantOp) bool { return !op.defaultResponse },
		apply: func(op *mutantOp, a Answer) Answer {
			return Answer{Status: http.StatusUnprocessableEntity, ContentType: contentTypeJSON, Body: op.errorBody("Unprocessable Entity"), Wait: a.Wait}
		},
		shows: func(_ *mutantOp, _, m Answer) string {
			return fmt.Sprintf("%d, a status the operation does not declare", m.Status)
		}},
	{Name: "server-error", Title: "Server error",
		Summary: "answers 500 with a generic error",
		Classes: []Class{ServerError}, CWE: 755, WFC: []int{WFCServerError},
		CodesNote: "CWE-755, an exceptional condition not handled; no OWASP category: the 500 tells nothing of the inside",
		applies:   func(*mutantOp) bool { return true },
		apply: func(op *mutantOp, a Answer) Answer {
			return Answer{Status: http.StatusInternalServerError, ContentType: contentTypeJSON, Body: op.errorBody("Internal Server Error"), Wait: a.Wait}
		},
		shows: func(*mutantOp, Answer, Answer) string { return "500 Internal Server Error" }},
	{Name: "server-error-leak", Title: "Server error leaking its internals",
		Summary: "answers 500 whose body carries the internal error: a Go panic with its stack trace",
		Classes: []Class{ServerError}, CWE: 209, WFC: []int{WFCServerError, WFCLeakedStackTrace}, OWASP: "API8:2023",
		CodesNote: "the server-error operator's leaking variant: F209 and CWE-209 for the stack trace in the body, Security Misconfiguration as OWASP files a verbose error",
		applies:   func(*mutantOp) bool { return true },
		apply: func(op *mutantOp, a Answer) Answer {
			return Answer{Status: http.StatusInternalServerError, ContentType: contentTypeJSON, Body: op.errorBody(leakedPanic), Wait: a.Wait}
		},
		shows: func(*mutantOp, Answer, Answer) string { return "500 whose body carries a Go panic and its stack trace" }},
	{Name: "drop-required", Title: "Required property dropped",
		Summary: "leaves a required property out of the answer",
		Classes: []Class{InvalidBody}, WFC: []int{WFCSchemaMismatch},
		CodesNote: "F101: the body does not match its schema",
		applies:   func(op *mutantOp) bool { return len(op.required) > 0 },
		apply: func(op *mutantOp, a Answer) Answer {
			prop := op.requiredAt(a.Status)
			members, ok := jsonMembers(a.Body)
			if prop == "" || !ok {
				return a
			}
			kept := slices.DeleteFunc(slices.Clone(members), func(m member) bool { return m.key == prop })
			if len(kept) == len(members) {
				return a
			}
			a.Body = joinMembers(kept)
			return a
		},
		shows: func(op *mutantOp, c, m Answer) string {
			return fmt.Sprintf("%d without the required `%s`", m.Status, op.requiredAt(c.Status))
		}},
	{Name: "wrong-type", Title: "Property of the wrong type",
		Summary: "gives the answer's first property a value of another JSON type",
		Classes: []Class{InvalidBody}, WFC: []int{WFCSchemaMismatch},
		CodesNote: "F101: the body does not match its schema",
		applies:   func(*mutantOp) bool { return true },
		apply: func(_ *mutantOp, a Answer) Answer {
			members, ok := jsonMembers(a.Body)
			if !ok || len(members) == 0 {
				return a
			}
			members[0].value = otherType(members[0].value)
			a.Body = joinMembers(members)
			return a
		},
		shows: func(_ *mutantOp, c, m Answer) string {
			cm, _ := jsonMembers(c.Body)
			mm, _ := jsonMembers(m.Body)
			return fmt.Sprintf("%d with `%s` %s where the contract says %s", m.Status, cm[0].key, kindOf(mm[0].value), kindOf(cm[0].value))
		}},
	{Name: "malformed-body", Title: "Malformed JSON",
		Summary: "cuts the answer's last byte off: labelled JSON, it no longer parses",
		Classes: []Class{InvalidBody}, WFC: []int{WFCSchemaMismatch},
		CodesNote: "F101: a body that does not parse matches no schema",
		applies:   func(*mutantOp) bool { return true },
		apply: func(_ *mutantOp, a Answer) Answer {
			if !isJSON(a.ContentType) || len(a.Body) == 0 {
				return a
			}
			a.Body = a.Body[:len(a.Body)-1]
			return a
		},
		shows: func(_ *mutantOp, _, m Answer) string {
			return fmt.Sprintf("%d labelled JSON, its body cut short: not JSON", m.Status)
		}},
	{Name: "wrong-content-type", Title: "Wrong content type",
		Summary: "labels the JSON answer text/plain",
		Classes: []Class{WrongContentType}, WFC: []int{WFCSchemaMismatch},
		CodesNote: "F101: WFC has no class of its own for a content type",
		applies:   func(*mutantOp) bool { return true },
		apply: func(_ *mutantOp, a Answer) Answer {
			if isJSON(a.ContentType) {
				a.ContentType = "text/plain; charset=utf-8"
			}
			return a
		},
		shows: func(_ *mutantOp, _, m Answer) string { return fmt.Sprintf("%d labelled %s", m.Status, m.ContentType) }},
	{Name: "skip-validation", Title: "Validation skipped",
		Summary: "answers 200 to an input the contract forbids (negative data accepted)",
		Classes: []Class{AcceptedInvalid}, CWE: 20, WFC: []int{WFCSuccessOnInvalid},
		CodesNote: "F102, success on invalid input; CWE-20, input not validated; no OWASP category: nothing is exposed by it",
		applies:   func(op *mutantOp) bool { return op.input && !op.auth },
		apply: func(op *mutantOp, a Answer) Answer {
			if a.Status != http.StatusBadRequest {
				return a
			}
			return Answer{Status: http.StatusOK, ContentType: contentTypeJSON, Body: []byte(op.success), Wait: a.Wait}
		},
		shows: func(_ *mutantOp, _, m Answer) string {
			return fmt.Sprintf("%d: the input the contract forbids is accepted", m.Status)
		}},
	{Name: "reject-valid", Title: "Valid input rejected",
		Summary:   "answers 400 to an input the contract allows (positive data rejected)",
		Classes:   []Class{RejectedValid},
		CodesNote: "no WFC code, CWE or OWASP category: a refusal of valid input is a functional fault, and WFC has no class for it",
		applies:   func(op *mutantOp) bool { return op.input && !op.auth },
		apply: func(op *mutantOp, a Answer) Answer {
			if a.Status/100 != 2 {
				return a
			}
			return Answer{Status: http.StatusBadRequest, ContentType: contentTypeJSON, Body: op.errorBody("Invalid input"), Wait: a.Wait}
		},
		shows: func(_ *mutantOp, _, m Answer) string {
			return fmt.Sprintf("%d: the input the contract allows is rejected", m.Status)
		}},
	{Name: "slow", Title: "Slow answer",
		Summary:   "holds the answer 1.5 s, a wait and not work, before sending it",
		Classes:   []Class{SlowResponse},
		CodesNote: "no WFC code, CWE or OWASP category: WFC has no class for a slow answer, and a wait consumes no resource",
		applies:   func(*mutantOp) bool { return true },
		apply: func(_ *mutantOp, a Answer) Answer {
			a.Wait = SlowWait
			return a
		},
		shows: func(_ *mutantOp, _, m Answer) string {
			return fmt.Sprintf("%d after %.1f s", m.Status, m.Wait.Seconds())
		}},
	{Name: "auth-bypass", Title: "Authentication bypassed",
		Summary: "answers 200 with the protected data to a request without the right key",
		Classes: []Class{AuthBypass}, Faces: []Class{AcceptedInvalid}, CWE: 306, WFC: []int{WFCNoAuthAccess}, OWASP: "API2:2023",
		CodesNote: "F207, a protected resource accessible without authentication; the missing check of a credential is Broken Authentication",
		applies:   func(op *mutantOp) bool { return op.auth },
		apply: func(op *mutantOp, a Answer) Answer {
			if a.Status != http.StatusUnauthorized {
				return a
			}
			return Answer{Status: http.StatusOK, ContentType: contentTypeJSON, Body: []byte(op.success), Wait: a.Wait}
		},
		shows: func(*mutantOp, Answer, Answer) string { return "200 with the data, and no right key was sent" }},
}

// leakedPanic is the internal error a leaking server error shows.
const leakedPanic = "runtime error: invalid memory address or nil pointer dereference\n" +
	"goroutine 57 [running]:\n" +
	"main.(*store).lookup(0x0, {0xc000124000, 0x5})\n\t/src/internal/store/store.go:88 +0x1d\n" +
	"main.handle({0x9a1c40, 0xc0001b6000}, 0xc0001c4000)\n\t/src/cmd/api/handler.go:41 +0x5e"

// OperatorNamed returns the operator of that name.
func OperatorNamed(name string) (Operator, bool) {
	i := slices.IndexFunc(Operators, func(o Operator) bool { return o.Name == name })
	if i < 0 {
		return Operator{}, false
	}
	return Operators[i], true
}

func isJSON(contentType string) bool {
	media, _, err := mime.ParseMediaType(contentType)
	return err == nil && media == contentTypeJSON
}

// member is one property of a JSON object, its value as written.
type member struct {
	key   string
	value json.RawMessage
}

// jsonMembers reads a JSON object's properties in order; ok is false for
// anything else.
func jsonMembers(body []byte) (ms []member, ok bool) {
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	ms = []member{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		ms = append(ms, member{key: t.(string), value: v})
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); err == nil {
		return nil, false // something after the object
	}
	return ms, true
}

func joinMembers(ms []member) []byte {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(m.key)
		b.Write(k)
		b.WriteByte(':')
		b.Write(m.value)
	}
	b.WriteByte('}')
	return b.Bytes()
}

// otherType is a JSON value of another type than v: a string becomes a
// number, anything else the string of its text.
func otherType(v json.RawMessage) json.RawMessage {
	if len(v) > 0 && v[0] == '"' {
		return json.RawMessage("0")
	}
	s, _ := json.Marshal(string(v))
	return s
}

// kindOf names a JSON value's type as JSON Schema does.
func kindOf(v json.RawMessage) string {
	switch {
	case len(v) == 0:
		return "nothing"
	case v[0] == '"':
		return "a string"
	case v[0] == '{':
		return "an object"
	case v[0] == '[':
		return "an array"
	case v[0] == 't' || v[0] == 'f':
		return "a boolean"
	case v[0] == 'n':
		return "null"
	}
	return "a number"
}

// Input is what a mutant's condition reads of a request: its query, its
// header and its JSON body, decoded once.
type Input struct {
	Query  url.Values
	Header http.Header
	// Body is the decoded JSON body (numbers as json.Number); nil when
	// there is none or it is not JSON.
	Body any
}

// MaxInputBody is the longest body a condition reads: more than any
// service accepts. A longer body meets no condition on the body.
const MaxInputBody = 1 << 20

// NewInput reads a request's input; body is the request's body as read
// (nil when none was read).
func NewInput(r *http.Request, body []byte) Input {
	in := Input{Header: r.Header}
	in.Query, _ = url.ParseQuery(r.URL.RawQuery)
	if len(body) > 0 && len(body) <= MaxInputBody {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) == nil && !dec.More() {
			in.Body = v
		}
	}
	return in
}

// field is a property of the body's object: its value and whether it is
// there; ok is false when the body is not a JSON object.
func (in Input) field(name string) (v any, present, ok bool) {
	obj, ok := in.Body.(map[string]any)
	if !ok {
		return nil, false, false
	}
	v, present = obj[name]
	return v, present, true
}

// param is the query parameter's first value and whether it was sent.
func (in Input) param(name string) (string, bool) {
	v, ok := in.Query[name]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// header is the header's first value and whether it was sent.
func (in Input) header(name string) (string, bool) {
	v, ok := in.Header[http.CanonicalHeaderKey(name)]
	if !ok || len(v) == 0 {
		return "", false
	}
	return v[0], true
}

// lowerHas reports whether s holds sub, any letter case.
func lowerHas(s, sub string) bool { return strings.Contains(strings.ToLower(s), sub) }
