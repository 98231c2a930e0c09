package suite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
)

// Paths of the ten endpoints, from the catalogue.
var (
	PathUnauthenticatedAccess = catalogue.EndpointOf(catalogue.SEC01).Path
	PathInputTypeHandling     = catalogue.EndpointOf(catalogue.ERR01).Path
	PathColumnSize            = catalogue.EndpointOf(catalogue.ERR02).Path
	PathUnicodeEncoding       = catalogue.EndpointOf(catalogue.ERR03).Path
	PathMalformedJSON         = catalogue.EndpointOf(catalogue.CONF01).Path
	PathIncorrectContentType  = catalogue.EndpointOf(catalogue.CONF02).Path
	PathMissingField          = catalogue.EndpointOf(catalogue.CONF03).Path
	PathUndocumentedStatus    = catalogue.EndpointOf(catalogue.CONF04).Path
	PathUnboundedResultSet    = catalogue.EndpointOf(catalogue.PERF01).Path
	PathInefficientAlgorithm  = catalogue.EndpointOf(catalogue.PERF02).Path
)

// endpoint1Name is endpoint 1's path after its category's prefix, for the
// routing cases that bend the path around it.
var endpoint1Name = strings.TrimPrefix(PathUnauthenticatedAccess, "/security/")

// MaxBodyBytes is the default request body limit the suite expects.
const MaxBodyBytes = 1 << 20

const (
	jsonType  = "application/json"
	htmlType  = "text/html; charset=utf-8"
	getAllow  = "GET, HEAD, OPTIONS"
	postAllow = "OPTIONS, POST"
)

var (
	notFound         = JSONEqual(`{"error":"Not Found"}`)
	methodNotAllowed = JSONEqual(`{"error":"Method Not Allowed"}`)
	successTrue      = JSONEqual(`{"success":true}`)
	successFalse     = JSONEqual(`{"success":false}`)
)

// Endpoints is the whole suite.
func Endpoints() []Endpoint {
	return []Endpoint{
		routing(),
		unauthenticatedAccess(),
		improperInputTypeHandling(),
		exceedingColumnSize(),
		improperUnicodeEncoding(),
		malformedJSON(),
		incorrectContentType(),
		missingField(),
		undocumentedStatusCode(),
		unboundedResultSet(),
		inefficientAlgorithm(),
	}
}

