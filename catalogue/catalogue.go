// Package catalogue states, once, what the showcase is made of: its four
// categories, its ten endpoints and its ten planted defects, with how to
// trigger each defect, what it looks like, which classes of check detect it
// and what the contract needs when it is switched off. The gateway's prefix
// table and in-process assembly, the front page, the admin /defects answer,
// the behaviour suite and the README's tables all read it from here.
//
// A service's route table names its own paths and defects again, beside the
// handlers, and each service's tests check that table against this one.
package catalogue

import (
	"fmt"
	"slices"
)

// Category is one of the four groups of endpoints, each served by its own
// service.
type Category struct {
	Name     string // security, errors, conformance, performance: DEFECTS, logs and metrics use it
	Title    string // as people read it
	Prefix   string // the path prefix of its endpoints; DEFECTS accepts it without the slash
	Upstream string // the gateway's variable naming the service's URL
}

// Endpoint is one operation of the contract.
type Endpoint struct {
	N        int // 1 to 10, as the specification numbers them
	Method   string
	Path     string
	Category string // a Category's Name
	Defect   ID     // the defect planted in it
}

// ID names a planted defect, as its DEFECT(<id>) marker in the code does.
type ID string

// The ten planted defects.
const (
	SEC01  ID = "SEC-01"
	ERR01  ID = "ERR-01"
	ERR02  ID = "ERR-02"
	ERR03  ID = "ERR-03"
	CONF01 ID = "CONF-01"
	CONF02 ID = "CONF-02"
	CONF03 ID = "CONF-03"
	CONF04 ID = "CONF-04"
	PERF01 ID = "PERF-01"
	PERF02 ID = "PERF-02"
)

// Class is a class of check an API-testing tool runs: a planted defect is
// detected by the checks of its classes.
type Class string

// The classes of check.
const (
	// UndocumentedStatus: the status code is not among the declared responses.
	UndocumentedStatus Class = "undocumented-status"
	// WrongContentType: the Content-Type is not the declared one.
	WrongContentType Class = "wrong-content-type"
	// InvalidBody: the body does not parse or does not match the schema.
	InvalidBody Class = "invalid-body"
	// ServerError: the status is 5xx.
	ServerError Class = "server-error"
	// AcceptedInvalid: a request the contract forbids was answered 2xx
	// (negative data rejection).
	AcceptedInvalid Class = "accepted-invalid-request"
	// RejectedValid: a request the contract allows was answered as invalid
	// input (positive data acceptance).
	RejectedValid Class = "rejected-valid-request"
	// AuthBypass: an operation that requires a credential answered 2xx
	// without one.
	AuthBypass Class = "auth-bypass"
	// SlowResponse: an answer took longer than a response-time limit (one
	// second is the usual one).
	SlowResponse Class = "slow-response"
)

// Defect is one planted defect.
type Defect struct {
	ID       ID
	Endpoint int    // the N of its endpoint
	Title    string // a few words
	Symptom  string // what goes wrong, in a sentence or two
	// Triggers are concrete requests that show it, the first the simplest.
	Triggers []Trigger
	// Classes are the classes of check that detect it: a tool whose check
	// of one of them fails on the defect's endpoint has found it.
	Classes []Class
	// Faces are further findings that are the same defect seen from
	// another side (a request without the required key accepted is SEC-01,
	// not a second defect): credited to it, never counted as unplanted.
	Faces []Class
	CWE   int // the Common Weakness Enumeration entry that fits; 0 when none does
	// WFC are the Web Fuzzing Commons fault codes (codes.go) a tool that
	// writes WFC reports it under, detection first; none when WFC has no
	// class for it (a slow answer).
	WFC []int
	// OWASP is its category in the OWASP API Security Top 10 (2023), ""
	// when it is no security risk of the list.
	OWASP string
	// CodesNote says why, where the codes are a judgement.
	CodesNote string
	// TriggeredWhen says which requests the service counts as having
	// triggered it (its exposure): where its planted code calls
	// observe.Triggered.
	TriggeredWhen string
	// Off is what the endpoint does with the defect switched off.
	Off string
	// Correction says what the served contract gains when the defect is
	// switched off ("" when it needs nothing); the changes themselves are
	// in corrections.yaml.
	Correction string
	// Operator, Condition and Depth are a contract mutant's (mutants.go);
	// empty for the ten.
	Operator, Condition string
	Depth               int
}

// IsMutant reports whether the defect is a contract mutant.
func (d Defect) IsMutant() bool { return d.Operator != "" }

