package server

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"sync/atomic"
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

// A live heap that grows fast, as sixteen clients sending a megabyte each
// at once make it, does not meet a GOGC set for the small one: the memory
// limit behind a high GOGC starts a cycle, which sets GOGC for the large
// heap. The heap's target stays near twice the live heap, never the five
// times GOGC 433 would allow.
func TestTunedGCFollowsAGrowingHeap(t *testing.T) {
	TuneGC(func(string) string { return "" })
	read := func(name string) uint64 {
		s := []metrics.Sample{{Name: name}}
		metrics.Read(s)
		return s[0].Value.Uint64()
	}
	runtime.GC()
	time.Sleep(20 * time.Millisecond)
	if read("/gc/gogc:percent") <= 100 {
		t.Fatalf("GOGC %d with a small live heap: the tuner is not on", read("/gc/gogc:percent"))
	}
	const live = 96 << 20
	var maxGoal atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if g := read("/gc/heap/goal:bytes"); g > maxGoal.Load() {
				maxGoal.Store(g)
			}
			time.Sleep(100 * time.Microsecond)
		}
	}()
	// Sixteen clients at once, each holding 6 MiB while it makes garbage.
	var wg sync.WaitGroup
	holds := make([][][]byte, 16)
	for i := range holds {
		wg.Go(func() {
			for range live >> 20 / 16 {
				holds[i] = append(holds[i], make([]byte, 1<<20))
				for range 4 {
					b := make([]byte, 1<<20)
					b[0] = 1
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	<-sampled
	runtime.KeepAlive(holds)
	t.Logf("max goal %d MiB", maxGoal.Load()>>20)
	if maxGoal.Load() > 7*live/2 {
		t.Errorf("the heap's target reached %d MiB for a live heap of %d MiB", maxGoal.Load()>>20, live>>20)
	}
	holds = nil
	runtime.GC()
}
