package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/platform/observe"
)

// ResolvePeers makes the peers' name resolve to ips for the rest of the
// test: replicas on loopback addresses of the test's own, where no DNS
// server answers for them.
func ResolvePeers(t testing.TB, ips ...string) {
	old := lookupHost
	lookupHost = func(context.Context, string) ([]string, error) { return ips, nil }
	t.Cleanup(func() { lookupHost = old })
}

// WaitMutantsWith makes a slow mutant call wait instead of waiting, for the
// rest of the test: the wait is asserted, not spent.
func WaitMutantsWith(t testing.TB, wait func(r *http.Request, d time.Duration) bool) {
	old := mutantWait
	mutantWait = wait
	t.Cleanup(func() { mutantWait = old })
}

// MutantLayer is the gateway's mutant layer for set in front of next,
// alone: it waits with wait, and counts on in.
func MutantLayer(set catalogue.Set, next http.Handler, in *observe.Instruments, wait func(r *http.Request, d time.Duration) bool) http.Handler {
	l := newMutants(set, in)
	l.wait = wait
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if ms := l.byPath[r.URL.Path]; ms != nil && r.Method == ms[0].Endpoint().Method {
			l.serve(w, r, ms, next)
			return
		}
		next.ServeHTTP(w, r)
	})
}
