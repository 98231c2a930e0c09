package performancesvc

import (
	"context"
	"errors"
)

// errQueueFull is returned when every worker is busy and the queue is full.
var errQueueFull = errors.New("queue full")

// limiter runs at most `workers` jobs at a time and lets at most `queue`
// more wait for a slot; beyond that a job is refused at once, so a flood
// meets a quick 503 instead of an unbounded pile-up.
type limiter struct {
	slots   chan struct{} // one token per running job
	waiting chan struct{} // one token per running or waiting job
}

func newLimiter(workers, queue int) *limiter {
	return &limiter{
		slots:   make(chan struct{}, workers),
		waiting: make(chan struct{}, workers+queue),
	}
}

// acquire waits for a slot. It fails with errQueueFull when the queue is
// full and with ctx's error when ctx ends first. On success the caller must
// call release.
func (l *limiter) acquire(ctx context.Context) error {
	select {
	case l.waiting <- struct{}{}:
	default:
		return errQueueFull
	}
	select {
	case l.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		<-l.waiting
		return ctx.Err()
	}
}

func (l *limiter) release() {
	<-l.slots
	<-l.waiting
}
