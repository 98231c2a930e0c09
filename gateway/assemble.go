package gateway

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/contract"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	"github.com/defectshowcase/showcase/gateway/board"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/server"
	"github.com/defectshowcase/showcase/platform/version"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

// inProcess serves a category with its service's own router; the service
// logs and measures its requests on the process's telemetry.
type inProcess struct {
	server.Service
}

func (s inProcess) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.Handler().ServeHTTP(w, r) }

func (s inProcess) Ready(ctx context.Context) error {
	if r, ok := s.Service.(server.Readier); ok {
		return r.Ready(ctx)
	}
	return nil
}

// embeddable is a category's service as the gateway builds it in-process:
// its settings, declared beside the gateway's own, and its constructor.
type embeddable interface {
	Register(s *server.Settings)
	build(tel *observe.Telemetry, active catalogue.Set) (server.Service, error)
}

type securityConfig struct{ securitysvc.Config }
type errorsConfig struct{ errorssvc.Config }
type conformanceConfig struct{ conformancesvc.Config }
type performanceConfig struct{ performancesvc.Config }

func (c *securityConfig) build(tel *observe.Telemetry, active catalogue.Set) (server.Service, error) {
	c.Telemetry, c.Defects = tel, active
	return securitysvc.New(c.Config)
}

func (c *errorsConfig) build(tel *observe.Telemetry, active catalogue.Set) (server.Service, error) {
	c.Telemetry, c.Defects = tel, active
	return errorssvc.New(c.Config)
}

func (c *conformanceConfig) build(tel *observe.Telemetry, active catalogue.Set) (server.Service, error) {
	c.Telemetry, c.Defects = tel, active
	return conformancesvc.New(c.Config)
}

func (c *performanceConfig) build(tel *observe.Telemetry, active catalogue.Set) (server.Service, error) {
	c.Telemetry, c.Defects = tel, active
	return performancesvc.New(c.Config)
}

// services are the four categories' services, by the catalogue's category
// name: the in-process assembly's only table.
func services() map[string]embeddable {
	return map[string]embeddable{
		"security":    &securityConfig{},
		"errors":      &errorsConfig{},
		"conformance": &conformanceConfig{},
		"performance": &performanceConfig{},
	}
}

// Program is the gateway binary: categories with an upstream URL are
// proxied, the others run in the process. Every category's settings are
// declared, so one command line configures the whole showcase.
func Program() server.Program {
	return server.Program{Name: "gateway", DefaultAddr: ":8080", DefaultAdminAddr: ":9090", Configure: configure}
}

func configure(s *server.Settings) server.Builder {
	var active catalogue.Set
	s.Text(&active, "defects", "DEFECTS", catalogue.SettingUsage+"; in front of separate services, give every process the same")
	var publicURL string
	s.Func("public-url", "PUBLIC_URL", "(the request's)", "the instance's base URL as its users reach it, e.g. https://showcase.example: the server the contract names when a tool asks for an absolute one (/openapi.json?server=absolute)",
		func(v string) (err error) {
			publicURL, err = parsePublicURL(v)
			return err
		}, func() string { return publicURL })
	var peers *Peers
	var peerTimeout time.Duration
	s.Func("peers", "PEERS", "(none)", "the DNS name whose addresses are every replica of this gateway's deployment, and their admin port, e.g. gateway-peers:9090 (a headless Service): the admin port then answers ?scope=deployment for all of them; unset: for this instance alone",
		func(v string) (err error) {
			peers, err = parsePeers(v)
			return err
		}, func() string { return peers.String() })
	s.Duration(&peerTimeout, "peer-timeout", "PEER_TIMEOUT", DefaultPeerTimeout, "a replica's whole answer to a deployment-wide request (?scope=deployment); beyond it the request fails, naming the replica")
	var timeout time.Duration
	s.Duration(&timeout, "upstream-timeout", "UPSTREAM_TIMEOUT", DefaultUpstreamTimeout, "an upstream's whole answer, from the request to its last byte; beyond it, 504 JSON, or the connection closed once the answer has begun")
	ups := map[string]*upstreamSetting{}
	for _, c := range catalogue.Categories {
		u := &upstreamSetting{}
		ups[c.Name] = u
		flagName := "upstream-" + c.Name
		s.Func(flagName, c.Upstream, "(in-process)", "URL of the "+c.Name+" service, e.g. http://127.0.0.1:8081; unset: served in this process",
			func(v string) error {
				url, err := parseUpstreamURL(v)
				if err == nil {
					u.url = url
				}
				return err
			}, u.urlText)
		s.Func(flagName+"-timeout", c.Upstream+"_TIMEOUT", "UPSTREAM_TIMEOUT", "the same as UPSTREAM_TIMEOUT for the "+c.Name+" service alone",
			func(v string) (err error) {
				u.timeout, err = server.PositiveDuration(v)
				return err
			}, func() string { return u.timeoutText(timeout) })
	}
	svcs := services()
	for _, c := range catalogue.Categories {
		svcs[c.Name].Register(s)
	}
	return func(tel *observe.Telemetry) (server.Built, error) {
		if peers != nil {
			peers.Timeout = peerTimeout
		}
		return assemble(tel, active, publicURL, timeout, ups, svcs, peers)
	}
}

