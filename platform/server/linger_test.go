package server

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A handler that answers 413 at once for a body over its limit, as the
// errors service does for a Content-Length over MAX_BODY_BYTES: every
// client sending 1 MiB on a new connection (Connection: close) reads the
// 413, none gets its connection reset while still sending. Without
// answerBeforeBody about a third of them did here.
func TestAnswerBeforeBodyReachesTheClient(t *testing.T) {
	t.Parallel()
	addr := serveEarly413(t)
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	body := strings.Repeat("1", 1<<20+1)
	const n = 100
	failed := 0
	for range n {
		res, err := client.Post("http://"+addr+"/", "application/json", strings.NewReader(body))
		if err != nil {
			failed++
			continue
		}
		res.Body.Close()
		if res.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d", res.StatusCode)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d clients got no answer", failed, n)
	}
}

// A client that asked to close the connection and sends none of its body
// gets its answer and is not held: the connection is closed after the
// second answerBeforeBody waits, not at the read timeout.
func TestAnswerBeforeBodyHoldsNoStalledClient(t *testing.T) {
	t.Parallel()
	addr := serveEarly413(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "POST / HTTP/1.1\r\nHost: x\r\nConnection: close\r\nContent-Length: 1048577\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_ = conn.SetReadDeadline(start.Add(10 * time.Second))
	got, err := io.ReadAll(conn)
	if !strings.HasPrefix(string(got), "HTTP/1.1 413") {
		t.Fatalf("read %q, %v", got, err)
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("the connection was closed %v after the answer, want about a second", took)
	} else {
		t.Logf("closed %v after the request", took.Round(time.Millisecond))
	}
}

// serveEarly413 serves, with New, a handler that answers 413 without
// reading the body, and returns its address.
func serveEarly413(t *testing.T) string {
	t.Helper()
	early := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(early, slog.New(slog.NewTextHandler(io.Discard, nil)), DefaultLimits)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}
