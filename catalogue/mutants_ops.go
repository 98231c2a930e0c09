package catalogue

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// The operations as the mutants see them: what input each takes, how it
// answers an error, which property of which answer is required, and the
// conditions a mutant may be planted under, each with example requests
// and the answers the conformant service (DEFECTS=none) gives them. The
// examples are a mutant's triggers, and the proof that it is not
// equivalent: a mutant is drawn only where one of its condition's examples
// gets an answer it changes (mutants_test.go sends them all to the real
// service).

// Depths of a condition.
const (
	DepthEvery  = 0 // every request
	DepthClass  = 1 // a class of input a schema-aware generator produces
	DepthNarrow = 2 // one value, or two parameters together
)

// condition is a condition a mutant is planted under.
type condition struct {
	name  string
	depth int
	says  string // "when …", in words
	match func(in Input) bool
	// examples are requests that meet it, with their conformant answers.
	examples []example
}

// example is a request and the answer the conformant service gives it.
type example struct {
	query, body, header string // header: "Name: value"
	status              int
	answer              string // the JSON body
	note                string // what the answer is, in words
}

// mutantOp is an operation as the mutants see it.
type mutantOp struct {
	n               int  // the endpoint's N
	input           bool // it takes input (parameters or a body)
	body            bool // its conditions read the request's body
	auth            bool // the corrected contract requires the key
	defaultResponse bool // it declares a default response: no status is undeclared
	declares500     bool // it declares a 500
	successStyle    bool // its errors are {"success":false,"error":…}
	// required names the required property of the answer of each status
	// (0: of every status).
	required map[int]string
	success  string // the 2xx answer skip-validation and auth-bypass give
	// probes are further requests, no condition's trigger, that tell
	// which conditions overlap.
	probes     []example
	conditions []condition
}

func (op *mutantOp) endpoint() Endpoint { return Endpoints[op.n-1] }

func (op *mutantOp) errorBody(msg string) []byte {
	var b []byte
	if op.successStyle {
		b = []byte(`{"success":false,"error":`)
	} else {
		b = []byte(`{"error":`)
	}
	m, _ := json.Marshal(msg) // a string always marshals
	return append(append(b, m...), '}')
}

func (op *mutantOp) requiredAt(status int) string {
	if p, ok := op.required[status]; ok {
		return p
	}
	return op.required[0]
}

// pool is every request the operation's data names: its conditions'
// examples and its probes.
func (op *mutantOp) pool() []example {
	var p []example
	for _, c := range op.conditions {
		p = append(p, c.examples...)
	}
	return append(p, op.probes...)
}

// overlap reports whether a request of the pool meets both conditions.
func (op *mutantOp) overlap(a, b *condition) bool {
	return overlaps()[[2]*condition{a, b}]
}

// overlaps is, for each pair of conditions of one operation, whether a
// request of its pool meets both.
var overlaps = sync.OnceValue(func() map[[2]*condition]bool {
	o := map[[2]*condition]bool{}
	for _, op := range mutantOps {
		var ins []Input
		for _, e := range op.pool() {
			ins = append(ins, e.input())
		}
		for i := range op.conditions {
			for j := range op.conditions {
				a, b := &op.conditions[i], &op.conditions[j]
				for _, in := range ins {
					if a.match(in) && b.match(in) {
						o[[2]*condition{a, b}] = true
						break
					}
				}
			}
		}
	}
	return o
})

// input is the example as a condition reads it.
func (e example) input() Input {
	r, _ := http.NewRequest(http.MethodGet, "/?"+strings.TrimPrefix(e.query, "?"), nil)
	if e.header != "" {
		name, value, _ := strings.Cut(e.header, ":")
		r.Header[http.CanonicalHeaderKey(name)] = []string{strings.TrimSpace(value)}
	}
	return NewInput(r, []byte(e.body))
}

// conformant is the example's answer from the conformant service.
func (e example) conformant() Answer {
	return Answer{Status: e.status, ContentType: contentTypeJSON, Body: []byte(e.answer)}
}

// every is the condition every operation has: every request.
func every(examples ...example) condition {
	return condition{name: "any", depth: DepthEvery, says: "on every request", match: func(Input) bool { return true }, examples: examples}
}

