package stream

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// events reads a stream's events, name and data, until it ends.
func events(t *testing.T, res *http.Response) <-chan [2]string {
	t.Helper()
	ch := make(chan [2]string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(res.Body)
		var name string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "event: "); ok {
				name = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				ch <- [2]string{name, v}
			}
		}
	}()
	return ch
}

func next(t *testing.T, ch <-chan [2]string, name string) string {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		select {
		case ev, ok := <-ch:
			if !ok {
				t.Fatalf("the stream ended before a %q event", name)
			}
			if ev[0] == name {
				return ev[1]
			}
		case <-deadline:
			t.Fatalf("no %q event within 5 s", name)
		}
	}
}

// A hub sends the state at once and each change; an idle stream gets a
// heartbeat; one stream past its bound is refused with its JSON 503; a
// flood of changes reaches it as its latest value; the sampler runs
// only while a stream is open, and closing the hub ends every stream.
func TestHub(t *testing.T) {
	var n atomic.Int64
	var samplers atomic.Int64
	state := func() []byte { return []byte(strconv.FormatInt(n.Load(), 10)) }
	h := New(state, func() Sampler {
		samplers.Add(1)
		return func() ([]byte, []byte) { s := state(); return s, s }
	}, Options{MaxStreams: 2, Interval: 20 * time.Millisecond, Heartbeat: 100 * time.Millisecond, Busy: "Service Unavailable: two at most"})
	srv := httptest.NewServer(h)
	defer srv.Close()
	open := func() (*http.Response, context.CancelFunc) {
		ctx, cancel := context.WithCancel(context.Background())
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return res, cancel
	}
	a, cancelA := open()
	defer cancelA()
	if a.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("content type %q", a.Header.Get("Content-Type"))
	}
	ea := events(t, a)
	if got := next(t, ea, Event); got != "0" {
		t.Errorf("the first state: %s", got)
	}
	next(t, ea, "beat")
	for range 1000 {
		n.Add(1)
	}
	got := next(t, ea, Event)
	for got != "1000" {
		if v, _ := strconv.Atoi(got); v <= 0 || v > 1000 {
			t.Fatalf("after the flood: %s", got)
		}
		got = next(t, ea, Event)
	}
	b, cancelB := open()
	defer cancelB()
	c, cancelC := open()
	defer cancelC()
	var e struct{ Error string }
	if c.StatusCode != http.StatusServiceUnavailable || json.NewDecoder(c.Body).Decode(&e) != nil || e.Error != "Service Unavailable: two at most" {
		t.Errorf("a third stream: %s %q", c.Status, e.Error)
	}
	if h.Open() != 2 || samplers.Load() != 1 {
		t.Errorf("%d open, %d samplers started; want 2 and 1", h.Open(), samplers.Load())
	}
	cancelA()
	a.Body.Close()
	eb := events(t, b)
	next(t, eb, Event)
	h.Close()
	for range eb { // the stream ends with the hub
	}
	if h.Open() != 0 {
		t.Errorf("%d streams open after Close", h.Open())
	}
	if res, _ := open(); res.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("a stream after Close: %s", res.Status)
	}
}
