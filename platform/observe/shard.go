package observe

import (
	"math/bits"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
)

// Counter is a count that many cores add to at once without contending:
// it is split into shards, each on a cache line of its own, and an Add
// goes to a shard picked by the runtime's per-thread random source, so two
// cores rarely write the same line. Reading it (Load) adds the shards up:
// the cost is paid when the count is asked for, not per request. The zero
// Counter is not usable; make one with NewCounter.
type Counter struct {
	shards []paddedUint64
}

// paddedUint64 fills a cache line, so neighbours never share one.
type paddedUint64 struct {
	v atomic.Uint64
	_ [56]byte
}

// shardCount is how many ways a Counter is split: the power of two at or
// above twice the cores Go may run on, at least 2 and at most 32 (2 KiB a
// counter).
var shardCount = func() int {
	n := 2 * runtime.GOMAXPROCS(0)
	return 1 << min(5, max(1, bits.Len(uint(n-1))))
}()

// NewCounter makes a Counter at zero.
func NewCounter() *Counter { return &Counter{shards: make([]paddedUint64, shardCount)} }

// Add adds n.
func (c *Counter) Add(n uint64) {
	c.shards[rand.Uint32()&uint32(len(c.shards)-1)].v.Add(n)
}

// Load is the sum of what was added since the last Reset. A Load
// concurrent with Adds sees each of them or not, as an atomic count would.
func (c *Counter) Load() uint64 {
	var n uint64
	for i := range c.shards {
		n += c.shards[i].v.Load()
	}
	return n
}

// Reset sets the count to zero; Adds concurrent with it may be kept or
// not.
func (c *Counter) Reset() {
	for i := range c.shards {
		c.shards[i].v.Store(0)
	}
}

// Max is the largest of the values given to it, kept like a Counter: a
// value goes to a shard of its own, so cores giving ever larger values
// (the time of each request) do not write one line; Load takes the
// largest over the shards.
type Max struct {
	shards []paddedInt64
}

type paddedInt64 struct {
	v atomic.Int64
	_ [56]byte
}

// NewMax makes a Max at zero.
func NewMax() *Max { return &Max{shards: make([]paddedInt64, shardCount)} }

// Offer keeps v if it is larger than its shard's.
func (m *Max) Offer(v int64) {
	s := &m.shards[rand.Uint32()&uint32(len(m.shards)-1)].v
	for old := s.Load(); v > old && !s.CompareAndSwap(old, v); old = s.Load() {
	}
}

// Load is the largest value offered since the last Reset, 0 if none.
func (m *Max) Load() int64 {
	var v int64
	for i := range m.shards {
		v = max(v, m.shards[i].v.Load())
	}
	return v
}

// Reset sets it back to zero.
func (m *Max) Reset() {
	for i := range m.shards {
		m.shards[i].v.Store(0)
	}
}
