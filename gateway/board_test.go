package gateway_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/board"
	"github.com/defectshowcase/showcase/judge/score"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// instance is a gateway with its admin port, one process or split.
type instance struct {
	api, admin *httptest.Server
	built      server.Built
}

func startInstance(t testing.TB, split bool) instance {
	t.Helper()
	env := map[string]string{}
	if split {
		sp := startSplit(t.(*testing.T))
		for _, c := range catalogue.Categories {
			env[c.Upstream] = sp.upstreams[c.Name].URL
		}
	}
	built, admin := buildWithAdmin(t, env)
	in := instance{api: httptest.NewServer(built.Handler), admin: httptest.NewServer(admin), built: built}
	t.Cleanup(func() { in.api.Close(); in.admin.Close(); _ = built.Close() })
	return in
}

// buildWithAdmin builds the gateway program with env and the admin
// listener's handler that serves it, as a process does.
func buildWithAdmin(t testing.TB, env map[string]string) (server.Built, *server.Admin) {
	t.Helper()
	reg := prometheus.NewRegistry()
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, &observe.Telemetry{Registry: reg, Writer: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	admin := server.NewAdmin(reg, built.Ready, observe.Discard().Service("t").Logger, false)
	for p, h := range built.Admin {
		admin.Handle(p, h)
	}
	return built, admin
}

// events reads a board's stream: each event's name and data, as it comes.
func events(t testing.TB, url string) (<-chan [2]string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%s: %s %s", url, res.Status, res.Header.Get("Content-Type"))
	}
	out := make(chan [2]string, 1024)
	go func() {
		defer close(out)
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var name string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "event: "):
				name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				out <- [2]string{name, strings.TrimPrefix(line, "data: ")}
			}
		}
	}()
	return out, cancel
}

// stateOf waits for a state event in which the defect's tile says want.
func stateOf(t *testing.T, ev <-chan [2]string, id catalogue.ID, want string, within time.Duration) board.State {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case e, ok := <-ev:
			if !ok {
				t.Fatalf("the stream ended waiting for %s %s", id, want)
			}
			if e[0] != "state" {
				continue
			}
			var s board.State
			if err := json.Unmarshal([]byte(e[1]), &s); err != nil {
				t.Fatal(err)
			}
			for _, d := range s.Truth.Defects {
				if d.ID == id && tileState(d) == want {
					return s
				}
			}
		case <-deadline:
			t.Fatalf("%s never %s within %s", id, want, within)
		}
	}
}

// tileState is what a tile says, as the page decides it.
func tileState(d catalogue.TruthEntry) string {
	switch {
	case d.Exposure != nil && d.Exposure.Count > 0:
		return "triggered"
	case d.Reached != nil && d.Reached.Count > 0:
		return "reached"
	}
	return "not reached"
}

