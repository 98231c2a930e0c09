// Package server runs an http.Server with the showcase's limits and shuts it
// down gracefully when its context ends.
package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"
)

// Limits bound what one connection can hold: a client sending its headers or
// body slowly (slowloris) is cut off, an idle connection closed, and headers
// (the request line included) are bounded in size.
type Limits struct {
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration // headers and body
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
}

// DefaultLimits: the write timeout leaves room for the slowest legitimate
// request, endpoint 10 at its maximum n waiting behind a full queue; the
// header limit fits a 4300-digit query parameter with room to spare.
var DefaultLimits = Limits{
	ReadHeaderTimeout: 10 * time.Second,
	ReadTimeout:       30 * time.Second,
	WriteTimeout:      2 * time.Minute,
	IdleTimeout:       2 * time.Minute,
	MaxHeaderBytes:    64 << 10,
}

// New returns a server for h with the given limits. An answer given before
// the request's body was read reaches the client (answerBeforeBody).
func New(h http.Handler, logger *slog.Logger, l Limits) *http.Server {
	return &http.Server{
		Handler:           answerBeforeBody(h),
		ReadHeaderTimeout: l.ReadHeaderTimeout,
		ReadTimeout:       l.ReadTimeout,
		WriteTimeout:      l.WriteTimeout,
		IdleTimeout:       l.IdleTimeout,
		MaxHeaderBytes:    l.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
}

// Serve serves srv on ln until ctx ends, then stops accepting and waits up to
// shutdownTimeout for in-flight requests before closing what is left.
func Serve(ctx context.Context, srv *http.Server, ln net.Listener, shutdownTimeout time.Duration) error {
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		_ = srv.Close()
		return fmt.Errorf("shutdown %s: in-flight requests still running after %s", ln.Addr(), shutdownTimeout)
	}
	if err != nil {
		return fmt.Errorf("shutdown %s: %w", ln.Addr(), err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", ln.Addr(), err)
	}
	return nil
}
