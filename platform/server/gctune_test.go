package server

import (
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
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
// at once make it, does not meet a GOGC set for the small one. Sampled all
// the while, a GOGC above 100 always has the memory ceiling behind it (so
// the heap's target cannot reach the five times the heap GOGC 433 allows),
// and once the heap is large the tuner has set GOGC to 100 and lifted the
// ceiling. The check is on the settings, not on the heap's target: on a busy
// machine the runtime's pacer alone moves the target (a late cycle counts
// what is allocated during it as marked), whatever GOGC is. What the
// settings do to a real service's memory, TestBodyMemory (e2e) measures.
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
	var bare []string // GOGC above 100 with no ceiling, as sampled
	var maxMarked uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		s := []metrics.Sample{{Name: "/gc/gogc:percent"}, {Name: "/gc/gomemlimit:bytes"}, {Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-stop:
				return
			default:
			}
			metrics.Read(s)
			gogc, limit, marked := s[0].Value.Uint64(), s[1].Value.Uint64(), s[2].Value.Uint64()
			maxMarked = max(maxMarked, marked)
			if gogc > 100 && limit > memoryCeiling && len(bare) < 5 {
				bare = append(bare, fmt.Sprintf("GOGC %d, limit %d, marked heap %d MiB", gogc, limit, marked>>20))
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
	t.Logf("largest marked heap %d MiB", maxMarked>>20)
	for _, b := range bare {
		t.Errorf("a high GOGC without the ceiling: %s", b)
	}
	// The tuner follows the large heap: after a cycle that marks it, GOGC is
	// back at 100 and the ceiling is lifted.
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		time.Sleep(20 * time.Millisecond)
		gogc, limit := read("/gc/gogc:percent"), read("/gc/gomemlimit:bytes")
		if gogc == 100 && limit == math.MaxInt64 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("with a live heap of %d MiB, GOGC is %d and the limit %d; want 100 and none", read("/gc/heap/live:bytes")>>20, gogc, limit)
		}
	}
	runtime.KeepAlive(holds)
	holds = nil
	runtime.GC()
}
