package watch

import (
	"testing"
	"time"
)

// What a page costs the server while a run goes: a sample (the state read
// from the folder, four times a second while any page is open) of a run
// half-way, with its trials ended since the last sample or not. With none
// ended since, the summary and the charts are not worked out again.
//
//	go test ./judge/trials/watch -run '^$' -bench State -benchmem
func BenchmarkState(b *testing.B) {
	dir := copyRun(b)
	halfWay(b, dir, time.Now().UTC())
	b.Run("nothing ended since", func(b *testing.B) {
		w := New(Options{Dir: dir})
		defer w.Close()
		w.State()
		b.ReportAllocs()
		for b.Loop() {
			w.State()
		}
	})
	b.Run("a trial ended since", func(b *testing.B) {
		w := New(Options{Dir: dir})
		defer w.Close()
		b.ReportAllocs()
		for b.Loop() {
			w.key = "" // as if a record changed
			w.State()
		}
	})
}
