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
	"runtime"
	"runtime/debug"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/automaxprocs/maxprocs"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/version"
)

// Program describes one binary: its name, its default addresses, its own
// settings and how to build what it serves from them.
type Program struct {
	Name             string
	DefaultAddr      string
	DefaultAdminAddr string
	// Configure declares the program's own settings on s and returns what
	// builds the program once they are parsed. Nothing may be opened here.
	Configure func(s *Settings) Builder
}

// Builder builds a program on the process's telemetry (one registry and
// log output).
type Builder func(tel *observe.Telemetry) (Built, error)

// Built is what a program serves.
type Built struct {
	Handler http.Handler
	Close   func() error            // may be nil; runs after shutdown
	Ready   ReadyFunc               // may be nil
	Admin   map[string]http.Handler // further endpoints on the admin listener, by pattern ("GET /defects")
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

// ServiceBuilt is what a binary serving one Service serves; a service with
// a Ready method has it checked by /readyz.
func ServiceBuilt(svc Service, err error) (Built, error) {
	if err != nil {
		return Built{}, err
	}
	b := Built{Handler: svc.Handler(), Close: svc.Close}
	if r, ok := svc.(Readier); ok {
		b.Ready = r.Ready
	}
	return b, nil
}

// Config is what every binary reads besides its own settings.
type Config struct {
	Addr            string
	AdminAddr       string
	ShutdownTimeout time.Duration
	Limits          Limits
	Profiling       bool // Go's profiles on the admin listener
	LogText         bool // logs as text rather than JSON
	LogLevel        slog.Level
	LogRequests     observe.LogRequests
}

// Loaded is a program whose settings are parsed: ready to build.
type Loaded struct {
	Config   Config
	Settings *Settings
	Build    Builder
}

// Load declares every setting of p, the common ones and p's own, and parses
// them from args and getenv. A bad value is a *UsageError; -h is
// flag.ErrHelp (Settings can then print the usage). Nothing is opened.
func Load(p Program, args []string, getenv func(string) string) (*Loaded, error) {
	s := NewSettings(p.Name, getenv)
	var cfg Config
	s.Addr(&cfg.Addr, "addr", "ADDR", p.DefaultAddr, "API listen address")
	s.Addr(&cfg.AdminAddr, "admin-addr", "ADMIN_ADDR", p.DefaultAdminAddr, "admin listen address: /metrics, /healthz, /readyz (and the gateway's /defects)")
	s.Duration(&cfg.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", 15*time.Second, "grace period for in-flight requests after SIGTERM")
	s.Duration(&cfg.Limits.ReadHeaderTimeout, "read-header-timeout", "READ_HEADER_TIMEOUT", DefaultLimits.ReadHeaderTimeout, "a client must send its headers within this (slowloris)")
	s.Duration(&cfg.Limits.ReadTimeout, "read-timeout", "READ_TIMEOUT", DefaultLimits.ReadTimeout, "... and its whole request, body included")
	s.Duration(&cfg.Limits.WriteTimeout, "write-timeout", "WRITE_TIMEOUT", DefaultLimits.WriteTimeout, "room for the slowest legitimate answer")
	s.Duration(&cfg.Limits.IdleTimeout, "idle-timeout", "IDLE_TIMEOUT", DefaultLimits.IdleTimeout, "an idle keep-alive connection is closed after this")
	s.Int(&cfg.Limits.MaxHeaderBytes, "max-header-bytes", "MAX_HEADER_BYTES", DefaultLimits.MaxHeaderBytes, 8<<10, 1<<20, "request line and headers; beyond it, 431")
	s.Func("log-format", "LOG_FORMAT", "json", "json, or text for local reading", func(v string) error {
		switch v {
		case "json", "text":
			cfg.LogText = v == "text"
			return nil
		}
		return errors.New("want json or text")
	}, func() string {
		if cfg.LogText {
			return "text"
		}
		return "json"
	})
	s.Text(&cfg.LogLevel, "log-level", "LOG_LEVEL", "debug, info, warn or error")
	s.Text(&cfg.LogRequests, "log-requests", "LOG_REQUESTS", "which requests get a log line: all, errors (answered 5xx) or none")
	s.Bool(&cfg.Profiling, "pprof", "PPROF", false, "serve Go's profiles under /debug/pprof/ on the admin listener")
	l := &Loaded{Settings: s}
	if p.Configure != nil {
		l.Build = p.Configure(s)
	}
	if err := s.Parse(args); err != nil {
		return l, err
	}
	if _, port, _ := net.SplitHostPort(cfg.Addr); cfg.Addr == cfg.AdminAddr && port != "0" {
		return l, &UsageError{fmt.Errorf("%s: the API and admin addresses are both %s; the admin endpoints never share the API port", p.Name, cfg.Addr)}
	}
	l.Config = cfg
	return l, nil
}

// Telemetry returns the process's telemetry as configured: a new registry,
// and logs on w.
func (l *Loaded) Telemetry(w io.Writer) (*observe.Telemetry, *prometheus.Registry) {
	reg := prometheus.NewRegistry()
	return &observe.Telemetry{Registry: reg, Writer: w, JSON: !l.Config.LogText, Level: l.Config.LogLevel, Requests: l.Config.LogRequests,
		Exposure: observe.NewExposureLog()}, reg
}

// Run loads p's settings (with -h it writes the usage to stdout and returns
// flag.ErrHelp), builds p, serves its API and admin listeners until ctx
// ends, and shuts down gracefully: /readyz turns 503, the API listener stops
// accepting and drains, then the admin listener closes. The "listening"
// log line names the bound addresses.
func Run(ctx context.Context, p Program, args []string, getenv func(string) string, stdout io.Writer) error {
	l, err := Load(p, args, getenv)
	if errors.Is(err, flag.ErrHelp) {
		l.Settings.Usage(stdout)
		return err
	}
	if errors.Is(err, ErrVersion) {
		fmt.Fprintln(stdout, p.Name, version.String())
		return err
	}
	if err != nil {
		return err
	}
	cfg := l.Config
	tel, reg := l.Telemetry(stdout)
	logger := tel.Service(p.Name).Logger
	logger.Info("config", l.Settings.LogAttrs()...)
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	built, err := l.Build(tel)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	// What building left behind (the contract parsed, its views encoded)
	// is garbage from now on: collect it and give its pages back before
	// serving, rather than idle on them until the scavenger does.
	debug.FreeOSMemory()
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
	for pattern, h := range built.Admin {
		admin.Handle(pattern, h)
	}
	logger.Info("listening", slog.String("addr", apiLn.Addr().String()), slog.String("admin", adminLn.Addr().String()), slog.String("version", version.String()),
		slog.Int("gomaxprocs", runtime.GOMAXPROCS(0)))

	adminCtx, stopAdmin := context.WithCancel(context.Background())
	adminDone := make(chan error, 1)
	adminSrv := New(admin, logger, cfg.Limits)
	// The admin port's requests end when it stops: a stream that never
	// goes idle (the board's) would otherwise hold its shutdown.
	adminSrv.BaseContext = func(net.Listener) context.Context { return adminCtx }
	go func() { adminDone <- Serve(adminCtx, adminSrv, adminLn, time.Second) }()
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
	l, err := Load(p, nil, getenv)
	if err != nil {
		return fmt.Errorf("healthcheck: %w", err)
	}
	host, port, _ := net.SplitHostPort(l.Config.AdminAddr)
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

// Main is the whole of a cmd's main: it runs p until SIGINT or SIGTERM.
// It exits 0 after -h, 2 on a bad command line or setting (nothing opened),
// 1 on any other error. `<binary> healthcheck` instead asks the running
// process's /readyz and exits 0 when it is ready (images have no curl).
func Main(p Program) {
	if len(os.Args) == 2 && os.Args[1] == "healthcheck" {
		if err := Healthcheck(p, os.Getenv); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	// Go sets GOMAXPROCS from a container's CPU limit rounded up, at
	// least 2; under a limit below two cores that second thread only
	// hands requests back and forth within the same budget (the proxy
	// spent a fifth more CPU per request under half a core,
	// docs/performance.md). automaxprocs rounds down, at least 1; an
	// explicit GOMAXPROCS wins.
	_, _ = maxprocs.Set(maxprocs.Logger(func(string, ...any) {}))
	TuneGC(os.Getenv)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := Run(ctx, p, os.Args[1:], os.Getenv, os.Stdout)
	var usage *UsageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp), errors.Is(err, ErrVersion):
		stop()
		os.Exit(0)
	case errors.As(err, &usage):
		fmt.Fprintf(os.Stderr, "%v\n(%s -h lists every setting)\n", err, p.Name)
		stop()
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
}

// Build loads p's settings from getenv alone and builds p on tel: a program
// as its binary would serve it, for tests and tools that serve it
// themselves.
func Build(p Program, getenv func(string) string, tel *observe.Telemetry) (Built, error) {
	l, err := Load(p, nil, getenv)
	if err != nil {
		return Built{}, err
	}
	return l.Build(tel)
}
