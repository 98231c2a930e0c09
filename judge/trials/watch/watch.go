// Package watch is the live page of a run of trials (showcase-trials
// -serve, or -watch for a run's folder written elsewhere or finished): per
// tool and defect, in how many of the trials ended so far the tool
// detected it and the median time to detect; each trial queued, running
// (its elapsed time and what its instance has seen) or ended with its
// outcome; the step chart and the critical-difference diagram redrawn as
// trials end; and, once the run has ended, its report.html. The state is
// pushed to the page by Server-Sent Events, bounded as the live board's
// (platform/stream), and exported at /metrics for Prometheus.
//
// It reads nothing but the run's folder: the progress the runner writes
// (trials.ProgressFile) and the records of the trials that have ended, so
// that a local run, a run on Kubernetes (its runner writes the same
// folder) and a run that ended long ago are watched alike.
package watch

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/stream"
)

// Paths of the page's server.
const (
	PathPage   = "/"
	PathAssets = "/live/"
	PathState  = "/state"
	PathEvents = "/events"
	PathChart  = "/chart.svg"
	PathCD     = "/cd.svg"
	// PathCoverageChart is the API coverage's growth, where the run
	// records coverage.
	PathCoverageChart = "/coverage.svg"
	PathReport        = "/report.html"
	PathMetrics       = "/metrics"
)

// Options are a watch's folder and bounds (zero: the live board's).
type Options struct {
	Dir        string // the run's folder
	Version    string // showcase-trials'
	MaxStreams int
	Interval   time.Duration
}

// Watch serves a run's page, its stream, its charts and its metrics.
type Watch struct {
	dir     string
	version string
	hub     *stream.Hub
	reg     *prometheus.Registry

	mu      sync.Mutex
	records map[string]cached // a trial's record by its folder, as last read
	// What was worked out from the ended trials last time, and their key
	// (each record's folder, time and size): the summary and the charts
	// are worked out again only when a trial has ended since.
	key  string
	sum  trials.Summary
	step []byte
	cd   []byte
	cov  []byte
}

// cached is a trial's record as read, with what its file was then.
type cached struct {
	mod   time.Time
	size  int64
	trial trials.Trial
}

// New returns the watch of a run's folder; it starts nothing until a page
// opens or Prometheus scrapes.
func New(o Options) *Watch {
	w := &Watch{dir: o.Dir, version: o.Version, records: map[string]cached{}}
	now := func() []byte {
		b, _ := json.Marshal(w.State())
		return b
	}
	start := func() stream.Sampler {
		return func() (key, msg []byte) {
			s := w.State()
			return stream.Marshal(&s, &s.Now) // a change is a change of the run, not of the clock
		}
	}
	maxStreams := o.MaxStreams
	if maxStreams <= 0 {
		maxStreams = stream.MaxStreams
	}
	w.hub = stream.New(now, start, stream.Options{MaxStreams: maxStreams, Interval: o.Interval,
		Busy: fmt.Sprintf("Service Unavailable: %d pages are open, the most this run's page serves at once", maxStreams)})
	w.reg = prometheus.NewRegistry()
	w.reg.MustRegister(collector{w})
	return w
}

// Close ends every open stream.
func (w *Watch) Close() { w.hub.Close() }

