package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/google/pprof/profile"
)

// part is a share of a CPU profile: one kind of work a proxy does.
type part struct {
	name  string
	share float64 // of all samples
}

// parts name the kinds of work, each by a test on a sample's stack (leaf
// first), in the order they are tried: the first that matches takes the
// sample. The request log comes first, its write included (it is what
// LOG_REQUESTS switches); then system calls, whoever makes them; then the
// runtime's own work; then the code that asked for the rest.
var parts = []struct {
	name  string
	match func(stack []string) bool
}{
	{"the request log line (slog, its write included)", func(s []string) bool {
		for _, f := range s {
			if strings.HasPrefix(f, "log/slog.") {
				return true
			}
		}
		return false
	}},
	{"write system calls (the answer to the client, the request to the upstream; on loopback the sender also pays the receiver's TCP work)", leafUnder("syscall.write")},
	{"read system calls", leafUnder("syscall.read")},
	{"other system calls (epoll, futex, nanosleep: waiting and waking)", func(s []string) bool {
		return has(s, "internal/runtime/syscall/linux.Syscall6") || has(s, "runtime.futex") || has(s, "runtime.usleep") || has(s, "runtime.netpoll") || has(s, "runtime.epollwait")
	}},
	{"garbage collection", func(s []string) bool {
		return has(s, "runtime.gcBgMarkWorker") || has(s, "runtime.gcAssistAlloc") || has(s, "runtime.bgsweep") || has(s, "runtime.bgscavenge")
	}},
	{"allocation", func(s []string) bool { return has(s, "runtime.mallocgc") }},
	{"the scheduler (finding, switching and starting goroutines)", func(s []string) bool {
		return has(s, "runtime.schedule") || has(s, "runtime.mcall") || has(s, "runtime.newproc") || has(s, "runtime.goexit0")
	}},
	{"our code (routing, request ID, deadline, metrics, exposure)", owner("github.com/defectshowcase/")},
	{"net/http's client (Transport: connection pool, writing the request, reading the answer)", owner("net/http.(*Transport).", "net/http.(*persistConn)", "net/http.persistConnWriter")},
	{"httputil.ReverseProxy (copying the request, headers both ways, copying the body)", owner("net/http/httputil.")},
	{"net/http's server (reading the request, writing the answer)", owner("net/http.(*conn)", "net/http.(*response)", "net/http.(*chunkWriter)", "net/http.(*connReader)", "net/http.checkConnErrorWriter")},
}

// owners are the frames that own a sample: the one nearest its leaf
// decides (ReverseProxy writing the answer through the server's
// ResponseWriter is the server's work; our ModifyResponse called by
// ReverseProxy is ours).
var owners = []string{"github.com/defectshowcase/", "net/http.(*Transport).", "net/http.(*persistConn)", "net/http.persistConnWriter",
	"net/http/httputil.", "net/http.(*conn)", "net/http.(*response)", "net/http.(*chunkWriter)", "net/http.(*connReader)", "net/http.checkConnErrorWriter"}

// owner matches a stack whose nearest owning frame has one of prefixes.
func owner(prefixes ...string) func([]string) bool {
	return func(s []string) bool {
		for _, f := range s {
			for _, o := range owners {
				if strings.HasPrefix(f, o) {
					for _, p := range prefixes {
						if strings.HasPrefix(f, p) {
							return true
						}
					}
					return false
				}
			}
		}
		return false
	}
}

func has(stack []string, fn string) bool {
	for _, f := range stack {
		if f == fn {
			return true
		}
	}
	return false
}

// leafUnder matches a stack whose leaf is a system call made under fn.
func leafUnder(fn string) func([]string) bool {
	return func(s []string) bool {
		return strings.Contains(s[0], "Syscall") && has(s, fn)
	}
}

// breakdown reads a CPU profile and returns its samples' shares by part,
// with what matched none as "other".
func breakdown(path string) ([]part, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		return nil, err
	}
	idx := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" {
			idx = i
		}
	}
	if idx < 0 {
		return nil, fmt.Errorf("%s: not a CPU profile", path)
	}
	sums := make([]float64, len(parts)+1)
	var total float64
	for _, s := range p.Sample {
		var stack []string
		for _, loc := range s.Location {
			for _, l := range loc.Line { // inlined calls first, as in the stack
				stack = append(stack, l.Function.Name)
			}
		}
		if len(stack) == 0 {
			continue
		}
		v := float64(s.Value[idx])
		total += v
		k := len(parts)
		for i, pt := range parts {
			if pt.match(stack) {
				k = i
				break
			}
		}
		sums[k] += v
	}
	if total == 0 {
		return nil, fmt.Errorf("%s: no samples", path)
	}
	var out []part
	for i, v := range sums {
		name := "other"
		if i < len(parts) {
			name = parts[i].name
		}
		out = append(out, part{name, v / total})
	}
	return out, nil
}