// upstreamSetting is a category's upstream URL and its own timeout, if set.
type upstreamSetting struct {
	url     *url.URL
	timeout time.Duration
}

func (u *upstreamSetting) urlText() string {
	if u.url == nil {
		return ""
	}
	return u.url.String()
}

func (u *upstreamSetting) timeoutText(def time.Duration) string {
	if u.timeout == 0 {
		return def.String()
	}
	return u.timeout.String()
}

// assemble builds the gateway: each category with an upstream URL is
// proxied, every other one is served in-process on the same telemetry. The
// result's Close releases the in-process services.
func assemble(tel *observe.Telemetry, active catalogue.Set, publicURL string, timeout time.Duration, ups map[string]*upstreamSetting, svcs map[string]embeddable, peers *Peers) (server.Built, error) {
	declared, err := contract.Declared()
	if err != nil {
		return server.Built{}, err
	}
	served, err := declared.For(active)
	if err != nil {
		return server.Built{}, err
	}
	if tel.Exposure == nil {
		// The gateway answers for what passed through it: it needs the
		// log its in-process services share.
		tel.Exposure = observe.NewExposureLog()
	}
	in := tel.Service("gateway")
	// The gateway serves the contract for its own setting, and says so for
	// every defect; each service exports its own.
	gauge := observe.DefectActive(in.Registerer)
	for _, d := range catalogue.Defects {
		gauge.WithLabelValues(string(d.ID)).Set(map[bool]float64{true: 1}[active.Active(d.ID)])
	}
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	metrics := newProxyMetrics(in.Registerer)
	handlers := map[string]Handler{}
	for _, c := range catalogue.Categories {
		if u := ups[c.Name]; u.url != nil {
			t := u.timeout
			if t == 0 {
				t = timeout
			}
			handlers[c.Name] = NewUpstream(c, u.url, NewTransport(t), t, metrics, in.Logger, tel.Exposure)
			in.Logger.Info("category proxied", categoryAttr(c.Name), slog.String("upstream", u.url.String()), slog.Duration("timeout", t))
			continue
		}
		svc, err := svcs[c.Name].build(tel, active)
		if err != nil {
			return server.Built{}, errors.Join(err, closeAll())
		}
		closers = append(closers, svc.Close)
		handlers[c.Name] = inProcess{svc}
		in.Logger.Info("category in-process", categoryAttr(c.Name))
	}
	g, err := New(handlers, served, publicURL, active, in)
	if err != nil {
		return server.Built{}, errors.Join(err, closeAll())
	}
	// The live board on the admin port: the same ground truth as /defects,
	// pushed to the page as it changes.
	var proxied []string
	for _, c := range catalogue.Categories {
		if ups[c.Name].url != nil {
			proxied = append(proxied, c.Name)
		}
	}
	mode := "one process"
	if len(proxied) > 0 {
		mode = fmt.Sprintf("split: the gateway proxies %s", strings.Join(proxied, ", "))
	}
	src := board.Source{Truth: func() catalogue.Truth { return withExposure(catalogue.GroundTruth(active), tel.Exposure, g.reach) },
		Mode: mode, Version: version.String()}
	if peers != nil {
		src.Deployment = peers.DeploymentTruth
		in.Logger.Info("deployment scope", slog.String("peers", peers.String()))
	}
	b := board.New(src, board.Options{})
	closers = append([]func() error{func() error { b.Close(); return nil }}, closers...)
	// Each count answers for the instance, or with ?scope=deployment for
	// every replica of its deployment (peers.go).
	admin := map[string]http.Handler{
		http.MethodGet + " " + PathDefects:             scoped(peers, defectsReport(active, tel.Exposure, g.reach), serveDeploymentTruth),
		http.MethodGet + " " + PathAnswerKey:           answerKey(active, g),
		http.MethodPost + " " + PathDefectsReset:       scoped(peers, resetExposure(tel.Exposure, g.reach, g.cov), serveDeploymentReset),
		http.MethodGet + " " + PathCoverage:            scoped(peers, coverageReport(g, false), serveDeploymentCoverage(false)),
		http.MethodGet + " " + PathCoverageText:        scoped(peers, coverageReport(g, true), serveDeploymentCoverage(true)),
		http.MethodGet + " " + server.PathCodeCoverage: scoped(peers, server.CodeCoverage, serveDeploymentCodeCoverage),
	}
	maps.Copy(admin, b.Handlers())
	return server.Built{Handler: g, Close: closeAll, Ready: g.Ready, Admin: admin}, nil
}