// intParam reads a parameter as the services do: a decimal integer.
func intParam(in Input, name string) (n int64, sent, isInt bool) {
	v, sent := in.param(name)
	if !sent {
		return 0, false, false
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, true, err == nil
}

// fibonacciParams reads n and searchTerm; ok when both are integers.
func fibonacciParams(in Input) (n, s int64, ok bool) {
	n, _, nInt := intParam(in, "n")
	s, _, sInt := intParam(in, "searchTerm")
	return n, s, nInt && sInt
}

// stringField reads a body property as a string.
func stringField(in Input, name string) (s string, isString, present bool) {
	v, present, ok := in.field(name)
	if !ok || !present {
		return "", false, false
	}
	s, isString = v.(string)
	return s, isString, true
}

// accept sorts a request by its Accept header, the one input an operation
// without parameters reads: absent, naming text/html, naming
// application/json, or other.
func accept(in Input) string {
	v, ok := in.header("Accept")
	switch {
	case !ok:
		return "absent"
	case lowerHas(v, "text/html"):
		return "html"
	case lowerHas(v, "application/json"):
		return "json"
	}
	return "other"
}

// acceptConditions are the conditions of an operation without input,
// whose conformant answer is always answer.
func acceptConditions(answer, note string) []condition {
	ok := func(header string) example {
		return example{header: header, status: 200, answer: answer, note: note}
	}
	return []condition{
		every(ok(""), ok("Accept: application/json")),
		{name: "accept-json", depth: DepthClass, says: "when `Accept` names `application/json`, as the contract's media type",
			match: func(in Input) bool { return accept(in) == "json" }, examples: []example{ok("Accept: application/json")}},
		{name: "accept-absent", depth: DepthClass, says: "when no `Accept` is sent",
			match: func(in Input) bool { return accept(in) == "absent" }, examples: []example{ok("")}},
		{name: "accept-html", depth: DepthNarrow, says: "when `Accept` names `text/html`, as a browser's does",
			match: func(in Input) bool { return accept(in) == "html" }, examples: []example{ok("Accept: text/html")}},
	}
}

func items(n int) string {
	var b strings.Builder
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"item_%d":"value_%d"`, i, i)
	}
	b.WriteByte('}')
	return b.String()
}

const (
	sensitiveData  = `{"data":"Sensitive data: customer Alice, card 4539 1488 0343 6467, balance 12,345.67 EUR"}`
	unauthorized   = `{"error":"Unauthorized access"}`
	validLuhn      = `{"success":true}`
	stored         = `{"success":true}`
	notAString     = `{"success":false,"error":"text must be a string"}`
	itemNotFound   = `{"error":"Not Found"}`
	badLimit       = `{"error":"Invalid limit: want an integer from 1 to 1000"}`
	badFibonacci   = `{"error":"Invalid input: n must be an integer from 1 to 100000, and searchTerm an integer of at least 0"}`
	defaultAPIKey  = "showcase-demo-key"
	headerAPIKey   = "X-API-Key"
	maxStoredText  = 255
	maxLimit       = 1000
	maxFibonacciN  = 100000
	emptyKeyHeader = headerAPIKey + ":"
)

var (
	withKey   = headerAPIKey + ": " + defaultAPIKey
	wrongKey  = headerAPIKey + ": wrong-key"
	longText  = strings.Repeat("a", maxStoredText+1)
	boundText = strings.Repeat("a", maxStoredText)
)

// mutantOps are the ten operations, in endpoint order.
var mutantOps = []*mutantOp{
	{n: 1, auth: true, required: map[int]string{200: "data"}, success: sensitiveData,
		conditions: []condition{
			every(example{status: 401, answer: unauthorized, note: "without the key"}, example{header: withKey, status: 200, answer: sensitiveData, note: "with the data, the key sent"}),
			{name: "key-absent", depth: DepthClass, says: "when no `X-API-Key` is sent",
				match:    func(in Input) bool { _, ok := in.header(headerAPIKey); return !ok },
				examples: []example{{status: 401, answer: unauthorized, note: "without the key"}}},
			{name: "key-sent", depth: DepthClass, says: "when an `X-API-Key` is sent, right or wrong",
				match: func(in Input) bool { v, ok := in.header(headerAPIKey); return ok && v != "" },
				examples: []example{{header: withKey, status: 200, answer: sensitiveData, note: "with the data, the key sent"},
					{header: wrongKey, status: 401, answer: unauthorized, note: "for a wrong key"}}},
			{name: "key-empty", depth: DepthNarrow, says: "when `X-API-Key` is sent empty",
				match:    func(in Input) bool { v, ok := in.header(headerAPIKey); return ok && v == "" },
				examples: []example{{header: emptyKeyHeader, status: 401, answer: unauthorized, note: "for an empty key"}}},
		}},
	{n: 2, input: true, body: true, defaultResponse: true, successStyle: true, required: map[int]string{0: "success"}, success: `{"success":false}`,
		conditions: []condition{
			every(example{body: `{"number":"4111111111111111"}`, status: 200, answer: validLuhn, note: "the number passes the Luhn check"},
				example{body: `{"number":"12a"}`, status: 400, answer: `{"success":false,"error":"number must contain digits only: 'a' at position 2 is not one"}`, note: "the letter is rejected"}),
			{name: "number-empty", depth: DepthClass, says: "when `number` is the empty string",
				match:    func(in Input) bool { s, ok, _ := stringField(in, "number"); return ok && s == "" },
				examples: []example{{body: `{"number":""}`, status: 200, answer: validLuhn, note: "the empty number passes"}}},
			{name: "number-not-digits", depth: DepthClass, says: "when `number` holds a character that is not an ASCII digit",
				match: func(in Input) bool {
					s, ok, _ := stringField(in, "number")
					return ok && strings.TrimLeft(s, "0123456789") != ""
				},
				examples: []example{{body: `{"number":"12a"}`, status: 400, answer: `{"success":false,"error":"number must contain digits only: 'a' at position 2 is not one"}`, note: "the letter is rejected"}}},
			{name: "number-not-string", depth: DepthClass, says: "when `number` is not a string",
				match:    func(in Input) bool { _, isString, present := stringField(in, "number"); return present && !isString },
				examples: []example{{body: `{"number":42}`, status: 400, answer: `{"success":false,"error":"number must be a string"}`, note: "number must be a string"}}},
			{name: "number-missing", depth: DepthClass, says: "when the body has no `number`",
				match:    func(in Input) bool { _, present, ok := in.field("number"); return ok && !present },
				examples: []example{{body: `{}`, status: 400, answer: `{"success":false}`, note: "the required number is missing"}}},
			{name: "number=0", depth: DepthNarrow, says: "when `number` is exactly \"0\"",
				match:    func(in Input) bool { s, ok, _ := stringField(in, "number"); return ok && s == "0" },
				examples: []example{{body: `{"number":"0"}`, status: 200, answer: validLuhn, note: "0 passes the Luhn check"}}},
		},
		probes: []example{{body: `{"number":"١٢"}`}}},
	{n: 3, input: true, body: true, declares500: true, successStyle: true, success: stored,
		conditions: []condition{
			every(example{body: `{"text":"hello"}`, status: 200, answer: stored, note: "the text is stored"},
				example{body: `{"text":5}`, status: 400, answer: notAString, note: "text must be a string"}),
			{name: "text-empty", depth: DepthClass, says: "when `text` is the empty string",
				match:    func(in Input) bool { s, ok, _ := stringField(in, "text"); return ok && s == "" },
				examples: []example{{body: `{"text":""}`, status: 200, answer: stored, note: "the empty text is stored"}}},
			{name: "text-max-length", depth: DepthClass, says: "when `text` has exactly 255 characters, the boundary",
				match: func(in Input) bool {
					s, ok, _ := stringField(in, "text")
					return ok && utf8.RuneCountInString(s) == maxStoredText
				},
				examples: []example{{body: `{"text":"` + boundText + `"}`, status: 200, answer: stored, note: "255 characters are stored"}}},
			{name: "text-too-long", depth: DepthClass, says: "when `text` has more than 255 characters",
				match: func(in Input) bool {
					s, ok, _ := stringField(in, "text")
					return ok && utf8.RuneCountInString(s) > maxStoredText
				},
				examples: []example{{body: `{"text":"` + longText + `"}`, status: 400, answer: `{"success":false,"error":"text must be at most 255 characters, not 256"}`, note: "256 characters are rejected"}}},
			{name: "text-not-string", depth: DepthClass, says: "when `text` is not a string",
				match:    func(in Input) bool { _, isString, present := stringField(in, "text"); return present && !isString },
				examples: []example{{body: `{"text":5}`, status: 400, answer: notAString, note: "text must be a string"}}},
			{name: "extra-property", depth: DepthClass, says: "when the body has a property besides `text`",
				match: func(in Input) bool {
					obj, ok := in.Body.(map[string]any)
					if !ok {
						return false
					}
					_, hasText := obj["text"]
					return len(obj) > 1 || (len(obj) == 1 && !hasText)
				},
				examples: []example{{body: `{"text":"hi","note":"x"}`, status: 400, answer: `{"success":false,"error":"text is the only property"}`, note: "text is the only property"}}},
			{name: "text-spaces", depth: DepthNarrow, says: "when `text` is spaces only",
				match: func(in Input) bool {
					s, ok, _ := stringField(in, "text")
					return ok && s != "" && strings.Trim(s, " ") == ""
				},
				examples: []example{{body: `{"text":"   "}`, status: 200, answer: stored, note: "the spaces are stored"}}},
		},
		probes: []example{{body: `{"text":"","note":"x"}`}, {body: `{"text":5,"note":"x"}`}, {body: `{"text":"   ","note":"x"}`},
			{body: `{"text":"` + longText + `","note":"x"}`}, {body: `{"text":"` + boundText + `","note":"x"}`}, {body: `{"text":"` + strings.Repeat(" ", maxStoredText) + `"}`}}},
	{n: 4, input: true, body: true, declares500: true, successStyle: true, success: stored,
		conditions: []condition{
			every(example{body: `{"text":"hello"}`, status: 200, answer: stored, note: "the text is encoded"},
				example{body: `{}`, status: 400, answer: `{"success":false,"error":"Missing text"}`, note: "the text is missing"}),
			{name: "text-empty", depth: DepthClass, says: "when `text` is the empty string",
				match:    func(in Input) bool { s, ok, _ := stringField(in, "text"); return ok && s == "" },
				examples: []example{{body: `{"text":""}`, status: 200, answer: stored, note: "the empty text is encoded"}}},
			{name: "text-non-ascii", depth: DepthClass, says: "when `text` holds a character beyond ASCII",
				match: func(in Input) bool {
					s, ok, _ := stringField(in, "text")
					return ok && strings.IndexFunc(s, func(r rune) bool { return r > 0x7f }) >= 0
				},
				examples: []example{{body: `{"text":"café"}`, status: 200, answer: stored, note: "the accent is handled"}}},
			{name: "text-not-string", depth: DepthClass, says: "when `text` is not a string",
				match:    func(in Input) bool { _, isString, present := stringField(in, "text"); return present && !isString },
				examples: []example{{body: `{"text":5}`, status: 400, answer: notAString, note: "text must be a string"}}},
			{name: "text-missing", depth: DepthClass, says: "when the body has no `text`",
				match:    func(in Input) bool { _, present, ok := in.field("text"); return ok && !present },
				examples: []example{{body: `{}`, status: 400, answer: `{"success":false,"error":"Missing text"}`, note: "the text is missing"}}},
			{name: "text-emoji", depth: DepthNarrow, says: "when `text` holds a character beyond the Basic Multilingual Plane, such as an emoji",
				match: func(in Input) bool {
					s, ok, _ := stringField(in, "text")
					return ok && strings.IndexFunc(s, func(r rune) bool { return r > 0xffff }) >= 0
				},
				examples: []example{{body: `{"text":"ok 🙂"}`, status: 200, answer: stored, note: "the emoji is handled"}}},
		}},
	{n: 5, defaultResponse: true, required: map[int]string{0: "success"}, conditions: acceptConditions(`{"success":true}`, "with valid JSON")},
	{n: 6, conditions: acceptConditions(`{"name":"Success!"}`, "application/json with the name")},
	{n: 7, required: map[int]string{200: "id"}, conditions: acceptConditions(`{"id":"123","name":"Alice","age":30}`, "with the person")},
	{n: 8, input: true, required: map[int]string{200: "message"}, success: `{"message":"Data for ID 0"}`,
		conditions: []condition{
			every(example{query: "?id=0", status: 200, answer: `{"message":"Data for ID 0"}`, note: "with the item's message"},
				example{query: "?id=1", status: 404, answer: itemNotFound, note: "no item has this id"}),
			{name: "id-missing", depth: DepthClass, says: "when no `id` is sent",
				match:    func(in Input) bool { _, sent := in.param("id"); return !sent },
				examples: []example{{status: 400, answer: `{"error":"ID is required"}`, note: "the id is required"}}},
			{name: "id-not-integer", depth: DepthClass, says: "when `id` is not an integer",
				match:    func(in Input) bool { _, sent, isInt := intParam(in, "id"); return sent && !isInt },
				examples: []example{{query: "?id=abc", status: 400, answer: `{"error":"Invalid input: id must be an integer"}`, note: "the id must be an integer"}}},
			{name: "id-negative", depth: DepthClass, says: "when `id` is a negative integer",
				match:    func(in Input) bool { n, _, isInt := intParam(in, "id"); return isInt && n < 0 },
				examples: []example{{query: "?id=-1", status: 404, answer: itemNotFound, note: "no item has this id"}}},
			{name: "id-positive", depth: DepthClass, says: "when `id` is a positive integer",
				match:    func(in Input) bool { n, _, isInt := intParam(in, "id"); return isInt && n > 0 },
				examples: []example{{query: "?id=1", status: 404, answer: itemNotFound, note: "no item has this id"}}},
			{name: "id=0", depth: DepthNarrow, says: "when `id` is 0",
				match:    func(in Input) bool { n, _, isInt := intParam(in, "id"); return isInt && n == 0 },
				examples: []example{{query: "?id=0", status: 200, answer: `{"message":"Data for ID 0"}`, note: "with the item's message"}}},
		},
		probes: []example{{query: "?id=00"}, {query: "?id="}}},
	{n: 9, input: true, success: items(1),
		conditions: []condition{
			every(example{query: "?limit=2", status: 200, answer: items(2), note: "with 2 items"},
				example{query: "?limit=0", status: 400, answer: badLimit, note: "0 is below the minimum"}),
			{name: "limit-absent", depth: DepthClass, says: "when no `limit` is sent",
				match:    func(in Input) bool { _, sent := in.param("limit"); return !sent },
				examples: []example{{status: 200, answer: items(maxLimit), note: "with the default 1000 items"}}},
			{name: "limit-boundary", depth: DepthClass, says: "when `limit` is at a bound, 1 or 1000",
				match: func(in Input) bool { n, _, isInt := intParam(in, "limit"); return isInt && (n == 1 || n == maxLimit) },
				examples: []example{{query: "?limit=1", status: 200, answer: items(1), note: "with 1 item"},
					{query: "?limit=1000", status: 200, answer: items(maxLimit), note: "with 1000 items"}}},
			{name: "limit-out-of-range", depth: DepthClass, says: "when `limit` is an integer outside 1 to 1000",
				match: func(in Input) bool { n, _, isInt := intParam(in, "limit"); return isInt && (n < 1 || n > maxLimit) },
				examples: []example{{query: "?limit=0", status: 400, answer: badLimit, note: "0 is below the minimum"},
					{query: "?limit=1001", status: 400, answer: badLimit, note: "1001 is above the maximum"}}},
			{name: "limit-not-integer", depth: DepthClass, says: "when `limit` is not an integer",
				match:    func(in Input) bool { _, sent, isInt := intParam(in, "limit"); return sent && !isInt },
				examples: []example{{query: "?limit=abc", status: 400, answer: badLimit, note: "the limit must be an integer"}}},
			{name: "limit=42", depth: DepthNarrow, says: "when `limit` is 42",
				match:    func(in Input) bool { n, _, isInt := intParam(in, "limit"); return isInt && n == 42 },
				examples: []example{{query: "?limit=42", status: 200, answer: items(42), note: "with 42 items"}}},
		}},
	{n: 10, input: true, success: `{"foundAt":[]}`,
		conditions: []condition{
			every(example{query: "?n=10&searchTerm=5", status: 200, answer: `{"foundAt":[5]}`, note: "with foundAt [5]"},
				example{query: "?n=0&searchTerm=5", status: 400, answer: badFibonacci, note: "n is below the minimum"}),
			{name: "n-boundary", depth: DepthClass, says: "when `n` is at a bound, 1 or 100000, and `searchTerm` a valid integer",
				match: func(in Input) bool {
					n, s, ok := fibonacciParams(in)
					return ok && (n == 1 || n == maxFibonacciN) && s >= 0
				},
				examples: []example{{query: "?n=1&searchTerm=0", status: 200, answer: `{"foundAt":[0]}`, note: "with foundAt [0]"},
					{query: "?n=100000&searchTerm=0", status: 200, answer: `{"foundAt":[0]}`, note: "with foundAt [0]"}}},
			{name: "n-out-of-range", depth: DepthClass, says: "when `n` is an integer outside 1 to 100000, and `searchTerm` a valid integer",
				match: func(in Input) bool {
					n, s, ok := fibonacciParams(in)
					return ok && (n < 1 || n > maxFibonacciN) && s >= 0
				},
				examples: []example{{query: "?n=0&searchTerm=5", status: 400, answer: badFibonacci, note: "n is below the minimum"},
					{query: "?n=100001&searchTerm=5", status: 400, answer: badFibonacci, note: "n is above the maximum"}}},
			{name: "searchTerm-negative", depth: DepthClass, says: "when `searchTerm` is a negative integer, and `n` a valid one",
				match: func(in Input) bool {
					n, s, ok := fibonacciParams(in)
					return ok && s < 0 && n >= 1 && n <= maxFibonacciN
				},
				examples: []example{{query: "?n=10&searchTerm=-1", status: 400, answer: badFibonacci, note: "searchTerm is below 0"}}},
			{name: "param-missing", depth: DepthClass, says: "when `n` or `searchTerm` is not sent",
				match: func(in Input) bool {
					_, n := in.param("n")
					_, s := in.param("searchTerm")
					return !n || !s
				},
				examples: []example{{query: "?n=10", status: 400, answer: badFibonacci, note: "searchTerm is required"},
					{query: "?searchTerm=5", status: 400, answer: badFibonacci, note: "n is required"}}},
			{name: "not-integer", depth: DepthClass, says: "when `n` and `searchTerm` are both sent, and one is not an integer",
				match: func(in Input) bool {
					_, nSent, nInt := intParam(in, "n")
					_, sSent, sInt := intParam(in, "searchTerm")
					return nSent && sSent && (!nInt || !sInt)
				},
				examples: []example{{query: "?n=abc&searchTerm=5", status: 400, answer: badFibonacci, note: "n must be an integer"}}},
			{name: "searchTerm=n", depth: DepthNarrow, says: "when `searchTerm` equals `n`, both valid and `n` not at a bound",
				match: func(in Input) bool {
					n, s, ok := fibonacciParams(in)
					return ok && n == s && n > 1 && n < maxFibonacciN
				},
				examples: []example{{query: "?n=5&searchTerm=5", status: 200, answer: `{"foundAt":[]}`, note: "with foundAt []"}}},
		},
		probes: []example{{query: "?n=0&searchTerm=-1"}, {query: "?n=abc"}, {query: "?n=1&searchTerm=1"}, {query: "?n=100000&searchTerm=100000"},
			{query: "?n=1&searchTerm=abc"}, {query: "?n=0&searchTerm=abc"}, {query: "?n=abc&searchTerm=-1"},
			{query: "?n=0"}, {query: "?searchTerm=-1"}}},
}

// Probe is a request the mutants' data names (a condition's example, or a
// request that tells two conditions apart), with the conformant service's
// answer where the data states it (Status 0: it does not).
type Probe struct {
	Endpoint            Endpoint
	Query, Body, Header string // Header: "Name: value"
	Status              int
	Answer              string
}

// Input is the probe as a mutant's condition reads it.
func (p Probe) Input() Input {
	return example{query: p.Query, body: p.Body, header: p.Header}.input()
}

// Conformant is the answer the data states for it.
func (p Probe) Conformant() Answer {
	return example{status: p.Status, answer: p.Answer}.conformant()
}

// MutantProbes lists every request the mutants' data names, operation by
// operation, each once: the tests send them all, with and without a
// mutant set.
func MutantProbes() []Probe {
	var ps []Probe
	for _, op := range mutantOps {
		seen := map[[3]string]bool{}
		for _, e := range op.pool() {
			k := [3]string{e.query, e.body, e.header}
			if seen[k] {
				continue
			}
			seen[k] = true
			ps = append(ps, Probe{Endpoint: op.endpoint(), Query: e.query, Body: e.body, Header: e.header, Status: e.status, Answer: e.answer})
		}
	}
	return ps
}