// Trigger is a request to a defect's endpoint and what it gets, with the
// defect active and switched off.
type Trigger struct {
	Query     string // appended to the path: "" or "?name=value..."
	Body      string // for a POST: JSON, sent as application/json
	Header    string // a header to send, "Name: value"; "" for none
	Status    int
	Shows     string // what to look at in the answer
	OffStatus int
	OffShows  string
}

// Categories lists the four categories, in the specification's order.
var Categories = []Category{
	{Name: "security", Title: "Security", Prefix: "/security", Upstream: "UPSTREAM_SECURITY"},
	{Name: "errors", Title: "Internal server errors", Prefix: "/internal-server-errors", Upstream: "UPSTREAM_ERRORS"},
	{Name: "conformance", Title: "Response conformance", Prefix: "/response-conformance", Upstream: "UPSTREAM_CONFORMANCE"},
	{Name: "performance", Title: "Performance", Prefix: "/performance", Upstream: "UPSTREAM_PERFORMANCE"},
}

// Endpoints lists the ten endpoints, in the specification's order.
var Endpoints = []Endpoint{
	{1, "GET", "/security/unauthenticated-access", "security", SEC01},
	{2, "POST", "/internal-server-errors/improper-input-type-handling", "errors", ERR01},
	{3, "POST", "/internal-server-errors/exceeding-column-size", "errors", ERR02},
	{4, "POST", "/internal-server-errors/improper-unicode-encoding", "errors", ERR03},
	{5, "GET", "/response-conformance/malformed-json", "conformance", CONF01},
	{6, "GET", "/response-conformance/incorrect-content-type", "conformance", CONF02},
	{7, "GET", "/response-conformance/missing-field", "conformance", CONF03},
	{8, "GET", "/response-conformance/undocumented-status-code", "conformance", CONF04},
	{9, "GET", "/performance/unbounded-result-set", "performance", PERF01},
	{10, "GET", "/performance/inefficient-algorithm", "performance", PERF02},
}

