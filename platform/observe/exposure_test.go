package observe_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/platform/observe"
)

// The log counts concurrent requests exactly, keeps the first as the
// example with its target cut at 512 bytes, and keeps the latest time as
// the last whatever order the requests end in.
func TestExposureLog(t *testing.T) {
	t.Parallel()
	l := observe.NewExposureLog()
	long := httptest.NewRequest("GET", "/x?q="+strings.Repeat("a", 4000), nil)
	t0 := time.Now()
	l.Record("X-01", long, "id-0", 70, t0)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			l.Record("X-01", httptest.NewRequest("POST", "/y", nil), "later", uint64(100-i), t0.Add(time.Duration(i)*time.Millisecond))
		})
	}
	wg.Wait()
	_, seen := l.Snapshot()
	e := seen["X-01"]
	if e.Count != 65 || e.Method != "GET" || e.RequestID != "id-0" || !e.First.Equal(t0) || !e.Last.Equal(t0.Add(63*time.Millisecond)) || e.Index != 37 {
		t.Errorf("got %+v", e)
	}
	if !strings.HasPrefix(e.Target, "/x?q=aaa") || len(e.Target) != 512+len("…") || !strings.HasSuffix(e.Target, "…") {
		t.Errorf("example target of %d bytes: %.40q…", len(e.Target), e.Target)
	}
}

// A reset empties the log: a defect triggered before it is not in the
// snapshot, one triggered after it starts again with its own example.
func TestExposureReset(t *testing.T) {
	t.Parallel()
	l := observe.NewExposureLog()
	l.Record("X-01", httptest.NewRequest("GET", "/a", nil), "a", 5, time.Now())
	since := l.Reset()
	if s, seen := l.Snapshot(); len(seen) != 0 || !s.Equal(since) {
		t.Fatalf("after the reset: %v since %v", seen, s)
	}
	t1 := time.Now()
	l.Record("X-01", httptest.NewRequest("GET", "/b", nil), "b", 9, t1)
	if _, seen := l.Snapshot(); seen["X-01"].Count != 1 || seen["X-01"].Target != "/b" || seen["X-01"].Index != 9 || !seen["X-01"].First.Equal(t1) {
		t.Errorf("after the reset: %+v", seen["X-01"])
	}
}

// A Counter adds up exactly what concurrent Adds gave it, whichever shards
// they went to.
func TestCounter(t *testing.T) {
	t.Parallel()
	c := observe.NewCounter()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for range 1000 {
				c.Add(uint64(i))
			}
		})
	}
	wg.Wait()
	if got := c.Load(); got != 1000*(15*16/2) {
		t.Errorf("Load = %d, want %d", got, 1000*(15*16/2))
	}
	c.Reset()
	if got := c.Load(); got != 0 {
		t.Errorf("after Reset: %d", got)
	}
}

// A defect's trigger is stamped when its planted code calls Triggered,
// not when the request ends: a tool that read the answer cannot have seen
// the symptom before the instance says it was there. The handler waits
// after triggering until the test has its time; stamped at the request's
// end, the trigger would be after it.
func TestTriggerStampedWhenPlantedCodeRuns(t *testing.T) {
	t.Parallel()
	tel := observe.Discard()
	in := tel.Service("test")
	p := in.Planted("X-01")
	var afterTrigger time.Time
	h := in.Middleware(func(*http.Request) string { return "/x" })(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.Serve(w)
		observe.Triggered(w, r)
		afterTrigger = time.Now()
		for !time.Now().After(afterTrigger) { // the end is later than afterTrigger, on any clock
		}
		w.WriteHeader(http.StatusInternalServerError)
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/x", nil))
	_, seen := tel.Exposure.Snapshot()
	if e := seen["X-01"]; e.Count != 1 || e.First.After(afterTrigger) {
		t.Fatalf("triggered at %v, recorded %+v: stamped later than the planted code ran", afterTrigger, e)
	}
}

// A Max keeps the largest value offered, whichever shards the offers went
// to.
func TestMax(t *testing.T) {
	t.Parallel()
	m := observe.NewMax()
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			for j := range 1000 {
				m.Offer(int64(i*1000 + j))
			}
		})
	}
	wg.Wait()
	if got := m.Load(); got != 15999 {
		t.Errorf("Load = %d, want 15999", got)
	}
	m.Reset()
	if got := m.Load(); got != 0 {
		t.Errorf("after Reset: %d", got)
	}
}

// The IDs a process makes are unique, made on many goroutines at once
// (each shard numbers its own), and sane.
func TestNewRequestIDUnique(t *testing.T) {
	t.Parallel()
	ids := make([][]string, 16)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Go(func() {
			for range 2000 {
				ids[i] = append(ids[i], observe.NewRequestID())
			}
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, some := range ids {
		for _, id := range some {
			if seen[id] || !observe.SaneRequestID(id) {
				t.Fatalf("%q: made twice, or not sane", id)
			}
			seen[id] = true
		}
	}
}