// The board's stream, one process and split alike: the state at once, a
// tile from not reached to triggered within a second of the trigger, the
// reset clearing it; under a flood, a few updates a second, not one per
// request; the page, its assets and the security headers.
func TestBoardLive(t *testing.T) {
	t.Parallel()
	for _, split := range []bool{false, true} {
		in := startInstance(t, split)
		ev, stop := events(t, in.admin.URL+board.PathEvents)
		s := stateOf(t, ev, catalogue.SEC01, "not reached", 2*time.Second)
		if want := map[bool]string{false: "one process", true: "split: the gateway proxies security, errors, conformance, performance"}[split]; s.Mode != want || s.Version == "" {
			t.Errorf("mode %q, version %q; want %q", s.Mode, s.Version, want)
		}
		res, err := http.Get(in.api.URL + "/security/unauthenticated-access")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		s = stateOf(t, ev, catalogue.SEC01, "triggered", 5*time.Second)
		// From the trigger (the server's stamp, this machine's clock) to
		// the page having it.
		if d := time.Since(*s.Truth.Defects[0].Exposure.First); d > time.Second {
			t.Errorf("split %v: the tile turned %s after the trigger", split, d)
		} else {
			t.Logf("split %v: the tile turned %s after the trigger", split, d.Round(time.Millisecond))
		}
		if *s.Truth.Requests != 1 {
			t.Errorf("requests %d", *s.Truth.Requests)
		}
		// A flood: 400 requests as fast as they go; the page gets the
		// states at most every Interval, not one per request.
		flood := time.Now()
		for range 400 {
			res, err := http.Get(in.api.URL + "/response-conformance/missing-field")
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
		}
		took := time.Since(flood)
		stateOf(t, ev, catalogue.CONF03, "triggered", 2*time.Second) // missing-field's
		n := 1
		for drained := false; !drained; {
			select {
			case e := <-ev:
				if e[0] == "state" {
					n++
				}
			default:
				drained = true
			}
		}
		if limit := int(took/board.Interval) + 3; n > limit {
			t.Errorf("%d updates for 400 requests in %s: not coalesced (at most %d)", n, took, limit)
		}
		req, _ := http.NewRequest(http.MethodPost, in.admin.URL+gateway.PathDefectsReset, nil)
		if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != 200 {
			t.Fatalf("reset: %v %v", err, res)
		}
		stateOf(t, ev, catalogue.SEC01, "not reached", 2*time.Second)
		stop()
	}
	in := startInstance(t, false)
	res, err := http.Get(in.admin.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") || !strings.Contains(res.Header.Get("Content-Security-Policy"), "default-src 'none'") ||
		!bytes.Contains(page, []byte(`src="board/board.js"`)) || bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) {
		t.Errorf("the page: %s %q", res.Status, res.Header)
	}
	for path, want := range map[string]int{"/board/board.js": 200, "/board/board.css": 200, "/board/stream.js": 200, "/board/index.html": 404, "/board/nope.js": 404, "/nope": 404} {
		res, err := http.Get(in.admin.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, res.StatusCode, want)
		}
	}
	req, _ := http.NewRequest(http.MethodPost, in.admin.URL+"/", nil)
	if res, err := http.DefaultClient.Do(req); err != nil || res.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %v %v", err, res)
	}
}

// The stream is bounded: one page more than MaxStreams gets 503; a page
// that goes leaves nothing behind (no goroutine, no subscriber), nor does
// the server stopping with pages open.
func TestBoardBounded(t *testing.T) {
	before := runtime.NumGoroutine()
	b := board.New(board.Source{Truth: func() catalogue.Truth { return catalogue.GroundTruth(catalogue.All()) }, Mode: "test", Version: "test"}, board.Options{MaxStreams: 3, Interval: 10 * time.Millisecond})
	mux := http.NewServeMux()
	for p, h := range b.Handlers() {
		mux.Handle(p, h)
	}
	srv := httptest.NewServer(mux)
	var stops []func()
	for range 3 {
		ev, stop := events(t, srv.URL+board.PathEvents)
		<-ev
		stops = append(stops, stop)
	}
	res, err := http.Get(srv.URL + board.PathEvents)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusServiceUnavailable || res.Header.Get("Content-Type") != "application/json" {
		t.Errorf("a fourth page: %s %s", res.Status, res.Header.Get("Content-Type"))
	}
	for _, stop := range stops[:2] {
		stop()
	}
	// Room again once pages have gone: the hub frees a page's place when
	// its stream's handler has seen the page go, a moment after the page
	// went, so a 503 until then is asked again, not a failure (a fresh CI
	// run met one).
	waitFor(t, func() bool {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+board.PathEvents, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode == http.StatusServiceUnavailable {
			return false
		}
		line, err := bufio.NewReader(res.Body).ReadString('\n')
		return res.StatusCode == http.StatusOK && err == nil && line != ""
	})
	b.Close() // the server stopping: the last page's stream ends
	stops[2]()
	srv.Close()
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before+2 })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if ok() {
			return
		}
	}
	buf := make([]byte, 1<<20)
	t.Fatalf("not within 10 s; goroutines:\n%s", buf[:runtime.Stack(buf, true)])
}