// Defects lists the ten defects, in endpoint order.
var Defects = []Defect{
	{ID: SEC01, Endpoint: 1, Title: "Unauthenticated access",
		Symptom:  "The contract requires an `X-API-Key` and promises 401 without one; no credential is checked, and anybody gets the sensitive data.",
		Triggers: []Trigger{{Status: 200, Shows: "200 with the data, and no key was sent", OffStatus: 401, OffShows: "401: without the key there is no data"}},
		Classes:  []Class{AuthBypass}, Faces: []Class{AcceptedInvalid}, CWE: 306,
		WFC: []int{WFCNoAuthAccess}, OWASP: "API2:2023",
		CodesNote:     "F207 is WFC's class for it, though the published report schema's code ranges leave 207 out (docs/scoring.md); the missing check of a credential is Broken Authentication",
		TriggeredWhen: "a request without the right `X-API-Key` gets the data",
		Off:           "demands `X-API-Key: $API_KEY` (default `showcase-demo-key`) and answers `401 {\"error\":\"Unauthorized access\"}` without it",
		Correction:    "the global requirement naming the undefined `api_key` scheme is removed"},
	{ID: ERR01, Endpoint: 2, Title: "Improper input type handling",
		Symptom: "Each character of `number` is converted to a digit unchecked: a card number with a character that is not a digit crashes the request with a 500.",
		Triggers: []Trigger{
			{Body: `{"number":"4111-1111"}`, Status: 500, Shows: "500: the dash crashed the Luhn check", OffStatus: 400, OffShows: "400: the dash is rejected as invalid input"},
			{Body: `{"number":true}`, Status: 500, Shows: "500: a boolean is read as the text True", OffStatus: 400, OffShows: "400: number must be a string"},
		},
		Classes: []Class{ServerError}, Faces: []Class{AcceptedInvalid}, CWE: 20,
		WFC:           []int{WFCServerError},
		CodesNote:     "no OWASP category: the 500 says nothing of the inside, so the crash is a robustness fault, not a Top 10 risk",
		TriggeredWhen: "a `number` whose text has a character that is not a digit crashes the request",
		Off:           "accepts exactly the ASCII digit strings the pattern allows (the empty one included); rejects a `number` that is not a string, or holds any other character (digits of other scripts too), with `400 {\"success\":false,\"error\":…}`; accepts only `application/json` (`415`)",
		Correction:    "`pattern: ^[0-9]*$` on `number`: the description's \"digits only\" as a rule"},
	{ID: ERR02, Endpoint: 3, Title: "Exceeding column size",
		Symptom:  "The contract accepts text up to 255 characters; the SQLite column holds 15 (`VARCHAR(16)` with `CHECK (length(text) < 16)`), so a 16-character text ends in a 500 that carries the database's error.",
		Triggers: []Trigger{{Body: `{"text":"sixteen chars!!!"}`, Status: 500, Shows: "500 with the database's error text", OffStatus: 200, OffShows: "200: 16 characters are stored, as 255 are promised"}},
		Classes:  []Class{ServerError}, Faces: []Class{AcceptedInvalid}, CWE: 209,
		WFC: []int{WFCServerError, WFCLeakedStackTrace}, OWASP: "API8:2023",
		CodesNote:     "also F209 and Security Misconfiguration: the 500 carries the database's own error text, the internal detail both name (it is no stack trace, but F209 is WFC's class for it, as CWE-209 is)",
		TriggeredWhen: "the insert fails and the database's error is answered with a 500",
		Off:           "stores text up to 255 characters; rejects longer text, a non-string `text` and any other property with `400`; only `application/json`",
		Correction:    "`maxLength: 255` on `text`"},
	{ID: ERR03, Endpoint: 4, Title: "Improper Unicode encoding",
		Symptom:  "Text is encoded to ASCII and the failure is not handled: one accented letter (or a `text` that is not a string) ends in a 500.",
		Triggers: []Trigger{{Body: `{"text":"café"}`, Status: 500, Shows: "500 naming the character that failed", OffStatus: 200, OffShows: "200: the accent is handled"}},
		Classes:  []Class{ServerError}, CWE: 176,
		WFC:           []int{WFCServerError},
		CodesNote:     "no OWASP category: the 500 names only the character, nothing of the inside",
		TriggeredWhen: "a `text` that is not ASCII, or not a string, is answered with a 500",
		Off:           "accepts non-ASCII text (`200`); rejects a non-string `text` with `400`; only `application/json`"},
	{ID: CONF01, Endpoint: 5, Title: "Malformed JSON",
		Symptom:       "Labelled `application/json`, the body `{success: true}` has an unquoted property name that no JSON parser accepts.",
		Triggers:      []Trigger{{Status: 200, Shows: "200 with {success: true}, which is not JSON", OffStatus: 200, OffShows: "200 with valid JSON"}},
		Classes:       []Class{InvalidBody},
		WFC:           []int{WFCSchemaMismatch},
		CodesNote:     "no OWASP category: a body that breaks the contract is no security risk",
		TriggeredWhen: "every answer",
		Off:           "sends `{\"success\":true}`"},
	{ID: CONF02, Endpoint: 6, Title: "Incorrect content type",
		Symptom:       "Declared as a JSON object with a `name`, the answer is `text/plain` `Success!`.",
		Triggers:      []Trigger{{Status: 200, Shows: "200 text/plain: Success!", OffStatus: 200, OffShows: "200 application/json with the name"}},
		Classes:       []Class{WrongContentType},
		WFC:           []int{WFCSchemaMismatch},
		CodesNote:     "F101: WFC has no class of its own for a content type, so the context says which way the response fails its schema",
		TriggeredWhen: "every answer",
		Off:           "sends `application/json` `{\"name\":\"Success!\"}`",
		Correction:    "the description of a non-existent `item_id` parameter is removed"},
	{ID: CONF03, Endpoint: 7, Title: "Missing field",
		Symptom:       "The `Person` schema requires `id`, `name` and `age`; `age` never comes.",
		Triggers:      []Trigger{{Status: 200, Shows: "200 without the required age", OffStatus: 200, OffShows: "200 with the age"}},
		Classes:       []Class{InvalidBody},
		WFC:           []int{WFCSchemaMismatch},
		TriggeredWhen: "every answer",
		Off:           "sends the person with `\"age\":30`"},
	{ID: CONF04, Endpoint: 8, Title: "Undocumented status code",
		Symptom: "Only 200 and 400 are declared; any `id` but `0` gets a 404.",
		Triggers: []Trigger{
			{Query: "?id=1", Status: 404, Shows: "404, a status the contract does not declare", OffStatus: 404, OffShows: "404, now a declared status"},
			{Query: "?id=abc", Status: 404, Shows: "404 for an id that is not even an integer", OffStatus: 400, OffShows: "400: the id must be an integer"},
		},
		Classes:       []Class{UndocumentedStatus},
		WFC:           []int{WFCSchemaMismatch},
		CodesNote:     "F101: an undocumented status is a response not matching its schema, the operation's declared responses",
		TriggeredWhen: "an `id` that names no item is answered with the 404",
		Off:           "reads `id` as an integer (`00` is 0); an id that is not an integer is `400`, one that names no item `404 {\"error\":\"Not Found\"}`",
		Correction:    "the `404` is declared (`ErrorBody`): the defect is that it was undocumented, not that it exists"},
	{ID: PERF01, Endpoint: 9, Title: "Unbounded result set",
		Symptom: "`limit` is clamped rather than validated, and each item costs a millisecond: a limit above the declared maximum of 1000 is accepted, and the default request takes a full second.",
		Triggers: []Trigger{
			{Query: "?limit=5000", Status: 200, Shows: "200 after a full second, limit 5000 accepted", OffStatus: 400, OffShows: "400: 5000 is above the maximum, and no delay"},
			{Status: 200, Shows: "200 with 1000 items after a full second", OffStatus: 200, OffShows: "200 with 1000 items at once"},
		},
		Classes: []Class{SlowResponse}, Faces: []Class{AcceptedInvalid}, CWE: 770,
		OWASP:         "API4:2023",
		CodesNote:     "no WFC code: WFC has no class for a slow answer; a held answer for an unbounded request is Unrestricted Resource Consumption",
		TriggeredWhen: "the answer is held 100 ms or more: `limit` from 100, and every limit clamped to 1000 (absent, not an integer, above 1000)",
		Off:           "answers at once; `limit` is optional (1000) and otherwise an integer from 1 to 1000, else `400`",
		Correction:    "`limit` is no longer `required` (it has a default)"},
	{ID: PERF02, Endpoint: 10, Title: "Inefficient algorithm",
		Symptom: "The whole Fibonacci sequence is built number by number in decimal arithmetic to search it; the time grows with the square of `n` along a fixed curve, 1.2 s at `n` = 100000 on any machine.",
		Triggers: []Trigger{
			{Query: "?n=30000&searchTerm=55", Status: 200, Shows: "200 with foundAt [10], after a wait that grows with n", OffStatus: 200, OffShows: "200 with foundAt [10], at once"},
			{Query: "?n=100000&searchTerm=1", Status: 200, Shows: "200 after 1.2 s with a core busy throughout", OffStatus: 200, OffShows: "200 at once"},
		},
		Classes: []Class{SlowResponse}, Faces: []Class{AcceptedInvalid}, CWE: 407,
		OWASP:         "API4:2023",
		CodesNote:     "no WFC code: WFC has no class for a slow answer; a core held a second by one request is Unrestricted Resource Consumption",
		TriggeredWhen: "the slow algorithm spends 100 ms or more: `n` from 28868",
		Off:           "finds the indices by the closed form (about 1 ms at any `n`); `n` outside 1..100000, a negative `searchTerm` or a non-integer is `400`; the sequence is exactly the first `n` numbers",
		Correction:    "the 400 no longer says \"n should be at most 30\""},
}

