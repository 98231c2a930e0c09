package server

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/defectshowcase/showcase/platform/observe"
)

// Program describes one binary: its name, its default addresses and how to
// build what it serves.
type Program struct {
	Name             string
	DefaultAddr      string
	DefaultAdminAddr string
	Build            func(Deps) (Built, error)
}

// Deps is what a program builds from.
type Deps struct {
	Env       *Env
	Telemetry *observe.Telemetry // the process's one registry and log output
}

// Built is what a program serves.
type Built struct {
	Handler http.Handler
	Close   func() error            // may be nil; runs after shutdown
	Ready   ReadyFunc               // may be nil
	Admin   map[string]http.Handler // further GET endpoints on the admin listener, by path
}

// Service is what each category's library builds: a router and what it
// holds open.
type Service interface {
	Handler() http.Handler
	Close() error
}

// Readier is a Service (or handler) that can tell whether it is ready.
type Readier interface {
	Ready(ctx context.Context) error
}

// ServiceProgram is the Program of a binary that serves one Service; a
// service with a Ready method has it checked by /readyz.
func ServiceProgram(name, defaultAddr, defaultAdminAddr string, build func(Deps) (Service, error)) Program {
	return Program{
		Name:             name,
		DefaultAddr:      defaultAddr,
		DefaultAdminAddr: defaultAdminAddr,
		Build: func(d Deps) (Built, error) {
			svc, err := build(d)
			if err != nil {
				return Built{}, err
			}
			b := Built{Handler: svc.Handler(), Close: svc.Close}
			if r, ok := svc.(Readier); ok {
				b.Ready = r.Ready
			}
			return b, nil
		},
	}
}

// Config is what every binary reads before building its service.
type Config struct {
	Addr            string
	AdminAddr       string
	ShutdownTimeout time.Duration
	Limits          Limits
	Profiling       bool // PPROF=1: Go's profiles on the admin listener
}