// A report posted to the board is scored against the instance's own
// ground truth as the scorer scores it; one it cannot read gets the
// scorer's words (422), one too large 413; never a 500.
func TestBoardScoresAReport(t *testing.T) {
	t.Parallel()
	in := startInstance(t, false)
	for _, target := range []string{"/security/unauthenticated-access", "/response-conformance/missing-field"} {
		res, err := http.Get(in.api.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
	}
	post := func(name string, body io.Reader) (*http.Response, []byte) {
		res, err := http.Post(in.admin.URL+board.PathScore+"?name="+name, "application/octet-stream", body)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res, b
	}
	// Schemathesis's ndjson, and WFC reports: whole, cut short, of a run
	// against DEFECTS=none, of a run that made no test.
	for _, report := range []string{"../judge/score/testdata/samples/schemathesis-4.9.5/defects-all-seed3/report.ndjson.gz",
		"../judge/score/testdata/wfc/full.json", "../judge/score/testdata/wfc/cut.json", "../judge/score/testdata/wfc/defects-none.json", "../judge/score/testdata/wfc/no-tests.json"} {
		data, err := os.ReadFile(report)
		if err != nil {
			t.Fatal(err)
		}
		res, body := post(filepath.Base(report), bytes.NewReader(data))
		if res.StatusCode != 200 {
			t.Fatalf("%s: %s %s", report, res.Status, body)
		}
		var got board.Scored
		if err := json.Unmarshal(body, &got); err != nil {
			t.Fatal(err)
		}
		// The scorer, given the same report and the instance's /defects.
		rep, err := score.ReadFile(report, score.Options{})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := http.Get(in.admin.URL + gateway.PathDefects)
		if err != nil {
			t.Fatal(err)
		}
		truth, _ := io.ReadAll(tr.Body)
		tr.Body.Close()
		inst, err := score.ParseExposure("defects.json", truth)
		if err != nil {
			t.Fatal(err)
		}
		want := score.Score(rep, inst, nil)
		if got.Headline != want.Headline() || len(got.Verdicts) != len(want.Defects) || got.Unplanted != len(want.Unplanted) || got.Scorecard.FormatVersion != want.FormatVersion {
			t.Errorf("%s: the board: %q, %d verdicts; the scorer: %q, %d", report, got.Headline, len(got.Verdicts), want.Headline(), len(want.Defects))
		}
		for i, v := range got.Verdicts {
			if v.ID != want.Defects[i].ID || v.Verdict != want.Defects[i].Verdict() {
				t.Errorf("%s: %s: the board says %q, the scorer %q", report, v.ID, v.Verdict, want.Defects[i].Verdict())
			}
		}
		if strings.HasSuffix(report, "seed3/report.ndjson.gz") || strings.HasSuffix(report, "full.json") {
			if got.Verdicts[0].Verdict != "reported" {
				t.Errorf("%s: SEC-01, triggered here and in the report: %q", report, got.Verdicts[0].Verdict)
			}
		}
	}
	res, body := post("notes.txt", strings.NewReader("\x00\x01 not a report"))
	if res.StatusCode != http.StatusUnprocessableEntity || !bytes.Contains(body, []byte("notes.txt:1: binary data, not a report this scorer reads")) {
		t.Errorf("garbage: %s %s", res.Status, body)
	}
	res, body = post("huge.csv", io.MultiReader(strings.NewReader("method,path,class\n"), strings.NewReader(strings.Repeat("GET,/response-conformance/missing-field,invalid-body\n", board.MaxReport/50+1))))
	if res.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(body, []byte("showcase-score")) {
		t.Errorf("too large: %s %s", res.Status, body)
	}
}

// The server stopping with a board open (make run's server, Ctrl-C): the
// stream ends and the server stops at once, not after the admin port's
// shutdown grace or its write timeout.
func TestBoardEndsWithTheServer(t *testing.T) {
	t.Parallel()
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(t.Context())
	env := map[string]string{"ADDR": "127.0.0.1:0", "ADMIN_ADDR": "127.0.0.1:0"}
	done := make(chan error, 1)
	go func() {
		done <- server.Run(ctx, gateway.Program(), nil, func(k string) string { return env[k] }, pw)
		pw.Close()
	}()
	admin := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var l struct{ Msg, Admin string }
			if json.Unmarshal(sc.Bytes(), &l) == nil && l.Msg == "listening" {
				admin <- l.Admin
			}
		}
	}()
	ev, stop := events(t, "http://"+<-admin+board.PathEvents)
	defer stop()
	<-ev
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Run: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the server did not stop with a board open")
	}
	for range ev { // the stream ends
	}
	if d := time.Since(start); d > 900*time.Millisecond {
		t.Errorf("stopping took %s with a board open", d)
	}
}
