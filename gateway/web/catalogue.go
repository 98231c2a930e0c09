package web

import "github.com/defectshowcase/showcase/platform/defects"

// Category groups the endpoints of one defect category on the front page.
type Category struct {
	Name      string
	Endpoints []Endpoint
}

// Endpoint is a row of the front page: the operation, its planted defect
// and a request that shows it.
type Endpoint struct {
	N       int
	Method  string
	Path    string
	Defect  defects.ID // the DEFECT(<id>) marker in the code
	Title   string
	Planted string // what goes wrong, in a sentence
	Example Example
}

// Example is a request with the status it gets, with the defect active and
// switched off. Target is relative to the front page, so it works behind a
// path prefix.
type Example struct {
	Target    string
	Body      string // JSON, for POST
	Status    int
	Shows     string // what to look at in the answer
	OffStatus int
	OffShows  string
}

// Catalogue is the front page's table of the ten endpoints.
var Catalogue = []Category{
	{Name: "Security", Endpoints: []Endpoint{
		{N: 1, Method: "GET", Path: "/security/unauthenticated-access", Defect: defects.SEC01, Title: "Unauthenticated access",
			Planted: "The contract requires an X-API-Key (401 without one); the service checks no key and returns the sensitive data to anybody.",
			Example: Example{Target: "security/unauthenticated-access", Status: 200, Shows: "200 with the data, and no key was sent", OffStatus: 401, OffShows: "401: without the key there is no data"}},
	}},
	{Name: "Internal server errors", Endpoints: []Endpoint{
		{N: 2, Method: "POST", Path: "/internal-server-errors/improper-input-type-handling", Defect: defects.ERR01, Title: "Improper input type handling",
			Planted: "A card number with a character that is not a digit is not validated: the request crashes with a 500.",
			Example: Example{Target: "internal-server-errors/improper-input-type-handling", Body: `{"number":"4111-1111"}`, Status: 500, Shows: "500: the dash crashed the Luhn check", OffStatus: 400, OffShows: "400: the dash is rejected as invalid input"}},
		{N: 3, Method: "POST", Path: "/internal-server-errors/exceeding-column-size", Defect: defects.ERR02, Title: "Exceeding column size",
			Planted: "The contract accepts texts up to 255 characters; the database column holds 15, so a 16-character text ends in a 500 carrying the database error.",
			Example: Example{Target: "internal-server-errors/exceeding-column-size", Body: `{"text":"sixteen chars!!!"}`, Status: 500, Shows: "500 with the database's error text", OffStatus: 200, OffShows: "200: 16 characters are stored, as 255 are promised"}},
		{N: 4, Method: "POST", Path: "/internal-server-errors/improper-unicode-encoding", Defect: defects.ERR03, Title: "Improper Unicode encoding",
			Planted: "Text is encoded to ASCII without handling anything else: one accented letter ends in a 500.",
			Example: Example{Target: "internal-server-errors/improper-unicode-encoding", Body: `{"text":"café"}`, Status: 500, Shows: "500 naming the character that failed", OffStatus: 200, OffShows: "200: the accent is handled"}},
	}},
	{Name: "Response conformance", Endpoints: []Endpoint{
		{N: 5, Method: "GET", Path: "/response-conformance/malformed-json", Defect: defects.CONF01, Title: "Malformed JSON",
			Planted: "Declared as JSON, the body has an unquoted property name that no JSON parser accepts.",
			Example: Example{Target: "response-conformance/malformed-json", Status: 200, Shows: "200 with {success: true}, which is not JSON", OffStatus: 200, OffShows: "200 with valid JSON"}},
		{N: 6, Method: "GET", Path: "/response-conformance/incorrect-content-type", Defect: defects.CONF02, Title: "Incorrect content type",
			Planted: "Declared as a JSON object with a name, the answer is plain text.",
			Example: Example{Target: "response-conformance/incorrect-content-type", Status: 200, Shows: "200 text/plain: Success!", OffStatus: 200, OffShows: "200 application/json with the name"}},
		{N: 7, Method: "GET", Path: "/response-conformance/missing-field", Defect: defects.CONF03, Title: "Missing field",
			Planted: "The contract requires id, name and age; age never comes.",
			Example: Example{Target: "response-conformance/missing-field", Status: 200, Shows: "200 without the required age", OffStatus: 200, OffShows: "200 with the age"}},
		{N: 8, Method: "GET", Path: "/response-conformance/undocumented-status-code", Defect: defects.CONF04, Title: "Undocumented status code",
			Planted: "Only 200 and 400 are declared; any id but 0 gets a 404.",
			Example: Example{Target: "response-conformance/undocumented-status-code?id=1", Status: 404, Shows: "404, a status the contract does not declare", OffStatus: 404, OffShows: "404, now a declared status"}},
	}},
	{Name: "Performance", Endpoints: []Endpoint{
		{N: 9, Method: "GET", Path: "/performance/unbounded-result-set", Defect: defects.PERF01, Title: "Unbounded result set",
			Planted: "A limit above the declared maximum of 1000 is not rejected, and each item costs a millisecond.",
			Example: Example{Target: "performance/unbounded-result-set?limit=5000", Status: 200, Shows: "200 after a full second, limit 5000 accepted", OffStatus: 400, OffShows: "400: 5000 is above the maximum, and no delay"}},
		{N: 10, Method: "GET", Path: "/performance/inefficient-algorithm", Defect: defects.PERF02, Title: "Inefficient algorithm",
			Planted: "The whole Fibonacci sequence is built number by number in decimal arithmetic to search it; n = 100000 takes 1.2 seconds on any machine.",
			Example: Example{Target: "performance/inefficient-algorithm?n=30000&searchTerm=55", Status: 200, Shows: "200 with foundAt [10], after a wait that grows with n", OffStatus: 200, OffShows: "200 with foundAt [10], at once"}},
	}},
}
