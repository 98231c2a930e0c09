package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/catalogue"
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/gateway"
	"github.com/defectshowcase/showcase/gateway/web"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

// artifacts is where the browser test leaves its screenshots.
var artifacts = filepath.Join("..", "out", "browser")

// The two pages in a real headless Chromium, with the gateway embedded and
// in front of the four services: the docs list the ten operations and run
// "Try it out"; every example of the front page shows the status it
// promises; nothing leaves loopback and the console stays clean.
func TestBrowser(t *testing.T) {
	chromium := findChromium(t)
	if err := os.MkdirAll(artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, m := range []struct {
		name   string
		split  bool
		active catalogue.Set
	}{{"embedded", false, catalogue.All()}, {"split", true, catalogue.All()}, {"defects-off", false, catalogue.None()}} {
		t.Run(m.name, func(t *testing.T) {
			base, _ := startGateway(t, m.split, m.active)
			trap := startTrap(t)
			b := newBrowser(t, chromium, trap.URL)
			b.docs(t, base, m.name, m.active)
			b.front(t, base, m.name, m.active)
			b.checkStayedOnLoopback(t, trap, 20)
			b.checkTrapCatches(t, trap)
		})
	}
}

// findChromium prefers Debian's binary itself to its wrapper script, which
// exports Google API keys that switch on sign-in and other Google services.
func findChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		return "/usr/lib/chromium/chromium"
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	need(t, "Chromium is not installed; scripts/test-deps.sh (run by make test) installs Debian's chromium")
	return ""
}

// startGateway serves the gateway on loopback, embedded or in front of the
// four services each on its own listener, with the given defects active:
// its API's URL and its admin port's.
func startGateway(t *testing.T, split bool, active catalogue.Set) (api, admin string) {
	t.Helper()
	env := map[string]string{"DEFECTS": active.String()}
	if split {
		type svc interface {
			Handler() http.Handler
			Close() error
		}
		start := func(variable string, s svc, err error) {
			if err != nil {
				t.Fatal(err)
			}
			ts := httptest.NewServer(s.Handler())
			t.Cleanup(func() { ts.Close(); _ = s.Close() })
			env[variable] = ts.URL
		}
		sec, err := securitysvc.New(securitysvc.Config{Defects: active})
		start("UPSTREAM_SECURITY", sec, err)
		errs, err := errorssvc.New(errorssvc.Config{Defects: active})
		start("UPSTREAM_ERRORS", errs, err)
		conf, err := conformancesvc.New(conformancesvc.Config{Defects: active})
		start("UPSTREAM_CONFORMANCE", conf, err)
		perf, err := performancesvc.New(performancesvc.Config{Defects: active})
		start("UPSTREAM_PERFORMANCE", perf, err)
	}
	reg := prometheus.NewRegistry()
	built, err := server.Build(gateway.Program(), func(k string) string { return env[k] }, &observe.Telemetry{Registry: reg, Writer: io.Discard, JSON: true})
	if err != nil {
		t.Fatal(err)
	}
	adm := server.NewAdmin(reg, built.Ready, observe.Discard().Service("test").Logger, false)
	for pattern, h := range built.Admin {
		adm.Handle(pattern, h)
	}
	ts, as := httptest.NewServer(built.Handler), httptest.NewServer(adm)
	t.Cleanup(func() { _ = built.Close(); ts.Close(); as.Close() }) // the board first: its streams end
	return ts.URL, as.URL
}

// trap is the browser's proxy for every host but loopback (which Chromium
// never proxies): whatever reaches it would have left the machine. It
// records the request and refuses it.
type trap struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func startTrap(t *testing.T) *trap {
	t.Helper()
	tr := &trap{}
	tr.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tr.mu.Lock()
		tr.seen = append(tr.seen, r.Method+" "+r.Host+r.URL.String())
		tr.mu.Unlock()
		http.Error(w, "this test allows no request beyond loopback", http.StatusForbidden)
	}))
	t.Cleanup(tr.Close)
	return tr
}

// deadEnd is a loopback address nothing listens on (the discard port).
const deadEnd = "http://127.0.0.1:9"

type browser struct {
	ctx context.Context

	mu       sync.Mutex
	requests []string // every URL the pages requested
	problems []string // exceptions, console errors, failed loads
}

