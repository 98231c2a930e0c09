package suite

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
)

// Outcome checks that an answer is one the specification allows for that
// request: the planted defects included, nothing else. Fuzzing and floods
// use it where the exact answer is not known in advance.
func Outcome(method, path string, status int, header http.Header, body []byte) error {
	if i := strings.IndexByte(path, '?'); i >= 0 {
		path = path[:i]
	}
	if method == http.MethodHead {
		if len(body) != 0 {
			return fmt.Errorf("HEAD answered with a body")
		}
		method, body = http.MethodGet, nil
	}
	allow, known := routeMethods[path]
	switch {
	case !known:
		if slices.Contains(GatewayPaths, path) || strings.HasPrefix(path, GatewayAssets) || strings.HasPrefix(path, GatewayCollections) {
			return nil // the gateway's own: the contract and the pages, checked by their own tests
		}
		return want(status, header, body, 404, `{"error":"Not Found"}`)
	case method == http.MethodOptions:
		if status != 200 || header.Get("Allow") != allow {
			return fmt.Errorf("OPTIONS: %d Allow %q, want 200 Allow %q", status, header.Get("Allow"), allow)
		}
		return nil
	case !slices.Contains(strings.Split(allow, ", "), method):
		if header.Get("Allow") != allow {
			return fmt.Errorf("405 without Allow %q", allow)
		}
		return want(status, header, body, 405, `{"error":"Method Not Allowed"}`)
	}
	check := outcomes[path][status]
	if check == nil {
		return fmt.Errorf("status %d is not an outcome of %s", status, path)
	}
	if body == nil { // HEAD
		return nil
	}
	return check(header, body)
}

// GatewayPaths are what the gateway serves itself besides the endpoints:
// the contract and the pages for people; GatewayAssets prefixes the pages'
// assets.
var GatewayPaths = []string{"/openapi.yaml", "/openapi.json", "/", "/docs", "/README.md"}

// GatewayAssets is the path prefix of the pages' assets.
const GatewayAssets = "/assets/"

// GatewayCollections is the path prefix of the collections of trigger
// requests the front page offers.
const GatewayCollections = "/collections/"

// routeMethods is each endpoint's Allow.
var routeMethods = func() map[string]string {
	m := map[string]string{}
	for _, e := range catalogue.Endpoints {
		m[e.Path] = map[string]string{http.MethodGet: getAllow, http.MethodPost: postAllow}[e.Method]
	}
	return m
}()

type bodyCheck func(http.Header, []byte) error

func jsonCheck(c Check) bodyCheck {
	return func(h http.Header, b []byte) error {
		if ct := h.Get("Content-Type"); ct != "application/json" {
			return fmt.Errorf("Content-Type %q", ct)
		}
		return c(b)
	}
}

func want(status int, h http.Header, b []byte, wantStatus int, wantBody string) error {
	if status != wantStatus {
		return fmt.Errorf("status %d, want %d", status, wantStatus)
	}
	if b == nil {
		return nil
	}
	return jsonCheck(JSONEqual(wantBody))(h, b)
}

// successOnly wants exactly {"success": <bool>}, with the given value unless either.
func successOnly(either bool, value bool) Check {
	return func(b []byte) error {
		var g map[string]any
		if err := json.Unmarshal(b, &g); err != nil || len(g) != 1 {
			return fmt.Errorf(`want only "success"`)
		}
		v, ok := g["success"].(bool)
		if !ok || (!either && v != value) {
			return fmt.Errorf(`"success" is %v`, g["success"])
		}
		return nil
	}
}

func errorString() Check {
	return func(b []byte) error { return objectWithString(b, "error") }
}

func itemsUpTo1000() Check {
	return func(b []byte) error {
		var g map[string]any
		if err := json.Unmarshal(b, &g); err != nil || len(g) < 1 || len(g) > 1000 {
			return fmt.Errorf("want 1 to 1000 items")
		}
		return Items(len(g))(b)
	}
}

func foundAtAscending() Check {
	return func(b []byte) error {
		var g struct {
			FoundAt []int `json:"foundAt"`
		}
		if err := json.Unmarshal(b, &g); err != nil || g.FoundAt == nil || !slices.IsSorted(g.FoundAt) {
			return fmt.Errorf(`want {"foundAt": [ascending indices]}`)
		}
		return nil
	}
}

func oneOf(bodies ...string) Check {
	return func(b []byte) error {
		for _, w := range bodies {
			if JSONEqual(w)(b) == nil {
				return nil
			}
		}
		return fmt.Errorf("want one of %v", bodies)
	}
}

func retryLater(h http.Header, b []byte) error {
	if h.Get("Retry-After") == "" {
		return fmt.Errorf("503 without Retry-After")
	}
	return jsonCheck(errorString())(h, b)
}

var (
	failure     = jsonCheck(successOnly(false, false))
	failWithErr = jsonCheck(FailureWithError())
	outcomes    = map[string]map[int]bodyCheck{
		PathUnauthenticatedAccess: {200: jsonCheck(sensitiveData())},
		PathInputTypeHandling:     {200: jsonCheck(successOnly(true, false)), 400: failure, 413: failure, 415: failure, 500: failWithErr},
		PathColumnSize:            {200: jsonCheck(successOnly(false, true)), 400: failure, 413: failure, 415: failure, 500: failWithErr},
		PathUnicodeEncoding:       {200: jsonCheck(successOnly(false, true)), 400: failWithErr, 413: failWithErr, 415: failWithErr, 500: failWithErr},
		PathMalformedJSON: {200: func(h http.Header, b []byte) error {
			if h.Get("Content-Type") != "application/json" || string(b) != `{success: true}` {
				return fmt.Errorf("not the planted malformed body")
			}
			return nil
		}},
		PathIncorrectContentType: {200: func(h http.Header, b []byte) error {
			if h.Get("Content-Type") != "text/plain" || string(b) != "Success!" {
				return fmt.Errorf("not the planted plain text")
			}
			return nil
		}},
		PathMissingField: {200: jsonCheck(JSONEqual(`{"id":"123","name":"Alice"}`))},
		PathUndocumentedStatus: {
			200: jsonCheck(JSONEqual(`{"message":"Data for ID 0"}`)),
			400: jsonCheck(JSONEqual(`{"error":"ID is required"}`)),
			404: jsonCheck(JSONEqual(`{"error":"Not Found"}`)),
		},
		PathUnboundedResultSet: {200: jsonCheck(itemsUpTo1000()), 400: jsonCheck(JSONEqual(`{"error":"Limit must be greater than 0"}`))},
		PathInefficientAlgorithm: {
			200: jsonCheck(foundAtAscending()),
			400: jsonCheck(oneOf(`{"error":"Missing required parameters"}`, `{"error":"n should be less than or equal to 100000"}`)),
			503: retryLater,
		},
	}
)
