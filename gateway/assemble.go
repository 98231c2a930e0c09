package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"

	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/defects"
	"github.com/defectshowcase/showcase/platform/respond"
	"github.com/defectshowcase/showcase/platform/server"
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

// embedded builds a category's service in-process from the same settings
// its standalone binary reads.
func embedded(name string, d server.Deps) (server.Service, error) {
	switch name {
	case "security":
		return securitysvc.New(securitysvc.ConfigFromEnv(d))
	case "errors":
		return errorssvc.New(errorssvc.ConfigFromEnv(d))
	case "conformance":
		return conformancesvc.New(conformancesvc.ConfigFromEnv(d))
	case "performance":
		return performancesvc.New(performancesvc.ConfigFromEnv(d))
	}
	return nil, errors.New("unknown category " + name)
}

// Assemble builds the gateway from the environment: each category with an
// upstream URL is proxied, every other one is served in-process on the same
// telemetry. The result's Close releases the in-process services.
func Assemble(d server.Deps) (server.Built, error) {
	ups, err := ParseUpstreams(d.Env)
	if err != nil {
		return server.Built{}, err
	}
	active := defects.FromEnv(d.Env)
	declared, err := LoadContract()
	if err != nil {
		return server.Built{}, err
	}
	contract, err := declared.For(active)
	if err != nil {
		return server.Built{}, err
	}
	in := d.Telemetry.Service("gateway")
	// The gateway serves the contract for its own setting; in front of
	// separate services, give every process the same DEFECTS.
	active.Report(in, defects.IDs()...)
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
	for _, c := range Categories {
		if u, ok := ups[c.Name]; ok {
			handlers[c.Name] = NewUpstream(c, u.URL, NewTransport(u.Timeout), metrics, in.Logger)
			in.Logger.Info("category proxied", categoryAttr(c.Name), slog.String("upstream", u.URL.String()), slog.Duration("timeout", u.Timeout))
			continue
		}
		svc, err := embedded(c.Name, d)
		if err != nil {
			return server.Built{}, errors.Join(err, closeAll())
		}
		closers = append(closers, svc.Close)
		handlers[c.Name] = inProcess{svc}
		in.Logger.Info("category in-process", categoryAttr(c.Name))
	}
	g, err := New(handlers, contract, active, in)
	if err != nil {
		return server.Built{}, errors.Join(err, closeAll())
	}
	return server.Built{Handler: g, Close: closeAll, Ready: g.Ready,
		Admin: map[string]http.Handler{PathDefects: defectsReport(active)}}, nil
}

// PathDefects is the admin endpoint that reports which defects are active.
const PathDefects = "/defects"

// defectsReport answers {"setting": ..., "active": [...], "off": [...],
// "defects": [{"id", "category", "endpoint", "active"}, ...]}.
func defectsReport(active defects.Set) http.Handler {
	type row struct {
		ID       defects.ID `json:"id"`
		Category string     `json:"category"`
		Endpoint string     `json:"endpoint"`
		Active   bool       `json:"active"`
	}
	report := struct {
		Setting string       `json:"setting"`
		Active  []defects.ID `json:"active"`
		Off     []defects.ID `json:"off"`
		Defects []row        `json:"defects"`
	}{Setting: active.String(), Active: active.ActiveIDs(), Off: []defects.ID{}}
	for _, d := range defects.Catalogue {
		on := active.Active(d.ID)
		report.Defects = append(report.Defects, row{d.ID, d.Category, d.Endpoint, on})
		if !on {
			report.Off = append(report.Off, d.ID)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		respond.Value(w, http.StatusOK, report)
	})
}