// Handler serves the page and what it reads, every path on GET; any
// other path is 404 and any other method 405, each as a JSON error.
func (w *Watch) Handler() http.Handler {
	mux := http.NewServeMux()
	get := func(p string, h http.HandlerFunc) { mux.Handle(http.MethodGet+" "+p, h) }
	get(PathPage+"{$}", func(rw http.ResponseWriter, _ *http.Request) { stream.ServeFile(rw, files, "index.html") })
	get(PathAssets+"{file}", func(rw http.ResponseWriter, r *http.Request) {
		name := r.PathValue("file")
		if name == "index.html" || strings.ContainsAny(name, `/\`) {
			respond.Error(rw, http.StatusNotFound, "Not Found")
			return
		}
		stream.ServeFile(rw, files, name)
	})
	get(PathState, func(rw http.ResponseWriter, _ *http.Request) { respond.Value(rw, http.StatusOK, w.State()) })
	mux.Handle(http.MethodGet+" "+PathEvents, w.hub)
	const noChart = "no chart yet (no trial has ended)"
	get(PathChart, func(rw http.ResponseWriter, _ *http.Request) {
		w.serveChart(rw, func(w *Watch) []byte { return w.step }, noChart)
	})
	get(PathCD, func(rw http.ResponseWriter, _ *http.Request) {
		w.serveChart(rw, func(w *Watch) []byte { return w.cd }, noChart)
	})
	get(PathCoverageChart, func(rw http.ResponseWriter, _ *http.Request) {
		w.serveChart(rw, func(w *Watch) []byte { return w.cov }, "no coverage chart (no trial with coverage has ended)")
	})
	get(PathReport, w.serveReport)
	mux.Handle(http.MethodGet+" "+PathMetrics, promhttp.HandlerFor(w.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("/", func(rw http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		switch p {
		case PathPage, PathState, PathEvents, PathChart, PathCD, PathCoverageChart, PathReport, PathMetrics:
			rw.Header().Set("Allow", "GET, HEAD")
			respond.Error(rw, http.StatusMethodNotAllowed, "Method Not Allowed: this page only reads")
			return
		}
		respond.Error(rw, http.StatusNotFound, "Not Found")
	})
	return mux
}

// State is what the page shows of the run.
type State struct {
	Version string     `json:"version"` // showcase-trials'
	Folder  string     `json:"folder"`  // the run's folder, as given
	Where   string     `json:"where"`   // local, kube, or "" when the run kept no progress
	Run     string     `json:"run,omitempty"`
	Now     time.Time  `json:"now"`
	Start   *time.Time `json:"start,omitempty"`
	End     *time.Time `json:"end,omitempty"`
	// Ended is whether the run has ended (every trial has, or the run was
	// interrupted); Report whether its report.html is written.
	Ended  bool `json:"ended"`
	Report bool `json:"report"`
	// Counts are the trials by state, every state present.
	Counts  map[string]int `json:"counts"`
	Tools   []Tool         `json:"tools"`
	Defects []Defect       `json:"defects"`
	Trials  []Trial        `json:"trials"`
	// Charts changes when the charts do ("" while no trial has ended);
	// Step is whether there is the step chart of the ten (a run of mutant
	// sets alone has none); CD whether there is a critical-difference
	// diagram.
	Charts string `json:"charts"`
	Step   bool   `json:"step"`
	CD     bool   `json:"cd"`
	// Coverage: the API coverage's growth is drawn (coverage.svg).
	Coverage bool `json:"coverage"`
	// Mutation is each tool's mutation score so far, over its ended
	// trials of mutant sets, with its survivors in the three groups as
	// they fill; empty when none has ended. Ten is whether the run plants
	// the ten: without, the grid of the ten's tiles is left out.
	Mutation []Mutation `json:"mutation"`
	Ten      bool       `json:"ten"`
	// Problem is what could not be read of the folder, if anything.
	Problem string `json:"problem,omitempty"`
}

// Tool is one tool so far: its trials by state, and a tile per defect.
type Tool struct {
	Tool   string         `json:"tool"`
	Trials int            `json:"trials"` // planned
	Ran    int            `json:"ran"`    // ended, and ran: the n of "k of n"
	Budget float64        `json:"budget_seconds"`
	Counts map[string]int `json:"counts"`
	Tiles  []Tile         `json:"tiles"` // a defect each, in the catalogue's order
	// Coverage is its API coverage over the trials ended so far, in
	// words: the median targets covered and TCL; "" where none recorded.
	Coverage string `json:"coverage"`
}

// Tile is one tool and one defect over the trials ended so far.
type Tile struct {
	ID        catalogue.ID `json:"id"`
	Detected  int          `json:"detected"` // the k of "k of n"
	Of        int          `json:"of"`
	Triggered int          `json:"triggered"`
	Spurious  int          `json:"spurious"` // its spurious findings over those trials
	Median    string       `json:"median"`   // the median time to detect, as report.html says it
	Text      string       `json:"text"`     // "k/n · median", as report.html's table says it
}

// Mutation is one tool's mutation score over its ended trials of mutant
// sets, in report.md's words, and its survivors by group.
type Mutation struct {
	Tool         string `json:"tool"`
	Trials       int    `json:"trials"`
	Detected     int    `json:"detected"`
	Planted      int    `json:"planted"`
	Score        string `json:"score"` // "17/20 = 85 % (64–95 %)"
	NotReached   int    `json:"not_reached"`
	NotTriggered int    `json:"reached_never_triggered"`
	NotReported  int    `json:"triggered_not_reported"`
}

// Defect is a defect as the page names it.
type Defect struct {
	ID       catalogue.ID `json:"id"`
	Title    string       `json:"title"`
	Category string       `json:"category"`
}

// Trial is one trial as it goes.
type Trial struct {
	trials.TrialProgress
	// Elapsed is how long it has run, at Now (running) or in all (ended).
	Elapsed float64 `json:"elapsed_seconds"`
}

// State reads the run's folder.
func (w *Watch) State() State {
	s := State{Version: w.version, Folder: w.dir, Now: time.Now().UTC(), Counts: zeroCounts(), Tools: []Tool{}, Trials: []Trial{}, Mutation: []Mutation{}}
	for _, d := range catalogue.Defects {
		s.Defects = append(s.Defects, Defect{ID: d.ID, Title: d.Title, Category: catalogue.EndpointOf(d.ID).Category})
	}
	prog, err := trials.ReadProgress(w.dir)
	if err != nil {
		s.Problem = err.Error()
	}
	var ps []trials.TrialProgress
	if prog != nil {
		s.Where, s.Run, s.End = prog.Where, prog.Run, prog.End
		start := prog.Start
		s.Start = &start
		ps = prog.Trials
	} else if ps, err = w.fromRecords(); err != nil && s.Problem == "" {
		s.Problem = err.Error()
	}
	var ended []trials.Trial
	key := sha256.New()
	for _, p := range ps {
		if p.State == trials.StateEnded || p.State == trials.StateNotRun {
			if c, ok := w.record(p.Dir); ok {
				ended = append(ended, c.trial)
				p = trials.ProgressOf(c.trial)
				fmt.Fprintf(key, "%s %d %d\n", p.Dir, c.mod.UnixNano(), c.size)
			}
		}
		s.Ten = s.Ten || !trials.IsMutantSetting(p.Defects)
		tr := Trial{TrialProgress: p}
		switch {
		case p.State == trials.StateRunning && p.Start != nil:
			tr.Elapsed = s.Now.Sub(*p.Start).Seconds()
		case p.State == trials.StateEnded:
			tr.Elapsed = p.Seconds
		}
		s.Trials = append(s.Trials, tr)
		s.Counts[p.State]++
	}
	s.Ended = prog == nil && len(ps) > 0 || s.End != nil
	if _, err := os.Stat(filepath.Join(w.dir, trials.ReportHTML)); err == nil && s.Ended {
		s.Report = true
	}
	sum, charts, cd := w.summarize(hex.EncodeToString(key.Sum(nil))[:16], ended)
	s.Charts, s.CD = charts, cd
	w.mu.Lock()
	s.Coverage = charts != "" && len(w.cov) > 0
	s.Step = charts != "" && len(w.step) > 0
	w.mu.Unlock()
	byTool := map[string]trials.ToolSummary{}
	for _, t := range sum.Tools {
		byTool[t.Tool] = t
	}
	index := map[string]int{}
	for _, tr := range s.Trials {
		i, ok := index[tr.Tool]
		if !ok {
			i = len(s.Tools)
			index[tr.Tool] = i
			s.Tools = append(s.Tools, Tool{Tool: tr.Tool, Counts: zeroCounts(), Budget: tr.Budget})
		}
		s.Tools[i].Trials++
		s.Tools[i].Counts[tr.State]++
	}
	if m := sum.Mutation; m != nil {
		for _, t := range m.Tools {
			sv := t.Total()
			s.Mutation = append(s.Mutation, Mutation{Tool: t.Tool, Trials: t.Trials, Detected: t.Score.Detected, Planted: t.Score.Planted, Score: t.Score.Text(),
				NotReached: sv.NotReached, NotTriggered: sv.NotTriggered, NotReported: sv.NotReported})
		}
	}
	for i := range s.Tools {
		if !s.Ten {
			continue // no tiles of the ten in a run that plants none
		}
		ts := byTool[s.Tools[i].Tool] // none of its trials ended: Trials 0
		s.Tools[i].Ran = ts.Trials
		for j, d := range catalogue.Defects {
			tile := Tile{ID: d.ID, Median: "—"}
			if ts.Trials > 0 {
				ds := ts.Defects[j]
				tile.Detected, tile.Of, tile.Triggered, tile.Median = ds.Detected, ts.Trials, ds.Triggered, ds.MedianToDetect()
				tile.Spurious = ds.Spurious
			}
			tile.Text = ts.DetectedText(j)
			s.Tools[i].Tiles = append(s.Tools[i].Tiles, tile)
		}
		s.Tools[i].Coverage = ts.CoverageText()
	}
	return s
}

func zeroCounts() map[string]int {
	m := map[string]int{}
	for _, st := range trials.States {
		m[st] = 0
	}
	return m
}

// fromRecords is the progress of a run that kept none (made before runs
// kept theirs): every trial with a record has ended.
func (w *Watch) fromRecords() ([]trials.TrialProgress, error) {
	files, err := filepath.Glob(filepath.Join(w.dir, "*", "trial-*", trials.RecordFile))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errors.New(w.dir + ": no progress (" + trials.ProgressFile + ") and no trial records yet")
	}
	sort.Strings(files)
	var ps []trials.TrialProgress
	for _, f := range files {
		dir, _ := filepath.Rel(w.dir, filepath.Dir(f))
		if c, ok := w.record(dir); ok {
			ps = append(ps, trials.ProgressOf(c.trial))
		}
	}
	return ps, nil
}

// record is a trial's record, read again only when its file changed.
func (w *Watch) record(dir string) (cached, bool) {
	f := filepath.Join(w.dir, dir, trials.RecordFile)
	fi, err := os.Stat(f)
	if err != nil {
		return cached{}, false
	}
	w.mu.Lock()
	c, ok := w.records[dir]
	w.mu.Unlock()
	if ok && c.mod.Equal(fi.ModTime()) && c.size == fi.Size() {
		return c, true
	}
	raw, err := os.ReadFile(f)
	if err != nil {
		return cached{}, false
	}
	var t trials.Trial
	if json.Unmarshal(raw, &t) != nil {
		return cached{}, false // half written: the next look reads it whole
	}
	t.Dir = dir
	c = cached{mod: fi.ModTime(), size: fi.Size(), trial: t}
	w.mu.Lock()
	w.records[dir] = c
	w.mu.Unlock()
	return c, true
}

// summarize is the summary of the ended trials and their charts' key
// ("" while none of them ran), worked out again, and the charts drawn
// again, only when key (the ended trials' records) changed.
func (w *Watch) summarize(key string, ended []trials.Trial) (sum trials.Summary, charts string, cd bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if key != w.key {
		w.key, w.sum, w.step, w.cd, w.cov = key, trials.Summarize(ended, 0), nil, nil, nil
		// The step chart is the ten's; a run of mutant sets alone has
		// none (its score is the page's table), its coverage still has one.
		tenRan := slices.ContainsFunc(ended, func(t trials.Trial) bool { return t.Ran() && !t.Mutants() })
		if tenRan {
			if step, cd, err := w.sum.Figures(); err == nil {
				w.step, w.cd = []byte(step), []byte(cd)
			}
		}
		if slices.ContainsFunc(ended, trials.Trial.Ran) {
			if cov, err := w.sum.CoverageFigure(); err == nil {
				w.cov = []byte(cov)
			}
		}
	}
	if len(w.step) == 0 && len(w.cov) == 0 {
		return w.sum, "", false
	}
	return w.sum, w.key, len(w.cd) > 0
}

// serveChart serves one of the charts, chosen under the lock by pick.
func (w *Watch) serveChart(rw http.ResponseWriter, pick func(*Watch) []byte, none string) {
	w.State() // the charts of the folder as it is now, drawn if they were not
	w.mu.Lock()
	b := pick(w)
	w.mu.Unlock()
	if len(b) == 0 {
		respond.Error(rw, http.StatusNotFound, "Not Found: "+none)
		return
	}
	stream.Headers(rw.Header())
	rw.Header().Set("Content-Type", "image/svg+xml")
	_, _ = rw.Write(b)
}

// serveReport serves the run's report.html once the run has written it,
// with the page's own policy (inline styles, data: images, no script).
func (w *Watch) serveReport(rw http.ResponseWriter, _ *http.Request) {
	b, err := os.ReadFile(filepath.Join(w.dir, trials.ReportHTML))
	if err != nil {
		respond.Error(rw, http.StatusNotFound, "Not Found: the run's report.html is written when the run ends")
		return
	}
	stream.Headers(rw.Header())
	rw.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, _ = rw.Write(b)
}

//go:embed files
var embedded embed.FS

// files are the page's own: index.html, watch.js, watch.css.
var files, _ = fs.Sub(embedded, "files")
