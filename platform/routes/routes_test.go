package routes_test

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/routes"
)

func newRouter(logs io.Writer) http.Handler {
	return routes.New([]routes.Route{
		{Method: http.MethodGet, Pattern: "/a/get", Handler: func(w http.ResponseWriter, _ *http.Request) {
			respond.JSON(w, http.StatusOK, []byte(`{"ok":true}`))
		}},
		{Method: http.MethodPost, Pattern: "/a/post", Handler: func(w http.ResponseWriter, _ *http.Request) {
			respond.JSON(w, http.StatusCreated, []byte(`{}`))
		}},
		{Method: http.MethodGet, Pattern: "/a/panic", Handler: func(http.ResponseWriter, *http.Request) {
			panic("the cause")
		}},
	}, routes.Options{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
}

func TestRouter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		rule, method, path string
		status             int
		allow, body        string
	}{
		{"a GET route answers", "GET", "/a/get", 200, "", `{"ok":true}`},
		{"HEAD runs the GET handler without a body", "HEAD", "/a/get", 200, "", ``},
		{"OPTIONS lists the methods of a GET route", "OPTIONS", "/a/get", 200, "GET, HEAD, OPTIONS", ``},
		{"OPTIONS lists the methods of a POST route", "OPTIONS", "/a/post", 200, "OPTIONS, POST", ``},
		{"another method is 405 with Allow", "PUT", "/a/get", 405, "GET, HEAD, OPTIONS", `{"error":"Method Not Allowed"}`},
		{"GET on a POST route is 405", "GET", "/a/post", 405, "OPTIONS, POST", `{"error":"Method Not Allowed"}`},
		{"a non-standard method on a route is 405", "BREW", "/a/get", 405, "GET, HEAD, OPTIONS", `{"error":"Method Not Allowed"}`},
		{"a non-standard method elsewhere is 404", "BREW", "/nowhere", 404, "", `{"error":"Not Found"}`},
		{"an unknown path is 404", "GET", "/nowhere", 404, "", `{"error":"Not Found"}`},
		{"a trailing slash is unknown", "GET", "/a/get/", 404, "", `{"error":"Not Found"}`},
		{"letter case matters", "GET", "/A/GET", 404, "", `{"error":"Not Found"}`},
		{"a panic is a JSON 500 with its cause", "GET", "/a/panic", 500, "", `{"success":false,"error":"the cause"}`},
	}
	var logs bytes.Buffer
	h := newRouter(&logs)
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(tt.method, tt.path, nil))
		body := rec.Body.String()
		if tt.method == "HEAD" {
			body = "" // the recorder keeps what net/http would discard
		}
		if rec.Code != tt.status || rec.Header().Get("Allow") != tt.allow || body != tt.body {
			t.Errorf("%s: %s %s = %d Allow %q %s; want %d Allow %q %s", tt.rule, tt.method, tt.path,
				rec.Code, rec.Header().Get("Allow"), body, tt.status, tt.allow, tt.body)
		}
		if tt.body != "" && rec.Header().Get("Content-Type") != "application/json" {
			t.Errorf("%s: Content-Type %q", tt.rule, rec.Header().Get("Content-Type"))
		}
	}
	if n := strings.Count(logs.String(), `"cause":"the cause"`); n != 1 {
		t.Errorf("the panic was logged %d times with its cause, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), "goroutine ") {
		t.Errorf("a stack trace reached the log:\n%s", logs.String())
	}
}

// net/http's own abort signal still aborts the connection.
func TestRouterPassesAbortHandler(t *testing.T) {
	t.Parallel()
	h := routes.New([]routes.Route{{Method: http.MethodGet, Pattern: "/abort", Handler: func(http.ResponseWriter, *http.Request) {
		panic(http.ErrAbortHandler)
	}}}, routes.Options{})
	defer func() {
		if v := recover(); v != http.ErrAbortHandler {
			t.Fatalf("recovered %v, want http.ErrAbortHandler", v)
		}
	}()
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/abort", nil))
}

func TestNewRejectsBadTables(t *testing.T) {
	t.Parallel()
	for name, table := range map[string][]routes.Route{
		"unsupported method": {{Method: "BREW", Pattern: "/x", Handler: http.NotFound}},
		"duplicate method":   {{Method: "POST", Pattern: "/x", Handler: http.NotFound}, {Method: "POST", Pattern: "/x", Handler: http.NotFound}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: New did not panic", name)
				}
			}()
			routes.New(table, routes.Options{})
		}()
	}
}
