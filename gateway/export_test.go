package gateway

import (
	"context"
	"net/http"
	"testing"
	"time"
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
