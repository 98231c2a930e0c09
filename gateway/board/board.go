// Package board is the live board on the gateway's admin port: a page at /
// that shows the instance's ground truth as it changes (each endpoint's
// defect not reached, reached or triggered, its requests by status class,
// when and by which request it was first reached and triggered; the
// requests in all and their rate), pushed to the page by Server-Sent
// Events; a button that starts a new round (POST /defects/reset); and a
// report dropped on the page scored against this instance's own ground
// truth by the scorer showcase-score uses.
//
// The stream is bounded: at most MaxStreams pages at once (one more gets
// 503), one goroutine per open page and one that samples the state for
// all of them while any is open, a few times a second however hard a tool
// hammers the API; nothing is kept of a page once it has gone, and every
// stream ends when its client leaves or the server stops.
package board

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/platform/respond"
)

// Paths on the admin port.
const (
	PathBoard  = "/"
	PathAssets = "/board/"
	PathState  = "/board/state"
	PathEvents = "/board/events"
	PathScore  = "/board/score"
)

// Defaults of the board's bounds.
const (
	// MaxStreams bounds the pages open at once: a room's laptops and a
	// projector, with room to spare (the bench opens 100).
	MaxStreams = 128
	// Interval is how often the state is sampled while a page is open:
	// a change shows within it, and a page gets at most 1/Interval
	// updates a second.
	Interval = 250 * time.Millisecond
	// Heartbeat is how often an idle stream says it is alive, so that a
	// page can tell a quiet instance from a dead connection.
	Heartbeat = 5 * time.Second
	// MaxReport bounds a report posted for scoring; a larger one is
	// scored with showcase-score.
	MaxReport = 32 << 20
	// rateWindow is the span the request rate is measured over.
	rateWindow = 5 * time.Second
)

// Source is what the board shows.
type Source struct {
	// Truth is the instance's ground truth with its counts, as /defects
	// serves it.
	Truth func() catalogue.Truth
	// Mode says how the instance runs: "one process", or which categories
	// the gateway proxies.
	Mode    string
	Version string
}

// Board serves the page, its stream and the scoring of a report.
type Board struct {
	src        Source
	maxStreams int
	interval   time.Duration

	mu      sync.Mutex
	subs    map[chan []byte]struct{}
	stop    chan struct{} // closes the sampler; nil while none runs
	sampler sync.WaitGroup
	closed  bool
}

// Options change the board's bounds (zero: the defaults), for tests.
type Options struct {
	MaxStreams int
	Interval   time.Duration
}

// New returns the board of src; it starts nothing until a page opens.
func New(src Source, o Options) *Board {
	if o.MaxStreams <= 0 {
		o.MaxStreams = MaxStreams
	}
	if o.Interval <= 0 {
		o.Interval = Interval
	}
	return &Board{src: src, maxStreams: o.MaxStreams, interval: o.Interval, subs: map[chan []byte]struct{}{}}
}

// Handlers are the board's endpoints by ServeMux pattern, for the admin
// listener.
func (b *Board) Handlers() map[string]http.Handler {
	return map[string]http.Handler{
		http.MethodGet + " " + PathBoard + "{$}":     http.HandlerFunc(b.servePage),
		http.MethodGet + " " + PathAssets + "{file}": http.HandlerFunc(b.serveAsset),
		http.MethodGet + " " + PathState:             http.HandlerFunc(b.serveState),
		http.MethodGet + " " + PathEvents:            http.HandlerFunc(b.serveEvents),
		http.MethodPost + " " + PathScore:            http.HandlerFunc(b.serveScore),
	}
}

// Close ends every open stream and the sampler.
func (b *Board) Close() {
	b.mu.Lock()
	b.closed = true
	for c := range b.subs {
		delete(b.subs, c)
		close(c)
	}
	b.stopSampler()
	b.mu.Unlock()
	b.sampler.Wait()
}