// methodCases are the rules every route shares: HEAD, OPTIONS and 405s.
func methodCases(path, method string) []Case {
	if method == http.MethodGet {
		return []Case{
			{Rule: "OPTIONS answers 200 with Allow and no body", Method: http.MethodOptions, Target: path, Status: 200, Type: NoContentType, Want: Empty(), WantHeader: map[string]string{"Allow": getAllow}},
			{Rule: "POST is 405 with Allow", Method: http.MethodPost, Target: path, ContentType: jsonType, Body: `{}`, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": getAllow}},
			{Rule: "DELETE is 405 with Allow", Method: http.MethodDelete, Target: path, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": getAllow}},
			{Rule: "a non-standard method is 405 with Allow", Method: "FROBNICATE", Target: path, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": getAllow}},
			{Rule: "a trailing slash is an unknown path", Target: path + "/", Status: 404, Want: notFound},
			{Rule: "another letter case is an unknown path", Target: strings.ToUpper(path), Status: 404, Want: notFound},
		}
	}
	return []Case{
		{Rule: "OPTIONS answers 200 with Allow and no body", Method: http.MethodOptions, Target: path, Status: 200, Type: NoContentType, Want: Empty(), WantHeader: map[string]string{"Allow": postAllow}},
		{Rule: "GET is 405 with Allow", Target: path, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": postAllow}},
		{Rule: "HEAD is 405 with Allow", Method: http.MethodHead, Target: path, Status: 405, Want: Empty(), WantHeader: map[string]string{"Allow": postAllow}},
		{Rule: "PUT is 405 with Allow", Method: http.MethodPut, Target: path, ContentType: jsonType, Body: `{}`, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": postAllow}},
		{Rule: "a non-standard method is 405 with Allow", Method: "FROBNICATE", Target: path, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": postAllow}},
		{Rule: "a trailing slash is an unknown path", Method: http.MethodPost, Target: path + "/", ContentType: jsonType, Body: `{}`, Status: 404, Want: notFound},
	}
}

func routing() Endpoint {
	return Endpoint{Name: "Routing", Cases: []Case{
		{Rule: "an unknown path is 404 JSON", Target: "/no-such-path", Status: 404, Want: notFound},
		{Rule: "the root is the front page", Target: "/", Status: 200, Type: htmlType, Want: contains("<h1>Defect showcase API</h1>")},
		{Rule: "the front page ignores a query", Target: "/?x=%ZZ", Status: 200, Type: htmlType, Want: contains("<h1>Defect showcase API</h1>")},
		{Rule: "HEAD on the front page has no body", Method: http.MethodHead, Target: "/", Status: 200, Type: htmlType, Want: Empty()},
		{Rule: "POST on the front page is 405 with Allow", Method: http.MethodPost, Target: "/", ContentType: jsonType, Body: `{}`, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": getAllow}},
		{Rule: "the docs are Swagger UI on the contract", Target: "/docs", Status: 200, Type: htmlType, Want: contains(`<div id="swagger-ui" data-url="openapi.yaml">`)},
		{Rule: "OPTIONS on the docs answers Allow", Method: http.MethodOptions, Target: "/docs", Status: 200, Type: NoContentType, Want: Empty(), WantHeader: map[string]string{"Allow": getAllow}},
		{Rule: "a trailing slash on the docs is an unknown path", Target: "/docs/", Status: 404, Want: notFound},
		{Rule: "an unknown asset is 404 JSON", Target: "/assets/nothing.js", Status: 404, Want: notFound},
		{Rule: "the triggers are served as a Postman collection", Target: GatewayCollections + "showcase-defects-on.postman_collection.json", Status: 200, Want: postmanV21()},
		{Rule: "the triggers are served as a .http file", Target: GatewayCollections + "showcase-defects-off.http", Status: 200, Type: "text/plain; charset=utf-8", Want: hasPrefix("# Defect showcase API")},
		{Rule: "an unknown collection is 404 JSON", Target: GatewayCollections + "nothing.json", Status: 404, Want: notFound},
		{Rule: "the assets folder alone is an unknown path", Target: "/assets/", Status: 404, Want: notFound},
		{Rule: "a category prefix alone is an unknown path", Target: "/performance", Status: 404, Want: notFound},
		{Rule: "an unknown path under a category is 404 JSON", Target: "/security/nothing-here", Status: 404, Want: notFound},
		{Rule: "a prefix that only starts like a category is unknown", Target: "/securityx/" + endpoint1Name, Status: 404, Want: notFound},
		{Rule: "a non-standard method on an unknown path is 404", Method: "FROBNICATE", Target: "/no-such-path", Status: 404, Want: notFound},
		{Rule: "POST to an unknown path is 404", Method: http.MethodPost, Target: "/no-such-path", ContentType: jsonType, Body: `{}`, Status: 404, Want: notFound},
		{Rule: "dot segments do not cross categories", Target: "/security/.." + PathUnboundedResultSet + "?limit=1", Status: 404, Want: notFound},
		{Rule: "a doubled slash is an unknown path", Target: "/security//" + endpoint1Name, Status: 404, Want: notFound},
		{Rule: "an encoded slash is an unknown path", Target: "/security%2F" + endpoint1Name, Status: 404, Want: notFound},
		{Rule: "metrics are not on the API port", Target: "/metrics", Status: 404, Want: notFound},
		{Rule: "liveness is not on the API port", Target: "/healthz", Status: 404, Want: notFound},
		{Rule: "readiness is not on the API port", Target: "/readyz", Status: 404, Want: notFound},
		{Rule: "the contract is served as YAML", Target: "/openapi.yaml", Status: 200, Type: "application/yaml", Want: hasPrefix("openapi: 3.0.2\n")},
		{Rule: "the contract is served as JSON", Target: "/openapi.json", Status: 200, Want: openAPIJSON()},
		{Rule: "HEAD on the contract has no body", Method: http.MethodHead, Target: "/openapi.yaml", Status: 200, Type: "application/yaml", Want: Empty()},
		{Rule: "POST on the contract is 405 with Allow", Method: http.MethodPost, Target: "/openapi.yaml", ContentType: jsonType, Body: `{}`, Status: 405, Want: methodNotAllowed, WantHeader: map[string]string{"Allow": getAllow}},
		{Rule: "OPTIONS on the contract answers Allow", Method: http.MethodOptions, Target: "/openapi.json", Status: 200, Type: NoContentType, Want: Empty(), WantHeader: map[string]string{"Allow": getAllow}},
	}}
}

// DemoAPIKey is the key endpoint 1 demands with its defect switched off, when
// API_KEY is not set (securitysvc.DefaultAPIKey).
const DemoAPIKey = "showcase-demo-key"

func unauthenticatedAccess() Endpoint {
	p := PathUnauthenticatedAccess
	unauthorized := JSONEqual(`{"error":"Unauthorized access"}`)
	return Endpoint{Name: "UnauthenticatedAccess", Defect: catalogue.SEC01, Cases: append([]Case{
		Case{Rule: "without a key the sensitive data is served", Target: p, Status: 200, Want: sensitiveData(), Findings: []Finding{AuthBypass}}.off(401, unauthorized),
		Case{Rule: "with an empty key the sensitive data is served", Target: p, Header: http.Header{"X-Api-Key": {""}}, Status: 200, Want: sensitiveData(), Findings: []Finding{AuthBypass}}.off(401, unauthorized),
		Case{Rule: "with any key the sensitive data is served", Target: p, Header: http.Header{"X-Api-Key": {"not-a-real-key"}}, Status: 200, Want: sensitiveData()}.off(401, unauthorized),
		{Rule: "with the demo key the sensitive data is served", Target: p, Header: http.Header{"X-Api-Key": {DemoAPIKey}}, Status: 200, Want: sensitiveData()},
		Case{Rule: "query parameters are ignored", Target: p + "?api_key=x&x=%ZZ", Status: 200, Want: sensitiveData(), Findings: []Finding{AuthBypass}}.off(401, unauthorized),
		Case{Rule: "HEAD answers like GET without a body", Method: http.MethodHead, Target: p, Status: 200, Want: Empty()}.off(401, Empty()),
	}, methodCases(p, http.MethodGet)...)}
}

func improperInputTypeHandling() Endpoint {
	p := PathInputTypeHandling
	post := func(rule, body string, status int, want Check, f ...Finding) Case {
		return Case{Rule: rule, Method: http.MethodPost, Target: p, ContentType: jsonType, Body: body, Status: status, Want: want, Findings: f}
	}
	// Switched off, anything but a string of digits is invalid input.
	crash := func(rule, body string, f ...Finding) Case {
		return post(rule, body, 500, FailureWithError(), append([]Finding{ServerError}, f...)...).off(400, FailureWithError())
	}
	return Endpoint{Name: "ImproperInputTypeHandling", Defect: catalogue.ERR01, Cases: append([]Case{
		post("a valid card number gives success true", `{"number":"79927398713"}`, 200, successTrue),
		post("an invalid checksum gives success false", `{"number":"79927398710"}`, 200, successFalse),
		post("the empty string has checksum 0", `{"number":""}`, 200, successTrue),
		post("a JSON integer is read as its digits", `{"number":79927398713}`, 200, successTrue, AcceptedInvalid).off(400, FailureWithError()),
		post("a JSON integer longer than 64 bits is read as its digits", `{"number":500000000000000000000000000009}`, 200, successTrue, AcceptedInvalid).off(400, FailureWithError()),
		post("minus zero is the integer 0", `{"number":-0}`, 200, successTrue, AcceptedInvalid).off(400, FailureWithError()),
		// Switched off, the corrected contract's pattern ^[0-9]*$ allows ASCII digits only.
		post("Arabic-Indic digits validate like ASCII digits", `{"number":"٧٩٩٢٧٣٩٨٧١٣"}`, 200, successTrue).off(400, FailureWithError()),
		post("fullwidth digits validate like ASCII digits", `{"number":"７９９２７３９８７１０"}`, 200, successFalse).off(400, FailureWithError()),
		post("extra properties are ignored", `{"number":"0","other":[1,2]}`, 200, successTrue),
		post("a duplicate key keeps the last value", `{"number":"x","number":"18"}`, 200, successTrue),
		// The contract declares only application/json; the behaviour notes accept any +json type.
		Case{Rule: "a +json media type is accepted", Method: http.MethodPost, Target: p, ContentType: "application/merge-patch+json", Body: `{"number":"0"}`, Status: 200, Want: successTrue, Findings: []Finding{AcceptedInvalid}}.off(415, successFalse),
		crash("a letter crashes the request", `{"number":"7992a398713"}`),
		crash("a space crashes the request", `{"number":"7992 7398713"}`),
		crash("a superscript digit is not a decimal digit", `{"number":"²"}`),
		crash("a negative integer crashes the request", `{"number":-5}`),
		crash("a fraction crashes the request", `{"number":1.5}`),
		crash("an exponent crashes the request", `{"number":1e5}`),
		crash("true crashes the request", `{"number":true}`),
		crash("null crashes the request", `{"number":null}`),
		crash("an array crashes the request", `{"number":["1"]}`),
		crash("an object crashes the request", `{"number":{"a":"1"}}`),
		post("a missing number is 400", `{}`, 400, successFalse),
		post("another property instead of number is 400", `{"Number":"0"}`, 400, successFalse),
		post("a JSON array body is 400", `["79927398713"]`, 400, successFalse),
		post("a JSON string body is 400", `"79927398713"`, 400, successFalse),
		post("a JSON number body is 400", `79927398713`, 400, successFalse),
		post("a JSON null body is 400", `null`, 400, successFalse),
		post("invalid JSON is 400", `{"number":`, 400, successFalse),
		post("trailing garbage is invalid JSON", `{"number":"0"} x`, 400, successFalse),
		post("NaN is invalid JSON", `{"number":NaN}`, 400, successFalse),
		{Rule: "an empty body is 400", Method: http.MethodPost, Target: p, ContentType: jsonType, Status: 400, Want: successFalse},
		{Rule: "a text/plain body is 415", Method: http.MethodPost, Target: p, ContentType: "text/plain", Body: `{"number":"0"}`, Status: 415, Want: successFalse},
		{Rule: "a body without Content-Type is 415", Method: http.MethodPost, Target: p, Body: `{"number":"0"}`, Status: 415, Want: successFalse},
		{Rule: "a Content-Type with charset is accepted", Method: http.MethodPost, Target: p, ContentType: "application/json; charset=utf-8", Body: `{"number":"0"}`, Status: 200, Want: successTrue},
		{Rule: "a body over the limit is 413", Method: http.MethodPost, Target: p, ContentType: jsonType, Body: bodyOfSize("number", MaxBodyBytes+1), Status: 413, Want: successFalse},
		{Rule: "a body at the limit is read", Method: http.MethodPost, Target: p, ContentType: jsonType, Body: bodyOfSize("number", MaxBodyBytes), Status: 200, Want: successFalse},
	}, methodCases(p, http.MethodPost)...)}
}

func exceedingColumnSize() Endpoint {
	p := PathColumnSize
	post := func(rule, body string, status int, want Check, f ...Finding) Case {
		return Case{Rule: rule, Method: http.MethodPost, Target: p, ContentType: jsonType, Body: body, Status: status, Want: want, Findings: f}
	}
	fails := func(rule, body string) Case {
		return post(rule, body, 500, FailureWithError(), ServerError)
	}
	invalid := FailureWithError()
	return Endpoint{Name: "ExceedingColumnSize", Defect: catalogue.ERR02, Cases: append([]Case{
		post("a short text is stored", `{"text":"hello"}`, 200, successTrue),
		post("the empty text is stored", `{"text":""}`, 200, successTrue),
		post("15 characters are stored", `{"text":"`+strings.Repeat("a", 15)+`"}`, 200, successTrue),
		post("15 emoji are 15 characters and are stored", `{"text":"`+strings.Repeat("😀", 15)+`"}`, 200, successTrue),
		fails("16 characters violate the column check", `{"text":"`+strings.Repeat("a", 16)+`"}`).off(200, successTrue),
		fails("16 emoji violate the column check", `{"text":"`+strings.Repeat("😀", 16)+`"}`).off(200, successTrue),
		fails("the declared 255 characters fail", `{"text":"`+strings.Repeat("a", 255)+`"}`).off(200, successTrue),
		fails("256 characters fail", `{"text":"`+strings.Repeat("é", 256)+`"}`).off(400, invalid),
		post("a number is stored as a number", `{"text":12345}`, 200, successTrue, AcceptedInvalid).off(400, invalid),
		fails("a 16-digit number violates the column check", `{"text":1234567890123456}`).off(400, invalid),
		post("true is stored as 1", `{"text":true}`, 200, successTrue, AcceptedInvalid).off(400, invalid),
		post("false is stored as 0", `{"text":false}`, 200, successTrue, AcceptedInvalid).off(400, invalid),
		post("null is stored as NULL", `{"text":null}`, 200, successTrue, AcceptedInvalid).off(400, invalid),
		fails("an array cannot be bound", `{"text":["a"]}`).off(400, invalid),
		fails("an object cannot be bound", `{"text":{"a":1}}`).off(400, invalid),
		post("extra properties are not rejected", `{"text":"a","extra":1}`, 200, successTrue, AcceptedInvalid).off(400, invalid),
		post("a missing text is 400 without error", `{}`, 400, successFalse),
		post("a JSON array body is 400", `["text"]`, 400, successFalse),
		post("a JSON string body is 400", `"text"`, 400, successFalse),
		post("invalid JSON is 400", `{"text":"a"`, 400, successFalse),
		{Rule: "an empty body is 400", Method: http.MethodPost, Target: p, ContentType: jsonType, Status: 400, Want: successFalse},
		{Rule: "a text/plain body is 415", Method: http.MethodPost, Target: p, ContentType: "text/plain", Body: `{"text":"a"}`, Status: 415, Want: successFalse},
		{Rule: "a body without Content-Type is 415", Method: http.MethodPost, Target: p, Body: `{"text":"a"}`, Status: 415, Want: successFalse},
		Case{Rule: "a +json media type is accepted", Method: http.MethodPost, Target: p, ContentType: "application/vnd.api+json", Body: `{"text":"a"}`, Status: 200, Want: successTrue, Findings: []Finding{AcceptedInvalid}}.off(415, successFalse),
		{Rule: "a body over the limit is 413", Method: http.MethodPost, Target: p, ContentType: jsonType, Body: bodyOfSize("text", MaxBodyBytes+1), Status: 413, Want: successFalse},
	}, methodCases(p, http.MethodPost)...)}
}

func improperUnicodeEncoding() Endpoint {
	p := PathUnicodeEncoding
	post := func(rule, body string, status int, want Check, f ...Finding) Case {
		return Case{Rule: rule, Method: http.MethodPost, Target: p, ContentType: jsonType, Body: body, Status: status, Want: want, Findings: f}
	}
	fails := func(rule, body string) Case {
		return post(rule, body, 500, FailureWithError(), ServerError)
	}
	return Endpoint{Name: "ImproperUnicodeEncoding", Defect: catalogue.ERR03, Cases: append([]Case{
		post("ASCII text encodes", `{"text":"hello"}`, 200, successTrue),
		post("the empty text encodes", `{"text":""}`, 200, successTrue),
		post("control characters are ASCII", `{"text":"\u0000\u0001\t\n\u007f"}`, 200, successTrue),
		post("long ASCII text encodes", `{"text":"`+strings.Repeat("abc", 20000)+`"}`, 200, successTrue),
		fails("an accented letter fails to encode", `{"text":"héllo"}`).off(200, successTrue),
		fails("an emoji fails to encode", `{"text":"hi 😀"}`).off(200, successTrue),
		fails("an escaped non-ASCII character fails to encode", `{"text":"\u00e9"}`).off(200, successTrue),
		fails("a number is not text", `{"text":5}`).off(400, FailureWithError()),
		fails("true is not text", `{"text":true}`).off(400, FailureWithError()),
		fails("null is not text", `{"text":null}`).off(400, FailureWithError()),
		fails("an array is not text", `{"text":["a"]}`).off(400, FailureWithError()),
		fails("an object is not text", `{"text":{}}`).off(400, FailureWithError()),
		post("a missing text is 400", `{}`, 400, JSONEqual(`{"success":false,"error":"Missing text"}`)),
		post("a JSON array body is 400", `["text"]`, 400, FailureWithError()),
		post("invalid JSON is 400", `{text: "a"}`, 400, FailureWithError()),
		{Rule: "an empty body is 400", Method: http.MethodPost, Target: p, ContentType: jsonType, Status: 400, Want: FailureWithError()},
		{Rule: "a text/plain body is 415", Method: http.MethodPost, Target: p, ContentType: "text/plain", Body: `{"text":"a"}`, Status: 415, Want: FailureWithError()},
		{Rule: "a body over the limit is 413", Method: http.MethodPost, Target: p, ContentType: jsonType, Body: bodyOfSize("text", MaxBodyBytes+1), Status: 413, Want: FailureWithError()},
	}, methodCases(p, http.MethodPost)...)}
}

func malformedJSON() Endpoint {
	p := PathMalformedJSON
	valid := JSONEqual(`{"success":true}`)
	return Endpoint{Name: "MalformedJSON", Defect: catalogue.CONF01, Cases: append([]Case{
		Case{Rule: "the body is JSON-like text with an unquoted name", Target: p, Status: 200, Want: Exactly(`{success: true}`), Findings: []Finding{InvalidBody}}.off(200, valid),
		Case{Rule: "query parameters change nothing", Target: p + "?format=json", Status: 200, Want: Exactly(`{success: true}`), Findings: []Finding{InvalidBody}}.off(200, valid),
		{Rule: "HEAD answers like GET without a body", Method: http.MethodHead, Target: p, Status: 200, Want: Empty(), WantHeader: map[string]string{"Content-Length": "15"},
			Off: &Expect{Status: 200, Want: Empty(), WantHeader: map[string]string{"Content-Length": "16"}}},
	}, methodCases(p, http.MethodGet)...)}
}

func incorrectContentType() Endpoint {
	p := PathIncorrectContentType
	name := &Expect{Status: 200, Want: JSONEqual(`{"name":"Success!"}`)}
	return Endpoint{Name: "IncorrectContentType", Defect: catalogue.CONF02, Cases: append([]Case{
		{Rule: "the answer is plain text", Target: p, Status: 200, Type: "text/plain", Want: Exactly("Success!"), Findings: []Finding{WrongContentType}, Off: name},
		{Rule: "item_id=error changes nothing", Target: p + "?item_id=error", Status: 200, Type: "text/plain", Want: Exactly("Success!"), Findings: []Finding{WrongContentType}, Off: name},
		{Rule: "any other item_id changes nothing", Target: p + "?item_id=42", Status: 200, Type: "text/plain", Want: Exactly("Success!"), Findings: []Finding{WrongContentType}, Off: name},
		{Rule: "an Accept of JSON changes nothing", Target: p, Header: http.Header{"Accept": {"application/json"}}, Status: 200, Type: "text/plain", Want: Exactly("Success!"), Findings: []Finding{WrongContentType}, Off: name},
	}, methodCases(p, http.MethodGet)...)}
}

func missingField() Endpoint {
	p := PathMissingField
	person := JSONEqual(`{"id":"123","name":"Alice","age":30}`)
	return Endpoint{Name: "MissingField", Defect: catalogue.CONF03, Cases: append([]Case{
		Case{Rule: "the person has no age", Target: p, Status: 200, Want: JSONEqual(`{"id":"123","name":"Alice"}`), Findings: []Finding{InvalidBody}}.off(200, person),
		Case{Rule: "query parameters change nothing", Target: p + "?fields=age", Status: 200, Want: JSONEqual(`{"id":"123","name":"Alice"}`), Findings: []Finding{InvalidBody}}.off(200, person),
		{Rule: "HEAD answers like GET without a body", Method: http.MethodHead, Target: p, Status: 200, Want: Empty()},
	}, methodCases(p, http.MethodGet)...)}
}

func undocumentedStatusCode() Endpoint {
	p := PathUndocumentedStatus
	found := JSONEqual(`{"message":"Data for ID 0"}`)
	// Switched off, id is the contract's integer, and one with no item is the
	// documented 404.
	notInteger := JSONEqual(`{"error":"Invalid input: id must be an integer"}`)
	get := func(rule, query string, status int, want Check, f ...Finding) Case {
		return Case{Rule: rule, Target: p + query, Status: status, Want: want, Findings: f}
	}
	missing := func(rule, query string) Case {
		return get(rule, query, 404, notFound, UndocumentedStatus)
	}
	return Endpoint{Name: "UndocumentedStatusCode", Defect: catalogue.CONF04, Cases: append([]Case{
		get("id=0 finds the stored item", "?id=0", 200, found),
		get("an encoded 0 is 0", "?id=%30", 200, found),
		get("the first of repeated ids wins", "?id=0&id=1", 200, found),
		missing("another integer is not found", "?id=1").off(404, notFound),
		missing("a negative integer is not found", "?id=-1").off(404, notFound),
		missing("00 is not the text 0", "?id=00").off(200, found),
		missing("-0 is not the text 0", "?id=-0").off(200, found),
		missing("the first of repeated ids wins when it is missing", "?id=1&id=0").off(404, notFound),
		missing("a word is looked up and not found", "?id=abc").off(400, notInteger),
		missing("an empty id is present and not found", "?id=").off(400, notInteger),
		missing("an id without = is present and not found", "?id").off(400, notInteger),
		missing("a semicolon is part of the value", "?id=0;x=1").off(400, notInteger),
		missing("a huge integer is not found", "?id=123456789012345678901234567890").off(404, notFound),
		get("an absent id is 400", "", 400, JSONEqual(`{"error":"ID is required"}`)),
		get("another parameter is not the id", "?ID=0", 400, JSONEqual(`{"error":"ID is required"}`)),
		{Rule: "HEAD answers like GET without a body", Method: http.MethodHead, Target: p + "?id=0", Status: 200, Want: Empty()},
	}, methodCases(p, http.MethodGet)...)}
}

func unboundedResultSet() Endpoint {
	p := PathUnboundedResultSet
	get := func(rule, query string, status int, want Check, f ...Finding) Case {
		return Case{Rule: rule, Target: p + query, Status: status, Want: want, Findings: f}
	}
	// Switched off, limit is validated as declared, 1 to 1000.
	invalid := JSONEqual(`{"error":"Invalid limit: want an integer from 1 to 1000"}`)
	full := func(rule, query string) Case {
		c := get(rule, query, 200, Items(1000), AcceptedInvalid).off(400, invalid)
		c.Slow = true
		return c
	}
	tooSmall := JSONEqual(`{"error":"Limit must be greater than 0"}`)
	digits := strings.Repeat("7", 30)
	return Endpoint{Name: "UnboundedResultSet", Defect: catalogue.PERF01, Cases: append([]Case{
		get("limit=3 gives exactly 3 items", "?limit=3", 200, Items(3)),
		get("limit=1 gives exactly 1 item", "?limit=1", 200, Items(1)),
		{Rule: "limit=1000 gives exactly 1000 items", Target: p + "?limit=1000", Status: 200, Want: Items(1000), Slow: true},
		full("an absent limit is 1000", "").off(200, Items(1000)), // optional in the corrected contract
		full("a limit above 1000 is lowered to 1000", "?limit=5000"),
		full("a 30-digit limit is an integer above 1000", "?limit="+digits),
		full("a 4300-digit limit is an integer above 1000", "?limit="+strings.Repeat("9", 4300)),
		full("a limit that is not an integer is 1000", "?limit=abc"),
		full("an empty limit is 1000", "?limit="),
		full("a double underscore is not an integer", "?limit=1__0"),
		full("a 4301-digit negative limit is not an integer", "?limit=-"+strings.Repeat("9", 4301)),
		get("limit=0 is 400", "?limit=0", 400, tooSmall).off(400, invalid),
		get("a negative limit is 400", "?limit=-1", 400, tooSmall).off(400, invalid),
		get("a 30-digit negative limit is 400", "?limit=-"+digits, 400, tooSmall).off(400, invalid),
		get("a 4300-digit negative limit is 400", "?limit=-"+strings.Repeat("9", 4300), 400, tooSmall).off(400, invalid),
		get("surrounding spaces are allowed", "?limit=%207%20", 200, Items(7), AcceptedInvalid).off(400, invalid),
		get("a plus sign is allowed", "?limit=%2B5", 200, Items(5)),
		get("an underscore between digits is allowed", "?limit=1_0", 200, Items(10), AcceptedInvalid).off(400, invalid),
		get("Arabic-Indic digits are digits", "?limit=%D9%A3", 200, Items(3), AcceptedInvalid).off(400, invalid),
		get("fullwidth digits are digits", "?limit=%EF%BC%94", 200, Items(4), AcceptedInvalid).off(400, invalid),
		get("the first of repeated limits wins", "?limit=2&limit=5", 200, Items(2)),
		{Rule: "HEAD answers like GET without a body", Method: http.MethodHead, Target: p + "?limit=2", Status: 200, Want: Empty()},
	}, methodCases(p, http.MethodGet)...)}
}

func inefficientAlgorithm() Endpoint {
	p := PathInefficientAlgorithm
	get := func(rule, query string, status int, want Check, f ...Finding) Case {
		return Case{Rule: rule, Target: p + query, Status: status, Want: want, Findings: f}
	}
	missingParams := JSONEqual(`{"error":"Missing required parameters"}`)
	nTooLarge := JSONEqual(`{"error":"n should be less than or equal to 100000"}`)
	// Switched off, both parameters are validated as declared, and the
	// sequence is the first n numbers.
	invalid := JSONEqual(`{"error":"Invalid input: n must be an integer from 1 to 100000, and searchTerm an integer of at least 0"}`)
	return Endpoint{Name: "InefficientAlgorithm", Defect: catalogue.PERF02, Cases: append([]Case{
		get("55 is not among the first 10 numbers", "?n=10&searchTerm=55", 200, JSONEqual(`{"foundAt":[]}`)),
		get("55 is the 11th number", "?n=11&searchTerm=55", 200, JSONEqual(`{"foundAt":[10]}`)),
		get("1 appears twice from n=3", "?n=3&searchTerm=1", 200, JSONEqual(`{"foundAt":[1,2]}`)),
		get("n=1 still holds both seeds", "?n=1&searchTerm=1", 200, JSONEqual(`{"foundAt":[1]}`)).off(200, JSONEqual(`{"foundAt":[]}`)),
		get("0 is the first number", "?n=50&searchTerm=0", 200, JSONEqual(`{"foundAt":[0]}`)),
		get("n=0 holds the two seeds", "?n=0&searchTerm=0", 200, JSONEqual(`{"foundAt":[0]}`), AcceptedInvalid).off(400, invalid),
		get("a negative n holds the two seeds", "?n=-5&searchTerm=1", 200, JSONEqual(`{"foundAt":[1]}`), AcceptedInvalid).off(400, invalid),
		get("a term beyond 64 bits is found", "?n=101&searchTerm=354224848179261915075", 200, JSONEqual(`{"foundAt":[100]}`)),
		get("a negative term finds nothing", "?n=20&searchTerm=-1", 200, JSONEqual(`{"foundAt":[]}`), AcceptedInvalid).off(400, invalid),
		get("a 4300-digit term finds nothing", "?n=100&searchTerm="+strings.Repeat("9", 4300), 200, JSONEqual(`{"foundAt":[]}`)),
		get("Unicode digits are digits", "?n=%EF%BC%91%EF%BC%91&searchTerm=%D9%A5%D9%A5", 200, JSONEqual(`{"foundAt":[10]}`), AcceptedInvalid).off(400, invalid),
		get("surrounding spaces are allowed", "?n=%2011%20&searchTerm=55", 200, JSONEqual(`{"foundAt":[10]}`), AcceptedInvalid).off(400, invalid),
		{Rule: "the largest n is served", Target: p + "?n=100000&searchTerm=2", Status: 200, Want: JSONEqual(`{"foundAt":[3]}`), Slow: true},
		get("n above 100000 is 400", "?n=100001&searchTerm=1", 400, nTooLarge).off(400, invalid),
		get("a 30-digit n is 400", "?n=123456789012345678901234567890&searchTerm=1", 400, nTooLarge).off(400, invalid),
		get("a missing n is 400", "?searchTerm=1", 400, missingParams).off(400, invalid),
		get("a missing searchTerm is 400", "?n=10", 400, missingParams).off(400, invalid),
		get("no parameters is 400", "", 400, missingParams).off(400, invalid),
		get("a word for n is 400", "?n=ten&searchTerm=1", 400, missingParams).off(400, invalid),
		get("a fraction for searchTerm is 400", "?n=10&searchTerm=1.5", 400, missingParams).off(400, invalid),
		get("an empty searchTerm is 400", "?n=10&searchTerm=", 400, missingParams).off(400, invalid),
		get("a 4301-digit n is not an integer", "?n="+strings.Repeat("1", 4301)+"&searchTerm=1", 400, missingParams).off(400, invalid),
		get("a bad n is reported before a large one", "?n=100001&searchTerm=x", 400, missingParams).off(400, invalid),
		{Rule: "HEAD answers like GET without a body", Method: http.MethodHead, Target: p + "?n=10&searchTerm=5", Status: 200, Want: Empty()},
	}, methodCases(p, http.MethodGet)...)}
}

func sensitiveData() Check {
	return func(b []byte) error {
		return objectWithString(b, "data")
	}
}

func hasPrefix(prefix string) Check {
	return func(b []byte) error {
		if !strings.HasPrefix(string(b), prefix) {
			return errorf("want a body starting %q", prefix)
		}
		return nil
	}
}

func contains(s string) Check {
	return func(b []byte) error {
		if !strings.Contains(string(b), s) {
			return errorf("want a body containing %q", s)
		}
		return nil
	}
}

func openAPIJSON() Check {
	return func(b []byte) error {
		return objectWithString(b, "openapi")
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// objectWithString wants a JSON object whose property key is a string.
func objectWithString(b []byte, key string) error {
	var g map[string]any
	if err := json.Unmarshal(b, &g); err != nil {
		return errorf("not a JSON object: %v", err)
	}
	if _, ok := g[key].(string); !ok {
		return errorf("%q missing or not a string", key)
	}
	return nil
}

// postmanV21 wants a Postman collection of format v2.1 with items.
func postmanV21() Check {
	return func(b []byte) error {
		var c struct {
			Info struct {
				Schema string `json:"schema"`
			} `json:"info"`
			Item []json.RawMessage `json:"item"`
		}
		if err := json.Unmarshal(b, &c); err != nil {
			return fmt.Errorf("not JSON: %v", err)
		}
		if c.Info.Schema != "https://schema.getpostman.com/json/collection/v2.1.0/collection.json" || len(c.Item) == 0 {
			return fmt.Errorf("not a Postman v2.1 collection with items")
		}
		return nil
	}
}