// CategoryNamed returns the category of that name; ok is false when there
// is none.
func CategoryNamed(name string) (c Category, ok bool) {
	i := slices.IndexFunc(Categories, func(c Category) bool { return c.Name == name })
	if i < 0 {
		return Category{}, false
	}
	return Categories[i], true
}

// EndpointsOf lists a category's endpoints, in order.
func EndpointsOf(category string) []Endpoint {
	var eps []Endpoint
	for _, e := range Endpoints {
		if e.Category == category {
			eps = append(eps, e)
		}
	}
	return eps
}

// EndpointOf returns the endpoint a defect (or a mutant) is planted in.
func EndpointOf(id ID) Endpoint {
	if IsMutantID(id) {
		m, err := MutantOf(id)
		if err != nil {
			panic("catalogue: " + err.Error())
		}
		return m.Endpoint()
	}
	for _, e := range Endpoints {
		if e.Defect == id {
			return e
		}
	}
	panic(fmt.Sprintf("catalogue: unknown defect %q", id))
}

// DefectOf returns the defect (or the mutant) with that ID.
func DefectOf(id ID) Defect {
	if IsMutantID(id) {
		m, err := MutantOf(id)
		if err != nil {
			panic("catalogue: " + err.Error())
		}
		return m.Defect()
	}
	for _, d := range Defects {
		if d.ID == id {
			return d
		}
	}
	panic(fmt.Sprintf("catalogue: unknown defect %q", id))
}

// Target is the trigger's request target on its defect's endpoint.
func (d Defect) Target(t Trigger) string { return Endpoints[d.Endpoint-1].Path + t.Query }
