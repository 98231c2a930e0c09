package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/suite"
)

// exchange is an answer as a client sees it, and how long a slow mutant
// held it.
type exchange struct {
	status      int
	contentType string
	body        []byte
	wait        time.Duration
}

func (e exchange) String() string {
	return fmt.Sprintf("%d %s %.120q wait %s", e.status, e.contentType, e.body, e.wait)
}

func (e exchange) same(a catalogue.Answer) bool {
	return e.status == a.Status && e.contentType == a.ContentType && bytes.Equal(e.body, a.Body) && e.wait == a.Wait
}

// mutantRequest is a request to an operation, with a body, a header and
// the request ID the test follows it by.
func mutantRequest(base string, ep catalogue.Endpoint, query, body, header, id string) *http.Request {
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	r, err := http.NewRequest(ep.Method, base+ep.Path+query, rd)
	if err != nil {
		panic(err)
	}
	if base == "" {
		r = httptest.NewRequest(ep.Method, ep.Path+query, rd)
	}
	if body != "" {
		r.Header.Set("Content-Type", "application/json")
	}
	if name, value, ok := strings.Cut(header, ":"); ok {
		r.Header[http.CanonicalHeaderKey(name)] = []string{strings.TrimSpace(value)}
	}
	r.Header.Set(observe.HeaderRequestID, id)
	return r
}

// waits records the waits slow mutants asked for, by request ID, and
// returns at once: a wait is asserted, not spent.
type waits struct {
	mu sync.Mutex
	by map[string]time.Duration
}

func newWaits() *waits { return &waits{by: map[string]time.Duration{}} }

func (w *waits) wait(r *http.Request, d time.Duration) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.by[r.Header.Get(observe.HeaderRequestID)] = d
	return true
}

func (w *waits) forget(id string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.by, id)
}

func (w *waits) of(id string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.by[id]
}

func serveExchange(h http.Handler, r *http.Request, ws *waits) exchange {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	return exchange{status: rec.Code, contentType: rec.Header().Get("Content-Type"), body: rec.Body.Bytes(), wait: ws.of(r.Header.Get(observe.HeaderRequestID))}
}

// mutantSizes is the N of seed's set in the tests: the default, the
// largest and every size between.
func mutantSizes(seed uint64) int {
	switch seed % 4 {
	case 0:
		return catalogue.DefaultMutants
	case 1:
		return catalogue.MaxMutants
	}
	return int(seed%catalogue.MaxMutants) + 1
}

// predict is the answer a mutant set gives a probe whose conformant answer
// is conf, and the mutant it triggers ("" for none). Two mutants meeting
// one request is a failure of the drawing.
func predict(t *testing.T, set catalogue.Set, p catalogue.Probe, conf catalogue.Answer) (catalogue.Answer, catalogue.ID) {
	t.Helper()
	in := p.Input()
	var hit *catalogue.Mutant
	for _, m := range set.Mutants() {
		if m.Endpoint() == p.Endpoint && m.Matches(in) {
			if hit != nil {
				t.Fatalf("%s: %s and %s both meet %s %s %s", set, hit.ID(), m.ID(), p.Query, p.Body, p.Header)
			}
			hit = &m
		}
	}
	if hit == nil {
		return conf, ""
	}
	a, changed := hit.Apply(conf)
	if !changed {
		return conf, ""
	}
	return a, hit.ID()
}

// shows reports whether an exchange shows what a mutant's classes of check
// look for, by the contract's own validator (kin-openapi) where it has the
// check: what a precise tool would find.
func shows(ctx context.Context, ck *checker, base string, d catalogue.Defect, req *http.Request, body string, e exchange) (bool, []suite.Finding) {
	r := mutantRequest(base, catalogue.Endpoints[d.Endpoint-1], strings.TrimPrefix(req.URL.RequestURI(), catalogue.Endpoints[d.Endpoint-1].Path), body, "", "x")
	r.Header = req.Header.Clone()
	h := http.Header{"Content-Type": {e.contentType}}
	found := ck.findings(ctx, r, []byte(body), suite.Response{Status: e.status, Header: h, Body: e.body})
	for _, c := range d.Classes {
		switch c {
		case catalogue.SlowResponse:
			if e.wait < time.Second {
				return false, found
			}
		case catalogue.AuthBypass:
			if e.status/100 != 2 || req.Header.Get("X-API-Key") == "showcase-demo-key" {
				return false, found
			}
		default:
			if !slices.Contains(found, c) {
				return false, found
			}
		}
	}
	if d.CWE == 209 && !bytes.Contains(e.body, []byte("goroutine")) {
		return false, found
	}
	return true, found
}

