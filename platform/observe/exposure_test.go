package observe_test

import (
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
	l.Record("X-01", long, "id-0", t0)
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			l.Record("X-01", httptest.NewRequest("POST", "/y", nil), "later", t0.Add(time.Duration(i)*time.Millisecond))
		})
	}
	wg.Wait()
	_, seen := l.Snapshot()
	e := seen["X-01"]
	if e.Count != 65 || e.Method != "GET" || e.RequestID != "id-0" || !e.First.Equal(t0) || !e.Last.Equal(t0.Add(63*time.Millisecond)) {
		t.Errorf("got %+v", e)
	}
	if !strings.HasPrefix(e.Target, "/x?q=aaa") || len(e.Target) != 512+len("…") || !strings.HasSuffix(e.Target, "…") {
		t.Errorf("example target of %d bytes: %.40q…", len(e.Target), e.Target)
	}
}
