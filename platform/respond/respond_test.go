package respond

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestWriters(t *testing.T) {
	t.Parallel()
	rec := httptest.NewRecorder()
	Fail(rec, http.StatusInternalServerError, "a <b> & c")
	if rec.Body.String() != `{"success":false,"error":"a <b> & c"}` || rec.Header().Get("Content-Length") != "37" || rec.Header().Get("Content-Type") != "application/json" {
		t.Fatalf("Fail: %q %v", rec.Body.String(), rec.Header())
	}
	rec = httptest.NewRecorder()
	Fail(rec, http.StatusBadRequest, "")
	if rec.Body.String() != `{"success":false}` {
		t.Fatalf("Fail without error: %q", rec.Body.String())
	}
}

// BenchmarkJSON writes a precomputed body; BenchmarkValue encodes one.
func BenchmarkJSON(b *testing.B) {
	body := []byte(`{"id":"123","name":"Alice"}`)
	b.ReportAllocs()
	for b.Loop() {
		JSON(httptest.NewRecorder(), http.StatusOK, body)
	}
}

func BenchmarkValue(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		Value(httptest.NewRecorder(), http.StatusOK, Failure{Error: "x"})
	}
}