// State is what a page shows: the ground truth with its counts, and
// around it the instance's version, mode and request rate.
type State struct {
	Version string          `json:"version"`
	Mode    string          `json:"mode"`
	Now     time.Time       `json:"now"`
	Rate    float64         `json:"rate"` // requests a second over the last few seconds
	Window  float64         `json:"rate_window_seconds"`
	Truth   catalogue.Truth `json:"truth"`
}

// sample is a count of requests at a time, for the rate.
type sample struct {
	at       time.Time
	requests uint64
}

// rater keeps the samples of the last rateWindow.
type rater struct{ samples []sample }

func (r *rater) add(now time.Time, requests uint64) (rate, window float64) {
	if n := len(r.samples); n > 0 && requests < r.samples[n-1].requests {
		r.samples = r.samples[:0] // a reset: the count starts again
	}
	r.samples = append(r.samples, sample{now, requests})
	for len(r.samples) > 1 && now.Sub(r.samples[0].at) > rateWindow {
		r.samples = r.samples[1:]
	}
	first := r.samples[0]
	if d := now.Sub(first.at).Seconds(); d > 0 {
		return float64(requests-first.requests) / d, d
	}
	return 0, 0
}

func (b *Board) state(r *rater) State {
	t := b.src.Truth()
	now := time.Now().UTC()
	s := State{Version: b.src.Version, Mode: b.src.Mode, Now: now, Truth: t}
	if r != nil && t.Requests != nil {
		s.Rate, s.Window = r.add(now, *t.Requests)
	}
	return s
}

// subscribe adds a page's channel, or says there is no room; the first
// page starts the sampler.
func (b *Board) subscribe() (chan []byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed || len(b.subs) >= b.maxStreams {
		return nil, false
	}
	c := make(chan []byte, 1)
	b.subs[c] = struct{}{}
	if b.stop == nil {
		b.stop = make(chan struct{})
		b.sampler.Add(1)
		go b.sample(b.stop)
	}
	return c, true
}

// unsubscribe forgets a page; the last one stops the sampler.
func (b *Board) unsubscribe(c chan []byte) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.subs, c)
	if len(b.subs) == 0 {
		b.stopSampler()
	}
}

func (b *Board) stopSampler() {
	if b.stop != nil {
		close(b.stop)
		b.stop = nil
	}
}

// sample looks at the state every interval and, when it changed, gives
// it to every page: each holds at most one update, the latest, so a slow
// page skips states rather than piling them up.
func (b *Board) sample(stop <-chan struct{}) {
	defer b.sampler.Done()
	tick := time.NewTicker(b.interval)
	defer tick.Stop()
	var r rater
	var last []byte
	for {
		s := b.state(&r)
		s.Now = time.Time{} // a change is a change of what the page shows, not of the clock
		key, _ := json.Marshal(s)
		if !bytes.Equal(key, last) {
			last = key
			s.Now = time.Now().UTC()
			msg, _ := json.Marshal(s)
			b.mu.Lock()
			for c := range b.subs {
				select {
				case <-c: // drop the update it has not taken
				default:
				}
				c <- msg
			}
			b.mu.Unlock()
		}
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
}

//go:embed files
var files embed.FS

func (b *Board) servePage(w http.ResponseWriter, r *http.Request) {
	b.serveFile(w, "index.html")
}

func (b *Board) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "index.html" || strings.ContainsAny(name, "/\\") {
		respond.Error(w, http.StatusNotFound, "Not Found")
		return
	}
	b.serveFile(w, name)
}

func (b *Board) serveFile(w http.ResponseWriter, name string) {
	data, err := files.ReadFile(path.Join("files", name))
	if err != nil {
		respond.Error(w, http.StatusNotFound, "Not Found")
		return
	}
	securityHeaders(w.Header())
	ct := mime.TypeByExtension(path.Ext(name))
	if ct == "" {
		ct = "application/octet-stream"
	}
	w.Header().Set("Content-Type", ct)
	_, _ = w.Write(data)
}

