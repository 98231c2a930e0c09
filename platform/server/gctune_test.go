package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

// The heap target is 16 MiB for a small live heap, twice the live heap
// once that is larger: GOGC worked out by hand for each.
func TestGCPercent(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 1000}, {1 << 20, 1000}, {2 << 20, 700}, {4 << 20, 300}, {3 << 20, 433}, {8 << 20, 100}, {64 << 20, 100}, {(8 << 20) - 1, 100},
	} {
		if got := gcPercent(c.live); got != c.want {
			t.Errorf("gcPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
}

// After a collection, the tuner has set GOGC for the live heap it marked;
// with GOGC in the environment it leaves the runtime alone.
func TestTuneGC(t *testing.T) {
	gogc := func() uint64 {
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	debug.SetGCPercent(150) // as GOGC=150 would
	TuneGC(func(k string) string { return map[string]string{"GOGC": "150"}[k] })
	runtime.GC()
	time.Sleep(50 * time.Millisecond)
	if got := gogc(); got != 150 {
		t.Fatalf("with GOGC=150 set, GOGC is %d", got)
	}
	TuneGC(func(string) string { return "" })
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
		metrics.Read(live)
		want := gcPercent(live[0].Value.Uint64())
		got := gogc()
		if int(got) == want && want > 100 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GOGC is %d after collections, want %d for a live heap of %d bytes", got, want, live[0].Value.Uint64())
		}
	}
}