func newBrowser(t *testing.T, chromium, proxy string) *browser {
	t.Helper()
	// Not t.TempDir(): a subtest's long name makes a folder whose
	// Chromium singleton socket path is past the 107 bytes a Unix socket
	// may have.
	home, err := os.MkdirTemp("", "chromium-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(chromium),
		chromedp.ProxyServer(proxy),
		chromedp.WindowSize(1280, 1600),
		chromedp.Flag("disable-dev-shm-usage", true),
		// Chromium's singleton socket folder (org.chromium.Chromium.*) goes
		// under TMPDIR and stays when the browser is killed, and dconf's
		// cache under XDG_CACHE_HOME (~/.cache/dconf): both in the test's
		// own folder, removed after the browser (cleanups run last first).
		chromedp.Env("TMPDIR="+home, "XDG_CACHE_HOME="+filepath.Join(home, "cache"), "XDG_CONFIG_HOME="+filepath.Join(home, "config")),
		// Chromium's own services call Google whatever the page does: the
		// component updater and the account service ignore the flags that
		// should stop them, so they are pointed at a closed local port. The
		// trap still catches anything else.
		chromedp.Flag("component-updater", "url-source="+deadEnd),
		chromedp.Flag("gaia-url", deadEnd),
		chromedp.Flag("google-apis-url", deadEnd),
		chromedp.Flag("lso-url", deadEnd),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("no-pings", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,NetworkTimeServiceQuerying,OptimizationHints,MediaRouter,AutofillServerCommunication,CertificateTransparencyComponentUpdater"),
	)
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to run as root with its sandbox
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelCtx := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 2*time.Minute)
	t.Cleanup(func() { cancelTimeout(); cancelCtx(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[string](`navigator.userAgent`)); err != nil { // starts Chromium
		t.Fatalf("starting Chromium: %v", err)
	}
	err = chromedp.Listen(ctx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			b.requests = append(b.requests, ev.Request.URL)
		case *network.EventLoadingFailed:
			if !ev.Canceled {
				b.problems = append(b.problems, "loading failed: "+ev.ErrorText)
			}
		case *runtime.EventExceptionThrown:
			b.problems = append(b.problems, "exception: "+ev.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeWarning || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.problems = append(b.problems, fmt.Sprintf("console %s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *log.EventEntryAdded:
			e := ev.Entry
			// The examples of 4xx and 5xx answers are meant: Chromium logs each.
			expected := e.Source == log.EntrySourceNetwork && strings.HasPrefix(e.Text, "Failed to load resource: the server responded with a status of ")
			if (e.Level == log.EntryLevelError || e.Level == log.EntryLevelWarning) && !expected {
				b.problems = append(b.problems, fmt.Sprintf("browser log %s %s: %s %s", e.Level, e.Source, e.Text, e.URL))
			}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func (b *browser) do(t *testing.T, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(b.ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// get runs an action that gives a value.
func get[T any](t *testing.T, b *browser, what string, a chromedp.Action[T]) T {
	t.Helper()
	v, err := chromedp.Run(b.ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}

func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	png := get(t, b, "screenshot", chromedp.FullScreenshot(100))
	path := filepath.Join(artifacts, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", path, len(png))
}

// operations is what Swagger UI lists: one "METHOD path" per operation.
const operationsJS = `Array.from(document.querySelectorAll(".opblock")).map(o =>
	o.querySelector(".opblock-summary-method").textContent.trim() + " " +
	o.querySelector(".opblock-summary-path").getAttribute("data-path"))`

func (b *browser) docs(t *testing.T, base, mode string, active catalogue.Set) {
	t.Helper()
	b.do(t, "open /docs",
		chromedp.Navigate(base+web.PathDocs),
		chromedp.WaitVisible(chromedp.CSS(`#operations-response-conformance-getPerson`)),
	)
	ops := get(t, b, "list the operations", chromedp.Evaluate[[]string](operationsJS))
	want := []string{
		"GET /security/unauthenticated-access",
		"POST /internal-server-errors/improper-input-type-handling",
		"POST /internal-server-errors/exceeding-column-size",
		"POST /internal-server-errors/improper-unicode-encoding",
		"GET /response-conformance/malformed-json",
		"GET /response-conformance/incorrect-content-type",
		"GET /response-conformance/missing-field",
		"GET /response-conformance/undocumented-status-code",
		"GET /performance/unbounded-result-set",
		"GET /performance/inefficient-algorithm",
	}
	if !slices.Equal(ops, want) {
		t.Fatalf("Swagger UI lists %q, want the ten operations %q", ops, want)
	}
	op := `#operations-response-conformance-getPerson`
	b.do(t, "Try it out on missing-field",
		chromedp.Click(chromedp.CSS(op+` .opblock-summary-control`)),
		chromedp.WaitVisible(chromedp.CSS(op+` .try-out__btn`)),
		chromedp.Click(chromedp.CSS(op+` .try-out__btn`)),
		chromedp.WaitVisible(chromedp.CSS(op+` .execute`)),
		chromedp.Click(chromedp.CSS(op+` .execute`)),
		chromedp.WaitVisible(chromedp.CSS(op+` .live-responses-table .response .response-col_status`)),
	)
	status := get(t, b, "the status shown", chromedp.Text(chromedp.CSS(op+` .live-responses-table .response .response-col_status`)))
	body := get(t, b, "the body shown", chromedp.Text(chromedp.CSS(op+` .live-responses-table .response .response-col_description`)))
	// With CONF-03 active the age is missing; switched off, it is there.
	if strings.TrimSpace(status) != "200" || !strings.Contains(body, `"name": "Alice"`) || strings.Contains(body, `"age": 30`) == active.Active(catalogue.CONF03) {
		t.Errorf("Try it out on missing-field shows status %q, body %q; want 200 with id and name, and age only with CONF-03 off", status, body)
	}
	b.screenshot(t, mode+"-docs")
}

// frontExamples is the status each example must show, by endpoint, with
// every defect active and with every defect switched off.
var frontExamples = map[bool]map[string]string{
	true: {"endpoint-1": "200", "endpoint-2": "500", "endpoint-3": "500", "endpoint-4": "500", "endpoint-5": "200",
		"endpoint-6": "200", "endpoint-7": "200", "endpoint-8": "404", "endpoint-9": "200", "endpoint-10": "200"},
	false: {"endpoint-1": "401", "endpoint-2": "400", "endpoint-3": "200", "endpoint-4": "200", "endpoint-5": "200",
		"endpoint-6": "200", "endpoint-7": "200", "endpoint-8": "404", "endpoint-9": "400", "endpoint-10": "200"},
}

func (b *browser) front(t *testing.T, base, mode string, active catalogue.Set) {
	examples := frontExamples[active.IsAll()]
	t.Helper()
	b.do(t, "open /",
		chromedp.Navigate(base+web.PathFront),
		chromedp.WaitVisible(chromedp.CSS(`#command`)),
	)
	command := get(t, b, "the tool command", chromedp.Text(chromedp.CSS(`#command`)))
	ids := get(t, b, "the endpoints", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("article.endpoint")).map(a => a.id)`))
	if want := "schemathesis run " + base + "/openapi.yaml --checks all --max-response-time 1"; strings.TrimSpace(command) != want {
		t.Errorf("the tool command reads %q, want %q", command, want)
	}
	links := get(t, b, "the links", chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a")).map(a => a.href)`))
	local := 0
	for _, link := range links {
		if !strings.HasPrefix(link, base+"/") {
			continue // a link elsewhere (Schemathesis' site) is not followed: that would leave loopback
		}
		local++
		resp, err := http.Get(link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("the front page links %s, which answers %d", link, resp.StatusCode)
		}
	}
	if local < 5 {
		t.Errorf("the front page links only %d pages of this instance: %q", local, links)
	}
	if len(ids) != len(examples) {
		t.Fatalf("the front page lists %v", ids)
	}
	for _, id := range ids {
		sel := "#" + id
		b.do(t, "example of "+id,
			chromedp.Click(chromedp.CSS(sel+` button.try`)),
			chromedp.WaitVisible(chromedp.CSS(sel+` .status[data-status]`)),
		)
		status := get(t, b, "status of "+id, chromedp.AttributeValue(chromedp.CSS(sel+` .status`), "data-status")).Value
		expect := get(t, b, "promise of "+id, chromedp.AttributeValue(chromedp.CSS(sel+` button.try`), "data-expect")).Value
		shown := get(t, b, "text of "+id, chromedp.Text(chromedp.CSS(sel+` .status`)))
		if status != examples[id] || expect != status || !strings.HasPrefix(shown, status+" ") {
			t.Errorf("%s: the page shows %q (status %s, promised %s), want %s", id, shown, status, expect, examples[id])
		}
	}
	b.screenshot(t, mode+"-front")
	b.do(t, "follow the docs link", chromedp.Click(chromedp.CSS(`a[href="docs"]`)), chromedp.WaitVisible(chromedp.CSS(`.opblock`)))
}

// checkStayedOnLoopback: every request the pages made went to loopback,
// nothing reached the trap, and the console saw no error.
func (b *browser) checkStayedOnLoopback(t *testing.T, tr *trap, atLeast int) {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.requests) < atLeast {
		t.Errorf("only %d requests were seen; the listener is not working", len(b.requests))
	}
	for _, raw := range b.requests {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme == "data" {
			continue
		}
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			t.Errorf("a request left loopback: %s", raw)
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	for _, r := range tr.seen {
		t.Errorf("Chromium tried to reach beyond loopback: %s", r)
	}
	for _, p := range b.problems {
		t.Errorf("in the browser: %s", p)
	}
	t.Logf("%d requests, all on loopback", len(b.requests))
}

// checkTrapCatches proves the trap would have seen a request that left:
// a page that asks for another host reaches it.
func (b *browser) checkTrapCatches(t *testing.T, tr *trap) {
	t.Helper()
	_ = chromedp.Do(b.ctx, chromedp.Navigate("http://showcase-trap.test/probe")) // the trap's 403 is the answer
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.seen) != 1 || !strings.Contains(tr.seen[0], "showcase-trap.test/probe") {
		t.Errorf("the trap saw %q, want the probe alone: it would not catch a request that leaves loopback", tr.seen)
	}
}
