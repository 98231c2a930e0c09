package server

import (
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// MinHeapTarget is the heap the garbage collector may grow to before a
// cycle, however small the live heap: 16 MiB.
//
// With Go's default (GOGC=100) a cycle starts when the heap reaches twice
// the live heap, and at least 4 MiB. A program's live heap here is about 3
// MiB (the contract, the catalogue, the counters), so a cycle would start
// after every 1.3 MB of garbage, about a hundred requests, and mark the 3
// MiB again each time: the collector's marking was a tenth of a request's
// CPU under load (docs/performance.md). Raising the target for small live
// heaps alone, as GC tuners do (Uber's gctuner), makes the cycles ten times
// rarer and costs at most this much memory under load; once the live heap
// is over half of it, GOGC is back at 100 and nothing changes.
//
// GOGC is set after a cycle, for the live heap that cycle found; a live
// heap that grows twentyfold before the next (sixteen clients sending
// bodies of a megabyte at once) would meet a GOGC set for the small one,
// and the heap could grow to five times it before a cycle came to set it
// right. So while GOGC is above 100, a soft memory limit of memoryCeiling
// stands behind it: past it the collector runs at once, and the cycle it
// ends retunes GOGC to 100 and lifts the limit.
const MinHeapTarget = 16 << 20

// memoryCeiling is the memory limit while GOGC is above 100: the heap
// target and room for the rest of the runtime's memory (stacks, metadata).
const memoryCeiling = MinHeapTarget + 16<<20

// maxGCPercent bounds the GOGC the tuner sets.
const maxGCPercent = 1000

var tuneOnce sync.Once

// TuneGC keeps the heap target at MinHeapTarget or twice the live heap,
// whichever is larger, by setting GOGC (and the memory limit behind it)
// after each collection. It does nothing when GOGC or GOMEMLIMIT is set in
// the environment: the operator's choice wins. getenv is os.Getenv in
// production.
func TuneGC(getenv func(string) string) {
	if getenv("GOGC") != "" || getenv("GOMEMLIMIT") != "" {
		return
	}
	tuneOnce.Do(func() {
		retune()
		arm()
	})
}

// sentinel is garbage from the start: its cleanup runs after the cycle
// that finds it, retunes and arms a new one. It holds a pointer and 16
// bytes, so it is not a tiny allocation (whose cleanups may never run).
type sentinel struct {
	_ *byte
	_ [16]byte
}

func arm() {
	runtime.AddCleanup(new(sentinel), func(struct{}) {
		retune()
		arm()
	}, struct{}{})
}

// retune sets GOGC for the live heap the last cycle marked, and the memory
// limit that stands behind a GOGC above 100.
func retune() {
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	pct := gcPercent(live[0].Value.Uint64())
	limit := int64(math.MaxInt64)
	if pct > 100 {
		limit = memoryCeiling
	}
	// The limit first when it falls, GOGC first when it rises: never a
	// moment with a high GOGC and no ceiling.
	if limit != math.MaxInt64 {
		debug.SetMemoryLimit(limit)
		debug.SetGCPercent(pct)
	} else {
		debug.SetGCPercent(pct)
		debug.SetMemoryLimit(limit)
	}
}

// gcPercent is the GOGC whose target is MinHeapTarget for a live heap of
// live bytes, 100 once twice live is over it.
func gcPercent(live uint64) int {
	if live == 0 {
		return maxGCPercent
	}
	if 2*live >= MinHeapTarget {
		return 100
	}
	return int(min(maxGCPercent, 100*(MinHeapTarget-live)/live))
}