// Every mutant of every set is exact: over 1,000 seeds and every size, each
// request the mutants' data names gets the conformant answer unless a
// planted mutant meets it, and then exactly the answer its operator makes
// of the conformant one; each mutant's exposure counts exactly the answers
// it changed; and each trigger shows its symptom to the contract's
// validator, where the same request to DEFECTS=none shows nothing.
func TestMutantsExact(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	none := startEmbedded(t, map[string]string{"DEFECTS": "none"})
	ck := newChecker(t, none.URL)
	next := none.Config.Handler
	probes := catalogue.MutantProbes()
	noWait := newWaits()
	// The data is true: the conformant service answers each probe as it
	// says, and each trigger's request as the trigger says, showing
	// nothing.
	conf := make([]catalogue.Answer, len(probes))
	for i, p := range probes {
		e := serveExchange(next, mutantRequest("", p.Endpoint, p.Query, p.Body, p.Header, "conf"), noWait)
		conf[i] = catalogue.Answer{Status: e.status, ContentType: e.contentType, Body: e.body}
		if p.Status != 0 && !e.same(p.Conformant()) {
			t.Errorf("%s %s%s %s %s: DEFECTS=none answers %s; the mutants' data says %d %s", p.Endpoint.Method, p.Endpoint.Path, p.Query, p.Body, p.Header, e, p.Status, p.Answer)
		}
	}
	for _, m := range catalogue.AllMutants() {
		d := m.Defect()
		for _, tr := range d.Triggers {
			r := mutantRequest("", m.Endpoint(), tr.Query, tr.Body, tr.Header, "off")
			e := serveExchange(next, r, noWait)
			if e.status != tr.OffStatus {
				t.Errorf("%s: without it, %s%s answers %d, not %d", d.ID, m.Endpoint().Path, tr.Query, e.status, tr.OffStatus)
			}
			if _, found := shows(ctx, ck, none.URL, d, r, tr.Body, e); len(found) > 0 {
				t.Errorf("%s: without it, the trigger %s%s %s shows %v", d.ID, m.Endpoint().Path, tr.Query, tr.Body, found)
			}
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	seeds := uint64(1000)
	if testing.Short() {
		seeds = 100
	}
	for seed := range seeds {
		set := catalogue.Mutants(seed, mutantSizes(seed))
		tel := observe.Discard()
		ws := newWaits()
		layer := gateway.MutantLayer(set, next, tel.Service("gateway"), ws.wait)
		want := map[catalogue.ID]uint64{}
		for i, p := range probes {
			id := fmt.Sprintf("probe-%d", i)
			expect, hit := predict(t, set, p, conf[i])
			if hit != "" {
				want[hit]++
			}
			if e := serveExchange(layer, mutantRequest("", p.Endpoint, p.Query, p.Body, p.Header, id), ws); !e.same(expect) {
				t.Fatalf("%s: %s%s %s %s answers %s, want %s (mutant %q)", set, p.Endpoint.Path, p.Query, p.Body, p.Header, e, exchange{expect.Status, expect.ContentType, expect.Body, expect.Wait}, hit)
			}
		}
		for _, m := range set.Mutants() {
			d := m.Defect()
			for j, tr := range d.Triggers {
				id := fmt.Sprintf("trigger-%d", j)
				r := mutantRequest("", m.Endpoint(), tr.Query, tr.Body, tr.Header, id)
				e := serveExchange(layer, r, ws)
				want[d.ID]++
				ok, found := shows(ctx, ck, none.URL, d, r, tr.Body, e)
				if e.status != tr.Status || !ok {
					t.Fatalf("%s: %s, trigger %d answers %s, showing %v; want %d showing %v", set, d.ID, j+1, e, found, tr.Status, d.Classes)
				}
				// And nothing else: a finding of another class could be
				// credited to another mutant on the operation.
				for _, c := range found {
					if !slices.Contains(d.Classes, c) && !slices.Contains(d.Faces, c) {
						t.Fatalf("%s: %s, trigger %d answers %s, showing %s too, neither its class nor one of its faces (%v, %v)", set, d.ID, j+1, e, c, d.Classes, d.Faces)
					}
				}
			}
		}
		_, seen := tel.Exposure.Snapshot()
		for _, m := range set.Mutants() {
			if got := seen[string(m.ID())].Count; got != want[m.ID()] || got == 0 {
				t.Fatalf("%s: %s triggered %d times, want %d", set, m.ID(), got, want[m.ID()])
			}
		}
		if len(seen) != len(set.Mutants()) {
			t.Fatalf("%s: exposure of %d defects for %d mutants", set, len(seen), len(set.Mutants()))
		}
	}
}

// The split deployment answers exactly like the one process on 50 seeds:
// every request the mutants' data names, and each instance's ground truth
// counts the same exposure and the same reach. Not parallel: slow mutants'
// waits are recorded for the whole process, not spent.
func TestMutantsSplitAsOne(t *testing.T) {
	ws := newWaits()
	gateway.WaitMutantsWith(t, ws.wait)
	probes := catalogue.MutantProbes()
	for seed := range uint64(50) {
		set := catalogue.Mutants(seed+7000, mutantSizes(seed))
		t.Run(set.String(), func(t *testing.T) {
			one, oneTS := startModeWith(t, "one process", set)
			split, splitTS := startModeWith(t, "split", set)
			for i, p := range probes {
				var got [2]exchange
				for j, base := range []string{oneTS.URL, splitTS.URL} {
					id := fmt.Sprintf("%d-%d-%d", seed, i, j)
					res, err := http.DefaultClient.Do(mutantRequest(base, p.Endpoint, p.Query, p.Body, p.Header, id))
					if err != nil {
						t.Fatal(err)
					}
					b, _ := io.ReadAll(res.Body)
					res.Body.Close()
					got[j] = exchange{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: b, wait: ws.of(id)}
				}
				if got[0].String() != got[1].String() {
					t.Errorf("%s%s %s %s: one process %s, split %s", p.Endpoint.Path, p.Query, p.Body, p.Header, got[0], got[1])
				}
			}
			a, b := truthOf(t, one), truthOf(t, split)
			if a.Setting != set.String() || len(a.Defects) != len(catalogue.Defects)+set.N() {
				t.Fatalf("/defects says %s with %d entries", a.Setting, len(a.Defects))
			}
			for i := range a.Defects {
				x, y := a.Defects[i], b.Defects[i]
				if x.ID != y.ID || x.Exposure.Count != y.Exposure.Count || x.Reached.Count != y.Reached.Count || x.Active != y.Active {
					t.Errorf("%s: one process %d triggered, %d reached; split %d, %d", x.ID, x.Exposure.Count, x.Reached.Count, y.Exposure.Count, y.Reached.Count)
				}
				if x.Operator != "" && x.Exposure.Count == 0 {
					t.Errorf("%s: never triggered by its own triggers", x.ID)
				}
			}
		})
	}
}

// A slow mutant's wait is really spent, on a few seeds: its trigger is
// answered after SlowWait or more, and counted once.
func TestMutantsSlowWaits(t *testing.T) {
	t.Parallel()
	timed := 0
	for seed := uint64(0); timed < 3; seed++ {
		set := catalogue.Mutants(seed, catalogue.DefaultMutants)
		i := slices.IndexFunc(set.Mutants(), func(m catalogue.Mutant) bool { return m.Operator.Name == "slow" })
		if i < 0 {
			continue
		}
		timed++
		m := set.Mutants()[i]
		tr := m.Defect().Triggers[0]
		built, ts := startModeWith(t, "one process", set)
		start := time.Now()
		res, err := http.DefaultClient.Do(mutantRequest(ts.URL, m.Endpoint(), tr.Query, tr.Body, tr.Header, "slow"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		took := time.Since(start)
		if res.StatusCode != tr.Status || took < catalogue.SlowWait {
			t.Errorf("%s: %s answered %d after %s, want %d after %s or more", set, m.ID(), res.StatusCode, took, tr.Status, catalogue.SlowWait)
		}
		for _, d := range truthOf(t, built).Defects {
			if d.ID == m.ID() && d.Exposure.Count != 1 {
				t.Errorf("%s: triggered %d times, want 1", d.ID, d.Exposure.Count)
			}
		}
	}
}

// sendExchange sends r and reads its answer, with the wait ws recorded.
func sendExchange(t *testing.T, r *http.Request, ws *waits) exchange {
	t.Helper()
	res, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return exchange{status: res.StatusCode, contentType: res.Header.Get("Content-Type"), body: b, wait: ws.of(r.Header.Get(observe.HeaderRequestID))}
}

// predictRequest is the answer a mutant set gives r, whose body is body,
// when DEFECTS=none answers it conf: conf unless a planted mutant meets r
// (with its operation's method, on its path as the router matches it),
// then what that mutant makes of conf.
func predictRequest(set catalogue.Set, r *http.Request, body []byte, conf exchange) exchange {
	if r.URL.RawPath != "" {
		return conf
	}
	in := catalogue.NewInput(r, body)
	for _, m := range set.Mutants() {
		if e := m.Endpoint(); e.Method == r.Method && e.Path == r.URL.Path && m.Matches(in) {
			a, _ := m.Apply(catalogue.Answer{Status: conf.status, ContentType: conf.contentType, Body: conf.body})
			return exchange{status: a.Status, contentType: a.ContentType, body: a.Body, wait: a.Wait}
		}
	}
	return conf
}

// The behaviour suite's every case (hostile input included: bad JSON,
// oversized bodies, repeated and malformed parameters, other methods) on
// mutant sets with three mutants on every operation: each answer is
// exactly DEFECTS=none's unless a planted mutant meets the request, and
// then exactly what the mutant makes of it; so the only 5xx are the
// planted server errors. Not parallel: slow mutants' waits are recorded,
// not spent.
func TestMutantsSuite(t *testing.T) {
	ws := newWaits()
	gateway.WaitMutantsWith(t, ws.wait)
	none := startEmbedded(t, map[string]string{"DEFECTS": "none"})
	ctx := t.Context()
	for seed := range uint64(4) {
		set := catalogue.Mutants(seed+100, catalogue.MaxMutants)
		_, mut := startModeWith(t, "one process", set)
		sent, touched := 0, 0
		for _, ep := range suite.Endpoints() {
			for _, c := range ep.Cases {
				c = ep.For(c, catalogue.None())
				var got [2]exchange
				var req *http.Request
				for i, base := range []string{none.URL, mut.URL} {
					r, err := c.Request(ctx, base)
					if err != nil {
						t.Fatal(err)
					}
					r.Header.Set(observe.HeaderRequestID, fmt.Sprintf("suite-%d-%d-%d", seed, sent, i))
					got[i], req = sendExchange(t, r, ws), r
				}
				want := predictRequest(set, req, []byte(c.Body), got[0])
				if want.String() != got[0].String() {
					touched++
				}
				if got[1].String() != want.String() {
					t.Errorf("%s, %s %s: %s %s answers %s, want %s", set, ep.Name, c.Rule, req.Method, c.Target, got[1], want)
				}
				if got[1].status >= 500 && !bytes.Contains(got[1].body, []byte("Internal Server Error")) && !bytes.Contains(got[1].body, []byte("goroutine")) {
					t.Errorf("%s, %s %s: %d, not a planted server error", set, ep.Name, c.Rule, got[1].status)
				}
				sent++
			}
		}
		t.Logf("%s: %d of %d cases met a mutant", set, touched, sent)
	}
}

// Any request of any shape, to mutant sets with three mutants on every
// operation, gets exactly what DEFECTS=none answers unless a planted mutant
// meets it, and then exactly what the mutant makes of that answer.
func FuzzEndpointsMutants(f *testing.F) {
	ws := newWaits()
	gateway.WaitMutantsWith(f, ws.wait)
	var sets []catalogue.Set
	var handlers []http.Handler
	for seed := range uint64(3) {
		set := catalogue.Mutants(seed+200, catalogue.MaxMutants)
		sets = append(sets, set)
		handlers = append(handlers, fuzzHandler(map[string]string{"DEFECTS": set.String(), "SQLITE_MAX_ROWS": "1000"}))
	}
	for _, p := range catalogue.MutantProbes() {
		m := slices.Index(fuzzMethods, p.Endpoint.Method)
		i := slices.Index(fuzzPaths, p.Endpoint.Path)
		f.Add(uint8(m), uint8(i), strings.TrimPrefix(p.Query, "?"), "application/json", []byte(p.Body))
	}
	f.Add(uint8(0), uint8(7), "id=0;x", "", []byte(nil))
	f.Add(uint8(0), uint8(8), "limit=%EF%BC%94&limit=1", "", []byte(nil))
	f.Add(uint8(1), uint8(2), "", "application/json", []byte(`{"text":"a","text":5}`))
	f.Add(uint8(1), uint8(1), "", "application/json", []byte(`{"number":"0"} trailing`))
	f.Fuzz(func(t *testing.T, m, p uint8, query, contentType string, body []byte) {
		method, path := fuzzMethods[int(m)%len(fuzzMethods)], fuzzPaths[int(p)%len(fuzzPaths)]
		if path == suite.PathInefficientAlgorithm {
			if n, ok := queryInt(query, "n"); ok && n > 3000 {
				t.Skip("n above 3000 is slow by design; the suite covers it")
			}
		}
		answer := func(h http.Handler) (exchange, *http.Request) {
			req := fuzzRequest(method, path, query, contentType, body)
			req.Header.Set(observe.HeaderRequestID, "fuzz")
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return exchange{status: rec.Code, contentType: rec.Header().Get("Content-Type"), body: rec.Body.Bytes(), wait: ws.of("fuzz")}, req
		}
		ws.forget("fuzz")
		conf, _ := answer(fuzzGatewayOff())
		for i, h := range handlers {
			ws.forget("fuzz")
			got, req := answer(h)
			if want := predictRequest(sets[i], req, body, conf); got.String() != want.String() {
				t.Fatalf("%s: %s %s?%s (%q, %q) → %s, want %s", sets[i], method, path, query, contentType, body, got, want)
			}
		}
	})
}
