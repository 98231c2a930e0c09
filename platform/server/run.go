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
)

// Program describes one binary: its name, its default API address and how to
// build its handler from the environment.
type Program struct {
	Name        string
	DefaultAddr string
	// Build makes the handler; close, if not nil, runs after shutdown. The
	// logger has no service attribute: each service adds its own name.
	Build func(env *Env, logger *slog.Logger) (h http.Handler, close func() error, err error)
}

// Service is what each category's library builds: a router and what it
// holds open.
type Service interface {
	Handler() http.Handler
	Close() error
}

// ServiceProgram is the Program of a binary that serves one Service.
func ServiceProgram(name, defaultAddr string, build func(env *Env, logger *slog.Logger) (Service, error)) Program {
	return Program{
		Name:        name,
		DefaultAddr: defaultAddr,
		Build: func(env *Env, logger *slog.Logger) (http.Handler, func() error, error) {
			svc, err := build(env, logger)
			if err != nil {
				return nil, nil, err
			}
			return svc.Handler(), svc.Close, nil
		},
	}
}

// Config is what every binary reads before building its service.
type Config struct {
	Addr            string
	ShutdownTimeout time.Duration
}

// ParseConfig reads the common settings: flags win over the environment,
// which wins over the defaults.
func ParseConfig(p Program, args []string, env *Env) (Config, error) {
	cfg := Config{
		Addr:            env.String("ADDR", p.DefaultAddr),
		ShutdownTimeout: env.Duration("SHUTDOWN_TIMEOUT", 15*time.Second),
	}
	fs := flag.NewFlagSet(p.Name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&cfg.Addr, "addr", cfg.Addr, "API listen address (env ADDR)")
	fs.DurationVar(&cfg.ShutdownTimeout, "shutdown-timeout", cfg.ShutdownTimeout, "grace period for in-flight requests (env SHUTDOWN_TIMEOUT)")
	if err := fs.Parse(args); err != nil {
		return Config{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	if fs.NArg() > 0 {
		return Config{}, fmt.Errorf("%s: unexpected argument %q", p.Name, fs.Arg(0))
	}
	if err := env.Err(); err != nil {
		return Config{}, fmt.Errorf("%s: %w", p.Name, err)
	}
	return cfg, nil
}

// Run builds p, serves it until ctx ends and shuts down gracefully. When
// ready is not nil it receives the bound address once the listener is open.
func Run(ctx context.Context, p Program, args []string, getenv func(string) string, stdout io.Writer, ready chan<- net.Addr) error {
	env := NewEnv(getenv)
	base := env.Logger(stdout)
	logger := base.With(slog.String("service", p.Name))
	cfg, err := ParseConfig(p, args, env)
	if err != nil {
		return err
	}
	h, closeFn, err := p.Build(env, base)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	if err := env.Err(); err != nil {
		return fmt.Errorf("%s: %w", p.Name, errors.Join(err, callClose(closeFn)))
	}
	defer func() {
		if err := callClose(closeFn); err != nil {
			logger.Error("close", slog.String("error", err.Error()))
		}
	}()
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return fmt.Errorf("%s: %w", p.Name, err)
	}
	logger.Info("listening", slog.String("addr", ln.Addr().String()))
	if ready != nil {
		ready <- ln.Addr()
	}
	err = Serve(ctx, New(h, logger), ln, cfg.ShutdownTimeout)
	logger.Info("stopped")
	return err
}

func callClose(f func() error) error {
	if f == nil {
		return nil
	}
	return f()
}

// Main is the whole of a cmd's main: it runs p until SIGINT or SIGTERM and
// exits non-zero on error.
func Main(p Program) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := Run(ctx, p, os.Args[1:], os.Getenv, os.Stdout, nil); err != nil {
		fmt.Fprintln(os.Stderr, err)
		stop()
		os.Exit(1)
	}
}
