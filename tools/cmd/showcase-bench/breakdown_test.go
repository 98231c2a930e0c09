package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/pprof/profile"
)

// A profile of known stacks, leaf first, is split into the parts it should
// be: a system call goes to its kind whoever makes it, the runtime's work
// before the code, and the code nearest the leaf owns the rest.
func TestBreakdown(t *testing.T) {
	stacks := []struct {
		stack []string
		value int64
		part  string
	}{
		{[]string{"internal/runtime/syscall/linux.Syscall6", "syscall.write", "net/http.persistConnWriter.Write", "net/http.(*persistConn).writeLoop"}, 30, parts[1].name},
		// The log line's own write is the log's.
		{[]string{"internal/runtime/syscall/linux.Syscall6", "syscall.write", "os.(*File).Write", "log/slog.(*commonHandler).handle", "github.com/defectshowcase/showcase/platform/observe.(*Instruments).logRequest"}, 6, parts[0].name},
		{[]string{"internal/runtime/syscall/linux.Syscall6", "syscall.read", "net/http.(*connReader).Read", "net/http.(*conn).serve"}, 10, parts[2].name},
		{[]string{"internal/runtime/syscall/linux.Syscall6", "runtime.netpoll", "runtime.findRunnable", "runtime.schedule"}, 2, parts[3].name},
		{[]string{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"}, 8, parts[4].name},
		{[]string{"runtime.nextFreeFast", "runtime.mallocgc", "net/http.Header.Clone", "net/http/httputil.(*ReverseProxy).ServeHTTP"}, 7, parts[5].name},
		{[]string{"runtime.runqget", "runtime.findRunnable", "runtime.schedule", "runtime.mcall"}, 5, parts[6].name},
		// ModifyResponse, ours, called by ReverseProxy.
		{[]string{"runtime.mapaccess1_faststr", "github.com/defectshowcase/showcase/gateway.NewUpstream.func2", "net/http/httputil.(*ReverseProxy).modifyResponse", "net/http/httputil.(*ReverseProxy).ServeHTTP", "github.com/defectshowcase/showcase/gateway.(*Upstream).ServeHTTP", "net/http.(*conn).serve"}, 3, parts[7].name},
		{[]string{"runtime.selectgo", "net/http.(*persistConn).roundTrip", "net/http.(*Transport).roundTrip", "net/http.(*Transport).RoundTrip", "net/http/httputil.(*ReverseProxy).ServeHTTP"}, 20, parts[8].name},
		{[]string{"net/textproto.CanonicalMIMEHeaderKey", "net/http/httputil.removeHopByHopHeaders", "net/http/httputil.(*ReverseProxy).ServeHTTP", "net/http.(*conn).serve"}, 4, parts[9].name},
		// ReverseProxy writing the answer through the server's ResponseWriter.
		{[]string{"net/http.(*chunkWriter).writeHeader", "net/http.(*response).WriteHeader", "net/http/httputil.(*ReverseProxy).ServeHTTP", "net/http.(*conn).serve"}, 11, parts[10].name},
		{[]string{"runtime.nanotime", "time.Now"}, 0, "other"},
	}
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     1,
	}
	fns := map[string]*profile.Function{}
	want := map[string]float64{}
	var total float64
	for _, s := range stacks {
		var locs []*profile.Location
		for _, name := range s.stack {
			fn, ok := fns[name]
			if !ok {
				fn = &profile.Function{ID: uint64(len(fns) + 1), Name: name}
				fns[name] = fn
				p.Function = append(p.Function, fn)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: fn}}}
			p.Location = append(p.Location, loc)
			locs = append(locs, loc)
		}
		p.Sample = append(p.Sample, &profile.Sample{Location: locs, Value: []int64{1, s.value}})
		want[s.part] += float64(s.value)
		total += float64(s.value)
	}
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	got, err := breakdown(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(parts)+1 {
		t.Fatalf("%d parts, want %d", len(got), len(parts)+1)
	}
	for _, g := range got {
		if w := want[g.name] / total; g.share != w {
			t.Errorf("%s: share %.3f, want %.3f", g.name, g.share, w)
		}
	}
	if _, err := breakdown(filepath.Join(t.TempDir(), "absent")); err == nil {
		t.Error("a missing profile was read")
	}
}
