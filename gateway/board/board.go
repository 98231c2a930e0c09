// Package board is the live board on the gateway's admin port: a page at /
// that shows the instance's ground truth as it changes (each endpoint's
// defect not reached, reached or triggered, its requests by status class,
// when and by which request it was first reached and triggered; the
// requests in all and their rate), pushed to the page by Server-Sent
// Events; a button that starts a new round (POST /defects/reset); and a
// report dropped on the page scored against this instance's own ground
// truth by the scorer showcase-score uses. Where the instance knows its
// deployment's replicas (PEERS), the page at /?scope=deployment does all
// of this for the whole deployment, merged.
//
// The stream is bounded as platform/stream bounds it: at most MaxStreams
// pages of each scope at once (one more gets 503), one goroutine per open
// page and one per scope that samples the state for all of them while any
// is open, a few times a
// second however hard a tool hammers the API; nothing is kept of a page
// once it has gone, and every stream ends when its client leaves or the
// server stops.
package board

import (
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/stream"
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
	MaxStreams = stream.MaxStreams
	// Interval is how often the state is sampled while a page is open:
	// a change shows within it, and a page gets at most 1/Interval
	// updates a second.
	Interval = stream.Interval
	// Heartbeat is how often an idle stream says it is alive, so that a
	// page can tell a quiet instance from a dead connection.
	Heartbeat = stream.Heartbeat
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
	// Deployment, where the instance knows its deployment's replicas, is
	// their ground truth merged, as /defects?scope=deployment serves it:
	// the page at /?scope=deployment shows it, or why it failed.
	Deployment func(ctx context.Context) (catalogue.Truth, error)
	// Mode says how the instance runs: "one process", or which categories
	// the gateway proxies.
	Mode    string
	Version string
}

// ScopeDeployment is the query's scope of a board that shows the whole
// deployment.
const ScopeDeployment = "deployment"

// deploymentTimeout bounds one sample of the deployment's ground truth.
const deploymentTimeout = 10 * time.Second

// Board serves the page, its stream and the scoring of a report.
type Board struct {
	src Source
	hub *stream.Hub // the instance's
	// dep streams the deployment's, where src has it: a page of each
	// scope is sampled apart.
	dep *stream.Hub
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
	b := &Board{src: src}
	b.hub = b.newHub(false, o)
	if src.Deployment != nil {
		b.dep = b.newHub(true, o)
	}
	return b
}

// newHub streams the state of the instance or of the deployment.
func (b *Board) newHub(deployment bool, o Options) *stream.Hub {
	now := func() []byte {
		msg, _ := json.Marshal(b.state(nil, deployment))
		return msg
	}
	// A sampler's rate is measured over its own samples.
	start := func() stream.Sampler {
		var r rater
		return func() (key, msg []byte) {
			s := b.state(&r, deployment)
			return stream.Marshal(&s, &s.Now) // a change is a change of what the page shows, not of the clock
		}
	}
	return stream.New(now, start, stream.Options{MaxStreams: o.MaxStreams, Interval: o.Interval, Heartbeat: Heartbeat,
		Busy: fmt.Sprintf("Service Unavailable: %d boards are open, the most this instance serves at once", o.MaxStreams)})
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

// Close ends every open stream and the samplers.
func (b *Board) Close() {
	b.hub.Close()
	if b.dep != nil {
		b.dep.Close()
	}
}

// deployment reports whether r asks for the deployment's board
// (?scope=deployment), or fails it with the reason.
func (b *Board) deployment(w http.ResponseWriter, r *http.Request) (deployment, ok bool) {
	switch scope := r.URL.Query().Get("scope"); scope {
	case "", "instance":
		return false, true
	case ScopeDeployment:
		if b.dep == nil {
			respond.Error(w, http.StatusBadRequest, "scope=deployment: this instance does not know its deployment's replicas (PEERS)")
			return false, false
		}
		return true, true
	default:
		respond.Error(w, http.StatusBadRequest, fmt.Sprintf("scope=%q: want instance (the default) or deployment", scope))
		return false, false
	}
}

func (b *Board) serveEvents(w http.ResponseWriter, r *http.Request) {
	dep, ok := b.deployment(w, r)
	switch {
	case !ok:
	case dep:
		b.dep.ServeHTTP(w, r)
	default:
		b.hub.ServeHTTP(w, r)
	}
}

// State is what a page shows: the ground truth with its counts, and
// around it the instance's version, mode and request rate.
type State struct {
	Version string `json:"version"`
	Mode    string `json:"mode"`
	// Scope is "instance", or "deployment" for every replica's counts
	// merged; Error, why the deployment's could not be counted (Truth is
	// then empty, and the page says so instead of a part for the whole).
	Scope  string          `json:"scope"`
	Error  string          `json:"error,omitempty"`
	Now    time.Time       `json:"now"`
	Rate   float64         `json:"rate"` // requests a second over the last few seconds
	Window float64         `json:"rate_window_seconds"`
	Truth  catalogue.Truth `json:"truth"`
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

func (b *Board) state(r *rater, deployment bool) State {
	now := time.Now().UTC()
	s := State{Version: b.src.Version, Mode: b.src.Mode, Scope: "instance", Now: now}
	t, err := b.truth(deployment)
	if deployment {
		s.Scope = ScopeDeployment
		s.Mode = "a deployment whose replicas did not all answer"
		if err == nil {
			s.Mode = fmt.Sprintf("a deployment of %d replicas: %s", len(t.Replicas), strings.Join(t.Replicas, ", "))
		}
	}
	if err != nil {
		s.Error = err.Error()
		return s
	}
	s.Truth = t
	if r != nil && t.Requests != nil {
		s.Rate, s.Window = r.add(now, *t.Requests)
	}
	return s
}

//go:embed files
var embedded embed.FS

// files are the page's own: index.html, board.js, board.css.
var files, _ = fs.Sub(embedded, "files")

func (b *Board) servePage(w http.ResponseWriter, r *http.Request) {
	stream.ServeFile(w, files, "index.html")
}

func (b *Board) serveAsset(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	if name == "index.html" || strings.ContainsAny(name, "/\\") {
		respond.Error(w, http.StatusNotFound, "Not Found")
		return
	}
	stream.ServeFile(w, files, name)
}

// truth is the instance's ground truth, or the deployment's.
func (b *Board) truth(deployment bool) (catalogue.Truth, error) {
	if !deployment {
		return b.src.Truth(), nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), deploymentTimeout)
	defer cancel()
	return b.src.Deployment(ctx)
}

func (b *Board) serveState(w http.ResponseWriter, r *http.Request) {
	if dep, ok := b.deployment(w, r); ok {
		respond.Value(w, http.StatusOK, b.state(nil, dep))
	}
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
// ?name=) against this instance's ground truth now (its deployment's, with
// scope=deployment), as showcase-score -exposure would: every format the
// scorer reads, gzipped or not. A report larger than MaxReport gets 413;
// one the scorer cannot read, 422 with the scorer's own words; with a
// replica that did not answer, 502 naming it.
func (b *Board) serveScore(w http.ResponseWriter, r *http.Request) {
	dep, ok := b.deployment(w, r)
	if !ok {
		return
	}
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
	truth, err := b.truth(dep)
	if err != nil {
		respond.Error(w, http.StatusBadGateway, err.Error())
		return
	}
	raw, err := json.Marshal(truth)
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
