package gateway

import (
	"context"
	"testing"
)

// ResolvePeers makes the peers' name resolve to ips for the rest of the
// test: replicas on loopback addresses of the test's own, where no DNS
// server answers for them.
func ResolvePeers(t testing.TB, ips ...string) {
	old := lookupHost
	lookupHost = func(context.Context, string) ([]string, error) { return ips, nil }
	t.Cleanup(func() { lookupHost = old })
}
