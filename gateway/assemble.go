package gateway

import (
	"errors"
	"log/slog"
	"net/http"

	conformancesvc "github.com/defectshowcase/showcase/conformance-svc"
	errorssvc "github.com/defectshowcase/showcase/errors-svc"
	performancesvc "github.com/defectshowcase/showcase/performance-svc"
	"github.com/defectshowcase/showcase/platform/server"
	securitysvc "github.com/defectshowcase/showcase/security-svc"
)

// embedded builds a category's service in-process from the same settings
// its standalone binary reads; the service tags its own log lines.
func embedded(name string, env *server.Env, logger *slog.Logger) (server.Service, error) {
	switch name {
	case "security":
		return securitysvc.New(securitysvc.ConfigFromEnv(env, logger))
	case "errors":
		return errorssvc.New(errorssvc.ConfigFromEnv(env, logger))
	case "conformance":
		return conformancesvc.New(conformancesvc.ConfigFromEnv(env, logger))
	case "performance":
		return performancesvc.New(performancesvc.ConfigFromEnv(env, logger))
	}
	return nil, errors.New("unknown category " + name)
}

// Assemble builds the gateway from the environment: each category with an
// upstream URL is proxied, every other one is served in-process. base is
// the process's logger without a service attribute. The returned close
// releases the in-process services.
func Assemble(env *server.Env, base *slog.Logger) (*Gateway, func() error, error) {
	logger := base.With(slog.String("service", "gateway"))
	ups, err := ParseUpstreams(env)
	if err != nil {
		return nil, nil, err
	}
	contract, err := LoadContract()
	if err != nil {
		return nil, nil, err
	}
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		return errors.Join(errs...)
	}
	transport := NewTransport()
	handlers := map[string]http.Handler{}
	for _, c := range Categories {
		if u, ok := ups[c.Name]; ok {
			handlers[c.Name] = NewProxy(c.Name, u, transport, logger)
			logger.Info("category proxied", categoryAttr(c.Name), slog.String("upstream", u.String()))
			continue
		}
		svc, err := embedded(c.Name, env, base)
		if err != nil {
			return nil, nil, errors.Join(err, closeAll())
		}
		closers = append(closers, svc.Close)
		handlers[c.Name] = svc.Handler()
		logger.Info("category in-process", categoryAttr(c.Name))
	}
	g, err := New(handlers, contract)
	if err != nil {
		return nil, nil, errors.Join(err, closeAll())
	}
	return g, closeAll, nil
}
