// Package stream pushes a changing state to pages as Server-Sent Events,
// bounded whatever the pages and whatever changes the state: at most
// MaxStreams streams at once (one more gets 503), one goroutine per open
// stream and one sampler for all of them, which runs only while a stream
// is open and looks at the state every Interval however often it changes;
// each stream holds at most one update, the latest, so a slow page skips
// states rather than piling them up. An idle stream gets a heartbeat, so
// that a page can tell a quiet state from a dead connection. Nothing is
// kept of a page once it has gone, and every stream ends when its client
// leaves or the hub closes. The live board (gateway/board) and the live
// page of a run of trials (showcase-trials -serve) stream through it, and
// serve their files under one policy (ServeFile) with its page-side
// script (Script: follow, in stream.js).
package stream

import (
	"bytes"
	"embed"
	"encoding/json"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/platform/respond"
)

// Defaults of the bounds.
const (
	// MaxStreams: a room's laptops and a projector, with room to spare.
	MaxStreams = 128
	// Interval: a change shows within it, and a page gets at most
	// 1/Interval updates a second.
	Interval = 250 * time.Millisecond
	// Heartbeat is how often an idle stream says it is alive.
	Heartbeat = 5 * time.Second
)

// Event is the name of the event that carries the state; a heartbeat is a
// "beat" event with the server's time.
const Event = "state"

// Options are a hub's bounds (zero: the defaults) and the words of its 503.
type Options struct {
	MaxStreams int
	Interval   time.Duration
	Heartbeat  time.Duration
	// Busy is the message of the 503 a stream beyond MaxStreams gets.
	Busy string
}

// A Sampler is one run of the sampler's view of the state: called every
// interval, it returns the state to send and the key it is compared by (a
// state is sent when its key changed: a clock in the state is left out of
// the key). A new one is made each time the sampler starts, so it may keep
// what it needs between calls (a rate's samples).
type Sampler func() (key, msg []byte)

// Marshal is a state as a Sampler returns it: the message, v as JSON,
// and its key, the same with the clock in it (clock, a field of v) at its
// zero, so that only a change of what the page shows is sent.
func Marshal(v any, clock *time.Time) (key, msg []byte) {
	at := *clock
	*clock = time.Time{}
	key, _ = json.Marshal(v)
	*clock = at
	msg, _ = json.Marshal(v)
	return key, msg
}

// Hub streams one state to its pages.
type Hub struct {
	now   func() []byte  // the state for a page that just opened
	start func() Sampler // a sampler for each run of it
	o     Options

	mu      sync.Mutex
	subs    map[chan []byte]struct{}
	stop    chan struct{} // closes the sampler; nil while none runs
	sampler sync.WaitGroup
	closed  bool
}

// New returns the hub of a state: now is it at once, for a page that just
// opened; start makes a sampler. It starts nothing until a page opens.
func New(now func() []byte, start func() Sampler, o Options) *Hub {
	if o.MaxStreams <= 0 {
		o.MaxStreams = MaxStreams
	}
	if o.Interval <= 0 {
		o.Interval = Interval
	}
	if o.Heartbeat <= 0 {
		o.Heartbeat = Heartbeat
	}
	if o.Busy == "" {
		o.Busy = "Service Unavailable: too many pages are open"
	}
	return &Hub{now: now, start: start, o: o, subs: map[chan []byte]struct{}{}}
}

// Close ends every open stream and the sampler.
func (h *Hub) Close() {
	h.mu.Lock()
	h.closed = true
	for c := range h.subs {
		delete(h.subs, c)
		close(c)
	}
	h.stopSampler()
	h.mu.Unlock()
	h.sampler.Wait()
}

// subscribe adds a page's channel, or says there is no room; the first
// page starts the sampler.
func (h *Hub) subscribe() (chan []byte, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed || len(h.subs) >= h.o.MaxStreams {
		return nil, false
	}
	c := make(chan []byte, 1)
	h.subs[c] = struct{}{}
	if h.stop == nil {
		h.stop = make(chan struct{})
		h.sampler.Add(1)
		go h.sample(h.stop)
	}
	return c, true
}

// unsubscribe forgets a page; the last one stops the sampler.
func (h *Hub) unsubscribe(c chan []byte) {
	h.mu.Lock()
	defer h.mu.Unlock()
	delete(h.subs, c)
	if len(h.subs) == 0 {
		h.stopSampler()
	}
}

func (h *Hub) stopSampler() {
	if h.stop != nil {
		close(h.stop)
		h.stop = nil
	}
}

// sample looks at the state every interval and, when it changed, gives it
// to every page: each holds at most one update, the latest.
func (h *Hub) sample(stop <-chan struct{}) {
	defer h.sampler.Done()
	tick := time.NewTicker(h.o.Interval)
	defer tick.Stop()
	next := h.start()
	var last []byte
	for {
		if key, msg := next(); !bytes.Equal(key, last) {
			last = key
			h.mu.Lock()
			for c := range h.subs {
				select {
				case <-c: // drop the update it has not taken
				default:
				}
				c <- msg
			}
			h.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

// ServeHTTP streams the state to a page: at once, then at each change (a
// "state" event), and a heartbeat (a "beat" event with the server's time)
// when nothing changed for a while. It ends when the page goes, or the hub
// closes (the server stopping).
func (h *Hub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c, ok := h.subscribe()
	if !ok {
		respond.Error(w, http.StatusServiceUnavailable, h.o.Busy)
		return
	}
	defer h.unsubscribe(c)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives a server's write timeout
	hd := w.Header()
	hd.Set("Content-Type", "text/event-stream")
	hd.Set("Cache-Control", "no-cache")
	hd.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	if !send(w, rc, "retry: 2000\nevent: "+Event+"\ndata: ", h.now()) {
		return
	}
	beat := time.NewTicker(h.o.Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case msg, open := <-c:
			if !open || !send(w, rc, "event: "+Event+"\ndata: ", msg) {
				return
			}
		case now := <-beat.C:
			if !send(w, rc, "event: beat\ndata: ", []byte(`"`+now.UTC().Format(time.RFC3339Nano)+`"`)) {
				return
			}
		}
	}
}

// Open is how many streams are open.
func (h *Hub) Open() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

func send(w io.Writer, rc *http.ResponseController, head string, data []byte) bool {
	if _, err := io.WriteString(w, head); err != nil {
		return false
	}
	if _, err := w.Write(data); err != nil {
		return false
	}
	if _, err := io.WriteString(w, "\n\n"); err != nil {
		return false
	}
	return rc.Flush() == nil
}

// ScriptName is the page-side script's file name among a page's files.
const ScriptName = "stream.js"

//go:embed files/stream.js
var files embed.FS

// Headers are a live page's: nothing but its own script, styles, images
// and stream (a Content Security Policy with no inline script), no
// frame, no referrer, nothing cached.
func Headers(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

// ServeFile serves a page's file from fsys (ScriptName from this
// package's own) with Headers and its type; a file it does not have is a
// JSON 404.
func ServeFile(w http.ResponseWriter, fsys fs.FS, name string) {
	var data []byte
	var err error
	if name == ScriptName {
		data, err = files.ReadFile("files/" + ScriptName)
	} else {
		data, err = fs.ReadFile(fsys, name)
	}
	if err != nil {
		respond.Error(w, http.StatusNotFound, "Not Found")
		return
	}
	Headers(w.Header())
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(data)
}