// ParseConfig reads the common settings: flags win over the environment,
// which wins over the defaults.
func ParseConfig(p Program, args []string, env *Env) (Config, error) {
	cfg := Config{
		Addr:            env.String("ADDR", p.DefaultAddr),
		AdminAddr:       env.String("ADMIN_ADDR", p.DefaultAdminAddr),
		ShutdownTimeout: env.Duration("SHUTDOWN_TIMEOUT", 15*time.Second),
		Profiling:       env.String("PPROF", "") == "1",
		Limits: Limits{
			ReadHeaderTimeout: env.Duration("READ_HEADER_TIMEOUT", DefaultLimits.ReadHeaderTimeout),
			ReadTimeout:       env.Duration("READ_TIMEOUT", DefaultLimits.ReadTimeout),
			WriteTimeout:      env.Duration("WRITE_TIMEOUT", DefaultLimits.WriteTimeout),
			IdleTimeout:       env.Duration("IDLE_TIMEOUT", DefaultLimits.IdleTimeout),
			MaxHeaderBytes:    env.Int("MAX_HEADER_BYTES", DefaultLimits.MaxHeaderBytes, 8<<10, 1<<20),
		},
	}
	fs := flag.NewFlagSet(p.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "API listen address (env ADDR)")
	fs.StringVar(&cfg.AdminAddr, "admin-addr", cfg.AdminAddr, "admin listen address: /metrics, /healthz, /readyz (env ADMIN_ADDR)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "grace period for in-flight requests (env SHUTDOWN_TIMEOUT)")
	fs.Func("defects", "which planted defects are active: all, none, or a list of IDs and categories (env DEFECTS)", func(v string) error {
		env.Override("DEFECTS", v)
		return nil
	})
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("%s: unexpected argument %q", p.Name, fs.Arg(0))
	}
	if err := env.Err(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	if _, port, _ := net.SplitHostPort(cfg.Addr); cfg.Addr == cfg.AdminAddr && port != "0" {
		return Config{}, fmt.Errorf("%s: the API and admin addresses are both %s; the admin endpoints never share the API port", p.Name, cfg.Addr)
	}
	return cfg, nil
}

// Run builds p, serves its API and admin listeners until ctx ends, and
// shuts down gracefully: /readyz turns 503, the API listener stops
// accepting and drains, then the admin listener closes. The "listening"
// log line names the bound addresses.
func Run(ctx context.Context, p Program, args []string, getenv func(string) string, stdout io.Writer) error {
	env := NewEnv(getenv)
	tel, reg := env.Telemetry(stdout)
	logger := tel.Service(p.Name).Logger
	cfg, err := ParseConfig(p, args, env)
	if err != nil {
		return err
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	built, err := p.Build(Deps{Env: env, Telemetry: tel})
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if err := env.Err(); err != nil {
		return fmt.Errorf("%s: %w", p.Name, errors.Join(err, callClose(built.Close)))
	}
	defer func() {
		if err := callClose(built.Close); err != nil {
			logger.Error("close", slog.String("error", err.Error()))
		}
	}()
	apiLn, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	adminLn, err := net.Listen("tcp", cfg.AdminAddr)
	if err != nil {
		_ = apiLn.Close()
		return fmt.Errorf("%s: admin: %w", p.Name, err)
	}
	admin := NewAdmin(reg, built.Ready, logger, cfg.Profiling)
	for path, h := range built.Admin {
		admin.Handle(path, h)
	}
	logger.Info("listening", slog.String("addr", apiLn.Addr().String()), slog.String("admin", adminLn.Addr().String()))

	adminCtx, stopAdmin := context.WithCancel(context.Background())
	adminDone := make(chan error, 1)
	go func() { adminDone <- Serve(adminCtx, New(admin, logger, cfg.Limits), adminLn, time.Second) }()
	apiCtx, stopAPI := context.WithCancel(context.Background())
	apiDone := make(chan error, 1)
	go func() { apiDone <- Serve(apiCtx, New(built.Handler, logger, cfg.Limits), apiLn, cfg.ShutdownTimeout) }()

	// Whichever ends first (the signal, or a listener failing), the API
	// drains before the admin listener, so /readyz says 503 meanwhile.
	var apiErr, adminErr error
	apiOpen, adminOpen := true, true
	select {
	case <-ctx.Done():
		logger.Info("stopping", slog.Duration("grace", cfg.ShutdownTimeout))
	case apiErr = <-apiDone:
		apiOpen = false
	case adminErr = <-adminDone:
		adminOpen = false
	}
	admin.Stopping()
	stopAPI()
	if apiOpen {
		apiErr = <-apiDone
	}
	stopAdmin()
	if adminOpen {
		adminErr = <-adminDone
	}
	logger.Info("stopped")
	return errors.Join(apiErr, adminErr)
}

// Healthcheck asks /readyz on the admin address the process was given
// (ADMIN_ADDR, or p's default) over loopback.
func Healthcheck(p Program, getenv func(string) string) error {
	addr := NewEnv(getenv).String("ADMIN_ADDR", p.DefaultAdminAddr)
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("healthcheck: ADMIN_ADDR=%q: %w", addr, err)
	}
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	client := &http.Client{Timeout: 2 * time.Second}
	resp, err := client.Get("http://" + net.JoinHostPort(host, port) + PathReadyz)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("healthcheck: not ready: %d %s", resp.StatusCode, body)
	}
	return nil
}

func callClose(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

// Main is the whole of a cmd's main: it runs p until SIGINT or SIGTERM and
// exits non-zero on error. `<binary> healthcheck` instead asks the running
// process's /readyz and exits 0 when it is ready (images have no curl).
func Main(p Program) {
	if len(os.Args) == 2 && os.Args[1] == "healthcheck" {
		if err := Healthcheck(p, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, p, os.Args[1:], os.Getenv, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
}