func (b *Board) serveState(w http.ResponseWriter, _ *http.Request) {
	respond.Value(w, http.StatusOK, b.state(nil))
}

// serveEvents streams the state to a page: at once, then at each change
// (an "state" event), and a heartbeat (a "beat" event with the server's
// time) when nothing changed for a while. It ends when the page goes, or
// the board closes (the server stopping).
func (b *Board) serveEvents(w http.ResponseWriter, r *http.Request) {
	c, ok := b.subscribe()
	if !ok {
		respond.Error(w, http.StatusServiceUnavailable, fmt.Sprintf("Service Unavailable: %d boards are open, the most this instance serves at once", b.maxStreams))
		return
	}
	defer b.unsubscribe(c)
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{}) // a stream outlives the admin port's write timeout
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	first, _ := json.Marshal(b.state(nil))
	if !send(w, rc, "retry: 2000\nevent: state\ndata: ", first) {
		return
	}
	beat := time.NewTicker(Heartbeat)
	defer beat.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case msg, open := <-c:
			if !open || !send(w, rc, "event: state\ndata: ", msg) {
				return
			}
		case now := <-beat.C:
			if !send(w, rc, "event: beat\ndata: ", []byte(`"`+now.UTC().Format(time.RFC3339Nano)+`"`)) {
				return
			}
		}
	}
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

// Scored is a report's scorecard as the board shows it: the scorer's own
// headline, notes and verdicts, and the whole scorecard.
type Scored struct {
	Headline  string          `json:"headline"`
	Notes     []string        `json:"notes"`
	Verdicts  []Verdict       `json:"verdicts"`
	Unplanted int             `json:"unplanted"`
	Scorecard score.Scorecard `json:"scorecard"`
}

// Verdict is one defect's verdict in the scorer's words.
type Verdict struct {
	ID       catalogue.ID `json:"id"`
	Category string       `json:"category"`
	Title    string       `json:"title"`
	Verdict  string       `json:"verdict"`
	Findings int          `json:"findings"`
}

// serveScore scores the report in the request's body (its file name in
// ?name=) against this instance's ground truth now, as showcase-score
// -exposure would: every format the scorer reads, gzipped or not. A report
// larger than MaxReport gets 413; one the scorer cannot read, 422 with the
// scorer's own words.
func (b *Board) serveScore(w http.ResponseWriter, r *http.Request) {
	name := path.Base(r.URL.Query().Get("name"))
	if name == "." || name == "/" {
		name = "report"
	}
	body := http.MaxBytesReader(w, r.Body, MaxReport)
	rep, err := score.Read(name, body, score.Options{})
	var tooLarge *http.MaxBytesError
	var ie *score.InputError
	switch {
	case errors.As(err, &tooLarge) || err != nil && strings.Contains(err.Error(), "request body too large"):
		respond.Error(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("Request Entity Too Large: the board scores a report of up to %d MiB; score a larger one with showcase-score", MaxReport>>20))
		return
	case errors.As(err, &ie):
		respond.Error(w, http.StatusUnprocessableEntity, ie.Error())
		return
	case err != nil:
		respond.Error(w, http.StatusUnprocessableEntity, name+": "+err.Error())
		return
	}
	raw, err := json.Marshal(b.src.Truth())
	if err != nil {
		respond.Error(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	inst, err := score.ParseExposure("the instance's /defects", raw)
	if err != nil {
		respond.Error(w, http.StatusInternalServerError, "Internal Server Error")
		return
	}
	sc := score.Score(rep, inst, nil)
	out := Scored{Headline: sc.Headline(), Notes: sc.Notes(), Unplanted: len(sc.Unplanted), Scorecard: sc}
	if out.Notes == nil {
		out.Notes = []string{}
	}
	for _, d := range sc.Defects {
		out.Verdicts = append(out.Verdicts, Verdict{ID: d.ID, Category: d.Category, Title: d.Title, Verdict: d.Verdict(), Findings: len(d.Findings)})
	}
	respond.Value(w, http.StatusOK, out)
}