// The admin endpoints of the ground truth: every planted defect, how it
// shows, what detects it, whether it is active, and how often it was
// triggered; and the reset of those counts.
const (
	PathDefects      = "/defects"
	PathDefectsReset = "/defects/reset"
	// PathAnswerKey is the instance's planted faults as the WFC report of
	// a tool that found them all (catalogue/wfc); ?codes=catalogue writes
	// the codes the published schema leaves out (F207, F209) too.
	PathAnswerKey = "/defects/wfc"
	// PathCoverage is the API coverage of the requests since the reset
	// (catalogue/coverage) as JSON; PathCoverageText the same for a person.
	PathCoverage     = "/coverage"
	PathCoverageText = "/coverage/summary"
)

// Coverage is the API coverage of the requests the gateway received since
// its start or the last reset.
func (g *Gateway) Coverage() *coverage.Report {
	rep := g.cov.report(g.reach.count())
	rep.Undeclared.Methods = g.reach.otherMethods()
	return rep
}

// coverageReport answers the coverage as JSON, or as text for a person.
func coverageReport(g *Gateway, text bool) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeCoverage(w, g.Coverage(), text)
	})
}

func writeCoverage(w http.ResponseWriter, rep *coverage.Report, text bool) {
	if !text {
		respond.Value(w, http.StatusOK, rep)
		return
	}
	var b strings.Builder
	_ = rep.Summary(&b) // a strings.Builder does not fail
	respond.Raw(w, http.StatusOK, "text/plain; charset=utf-8", []byte(b.String()))
}

// defectsReport answers the catalogue's ground truth for the instance's
// setting, with the exposure log's counts and the requests each defect's
// operation received.
func defectsReport(active catalogue.Set, log *observe.ExposureLog, reach *reachLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		respond.Value(w, http.StatusOK, withExposure(catalogue.GroundTruth(active), log, reach))
	})
}

// answerKey answers the instance's WFC answer key, with the API coverage
// the instance measured since the reset as its extra coverage.
func answerKey(active catalogue.Set, g *Gateway) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		opt := wfc.Options{Version: version.String(), Created: time.Now(), Coverage: g.Coverage()}
		query, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			respond.Error(w, http.StatusBadRequest, "the query does not parse: "+err.Error())
			return
		}
		switch codes := query.Get("codes"); codes {
		case "", "schema":
		case "catalogue":
			opt.CatalogueCodes = true
		default:
			respond.Error(w, http.StatusBadRequest, fmt.Sprintf("codes=%q: want schema (the default: valid against WFC's published schema) or catalogue (F207 and F209 too)", codes))
			return
		}
		respond.Value(w, http.StatusOK, wfc.AnswerKey(active, opt))
	})
}

// withExposure adds the logs' counts to truth.
func withExposure(truth catalogue.Truth, log *observe.ExposureLog, reach *reachLog) catalogue.Truth {
	since, seen := log.Snapshot()
	since = since.UTC()
	truth.ExposureSince = &since
	requests := reach.count()
	truth.Requests = &requests
	for i, d := range truth.Defects {
		x := &catalogue.Exposure{}
		if e, ok := seen[string(d.ID)]; ok {
			first, last := e.First.UTC(), e.Last.UTC()
			x = &catalogue.Exposure{Count: e.Count, First: &first, Last: &last,
				Example: &catalogue.Example{Method: e.Method, Target: e.Target, RequestID: e.RequestID}}
			if e.Index != 0 {
				index := e.Index
				x.FirstRequest = &index
			}
		}
		truth.Defects[i].Exposure = x
		truth.Defects[i].Reached = reach.snapshot(d.Operation.Path)
	}
	return truth
}

// resetExposure empties the exposure log, the reached counts, the API
// coverage and, in a build with it, the code coverage: /defects, /coverage
// and /coverage/code count from now on. The Prometheus
// counters never reset.
func resetExposure(log *observe.ExposureLog, reach *reachLog, cov *coverageLog) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		reach.reset()
		since := log.Reset().UTC()
		cov.reset(since)
		server.ClearCodeCoverage() // a build with Go's coverage counts from now on too
		respond.Value(w, http.StatusOK, struct {
			ExposureSince time.Time `json:"exposure_since"`
		}{since})
	})
}
