package server

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// The admin listener refuses a browser's state-changing request from
// another origin, answers a known path asked with another method with 405
// and its Allow, and an unknown path with 404, all in JSON.
func TestAdminRefusesWhatABrowserShouldNot(t *testing.T) {
	t.Parallel()
	a := NewAdmin(prometheus.NewRegistry(), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), false)
	resets := 0
	a.Handle("POST /defects/reset", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { resets++; w.WriteHeader(http.StatusOK) }))
	a.Handle("GET /defects", http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for _, c := range []struct {
		name, method, path string
		header             map[string]string
		status             int
		allow              string
	}{
		{"a page elsewhere posts text/plain", "POST", "/defects/reset", map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403, ""},
		{"a cross-site fetch", "POST", "/defects/reset", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403, ""},
		{"a same-site page on another port", "POST", "/defects/reset", map[string]string{"Sec-Fetch-Site": "same-site", "Origin": "http://localhost:8080"}, 403, ""},
		{"curl", "POST", "/defects/reset", nil, 200, ""},
		{"the same origin", "POST", "/defects/reset", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "http://admin.test"}, 200, ""},
		{"GET on a POST path", "GET", "/defects/reset", nil, 405, "OPTIONS, POST"},
		{"DELETE on a GET path", "DELETE", "/defects", nil, 405, "GET, HEAD, OPTIONS"},
		{"POST on /metrics", "POST", "/metrics", nil, 405, "GET, HEAD, OPTIONS"},
		{"OPTIONS", "OPTIONS", "/defects/reset", nil, 200, "OPTIONS, POST"},
		{"an unknown path", "GET", "/nothing", nil, 404, ""},
	} {
		req := httptest.NewRequest(c.method, "http://admin.test"+c.path, strings.NewReader(""))
		for k, v := range c.header {
			req.Header.Set(k, v)
		}
		before := resets
		rec := httptest.NewRecorder()
		a.ServeHTTP(rec, req)
		if rec.Code != c.status || rec.Header().Get("Allow") != c.allow {
			t.Errorf("%s: %d Allow %q, want %d %q", c.name, rec.Code, rec.Header().Get("Allow"), c.status, c.allow)
		}
		if c.status >= 400 && (resets != before || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json")) {
			t.Errorf("%s: reset ran, or the refusal is not JSON (%s)", c.name, rec.Header().Get("Content-Type"))
		}
	}
}

// A program replaces one of the admin's own endpoints by its pattern (the
// gateway answers /coverage/code for a deployment too): the program's
// handler answers, once, and the path's Allow stays as it was.
func TestAdminEndpointReplaced(t *testing.T) {
	t.Parallel()
	a := NewAdmin(prometheus.NewRegistry(), nil, slog.New(slog.NewTextHandler(io.Discard, nil)), false)
	rec := httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest("GET", "/coverage/code", nil))
	if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "no code coverage") {
		t.Fatalf("the admin's own /coverage/code in a build without coverage: %d %s", rec.Code, rec.Body)
	}
	a.Handle("GET "+PathCodeCoverage, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) }))
	rec = httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest("GET", "/coverage/code", nil))
	if rec.Code != http.StatusTeapot {
		t.Errorf("replaced: %d, want the program's 418", rec.Code)
	}
	rec = httptest.NewRecorder()
	a.ServeHTTP(rec, httptest.NewRequest("POST", "/coverage/code", nil))
	if allow := rec.Header().Get("Allow"); rec.Code != http.StatusMethodNotAllowed || allow != "GET, HEAD, OPTIONS" {
		t.Errorf("POST: %d, Allow %q; want 405, GET, HEAD, OPTIONS", rec.Code, allow)
	}
}
