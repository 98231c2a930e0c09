package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	declared "github.com/defectshowcase/showcase/catalogue/contract"
)

// -check fails when a request goes unanswered (the contract is served,
// every endpoint's connection dropped), and passes when every request is
// answered, whatever the answers find.
func TestCheck(t *testing.T) {
	c, err := declared.Declared()
	if err != nil {
		t.Fatal(err)
	}
	// Read by the server's goroutines, which may outlive a run (a
	// dropped connection's handler): atomic, or the race detector
	// rightly objects.
	var answer atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Path == "/openapi.json" {
			w.Write(c.JSON)
			return
		}
		if !answer.Load() {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.Write([]byte(`{}`))
	}))
	defer srv.Close()
	var stderr bytes.Buffer
	out := filepath.Join(t.TempDir(), "r.csv")
	answer.Store(false)
	err = run(context.Background(), []string{"-check", "-timeout", "2s", "-base", srv.URL, "-out", out}, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error(), "went unanswered") {
		t.Errorf("-check with every endpoint dropped: %v", err)
	}
	if err := run(context.Background(), []string{"-timeout", "2s", "-base", srv.URL, "-out", out}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Errorf("without -check an unanswered request is reported, not an error: %v", err)
	}
	answer.Store(true)
	stderr.Reset()
	if err := run(context.Background(), []string{"-check", "-base", srv.URL, "-out", out}, &bytes.Buffer{}, &stderr); err != nil {
		t.Errorf("-check with every request answered: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "requests answered") {
		t.Errorf("-check does not say what it checked: %s", stderr.String())
	}
}
