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
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/platform/observe"
)

func TestLoad(t *testing.T) {
	t.Parallel()
	p := Program{Name: "x", DefaultAddr: ":8081", DefaultAdminAddr: ":9091"}
	def := Config{Addr: ":8081", AdminAddr: ":9091", ShutdownTimeout: 15 * time.Second, Limits: DefaultLimits}
	with := func(f func(c *Config)) Config { c := def; f(&c); return c }
	tests := []struct {
		rule    string
		args    []string
		env     map[string]string
		want    Config
		wantErr string // the setting the error must name; "" wants none
	}{
		{"defaults", nil, nil, def, ""},
		{"the environment", nil, map[string]string{"ADDR": ":9", "SHUTDOWN_TIMEOUT": "3s"}, with(func(c *Config) { c.Addr, c.ShutdownTimeout = ":9", 3*time.Second }), ""},
		{"a flag wins over the environment", []string{"-addr", "127.0.0.1:7"}, map[string]string{"ADDR": ":9"}, with(func(c *Config) { c.Addr = "127.0.0.1:7" }), ""},
		{"an empty variable is unset", nil, map[string]string{"ADDR": ""}, def, ""},
		{"every variable has its flag", []string{"-read-timeout=5s", "-max-header-bytes=9000", "-log-format=text", "-log-level=debug", "-pprof"}, nil,
			with(func(c *Config) {
				c.Limits.ReadTimeout, c.Limits.MaxHeaderBytes, c.LogText, c.LogLevel, c.Profiling = 5*time.Second, 9000, true, slog.LevelDebug, true
			}), ""},
		{"PPROF takes true", nil, map[string]string{"PPROF": "true"}, with(func(c *Config) { c.Profiling = true }), ""},
		{"PPROF refuses yes", nil, map[string]string{"PPROF": "yes"}, Config{}, "PPROF"},
		{"a bad duration", nil, map[string]string{"SHUTDOWN_TIMEOUT": "soon"}, Config{}, "SHUTDOWN_TIMEOUT"},
		{"a negative duration", nil, map[string]string{"SHUTDOWN_TIMEOUT": "-1s"}, Config{}, "SHUTDOWN_TIMEOUT"},
		{"a zero duration as a flag", []string{"-shutdown-timeout=0s"}, nil, Config{}, "-shutdown-timeout"},
		{"an empty address as a flag", []string{"-addr="}, nil, Config{}, "-addr"},
		{"an address without a port", nil, map[string]string{"ADDR": "garbage"}, Config{}, "ADDR"},
		{"a port beyond 65535", []string{"-admin-addr", ":70000"}, nil, Config{}, "-admin-addr"},
		{"an unknown flag", []string{"-port", "1"}, nil, Config{}, "port"},
		{"a stray argument", []string{"serve"}, nil, Config{}, "serve"},
		{"a bad log format", nil, map[string]string{"LOG_FORMAT": "xml"}, Config{}, "LOG_FORMAT"},
		{"a bad log level", nil, map[string]string{"LOG_LEVEL": "loud"}, Config{}, "LOG_LEVEL"},
		{"the admin address", []string{"-admin-addr", "127.0.0.1:1"}, map[string]string{"ADMIN_ADDR": ":2"}, with(func(c *Config) { c.AdminAddr = "127.0.0.1:1" }), ""},
		{"a bad header limit", nil, map[string]string{"MAX_HEADER_BYTES": "10"}, Config{}, "MAX_HEADER_BYTES"},
		{"a bad read timeout", nil, map[string]string{"READ_HEADER_TIMEOUT": "0s"}, Config{}, "READ_HEADER_TIMEOUT"},
		{"admin and API on one port", nil, map[string]string{"ADMIN_ADDR": ":8081"}, Config{}, "admin"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			l, err := Load(p, tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr != "" {
				var usage *UsageError
				if !errors.As(err, &usage) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want a usage error naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || l.Config != tt.want {
				t.Fatalf("got %+v, %v; want %+v", l.Config, err, tt.want)
			}
		})
	}
}

// A program's own settings are flags and variables like the common ones,
// -h lists them all with their defaults, and the start-up log line shows
// every value but a secret's.
func TestProgramSettings(t *testing.T) {
	t.Parallel()
	var key string
	var n int
	p := Program{Name: "x", DefaultAddr: ":1", DefaultAdminAddr: ":2", Configure: func(s *Settings) Builder {
		s.String(&key, "api-key", "API_KEY", "demo", "the key").Secret()
		s.Int(&n, "workers", "WORKERS", 3, 1, 8, "how many")
		return func(*observe.Telemetry) (Built, error) { return Built{}, nil }
	}}
	l, err := Load(p, []string{"-workers", "5"}, func(k string) string { return map[string]string{"API_KEY": "s3cret"}[k] })
	if err != nil || key != "s3cret" || n != 5 {
		t.Fatalf("%v %q %d", err, key, n)
	}
	line := fmt.Sprint(l.Settings.LogAttrs()...)
	if strings.Contains(line, "s3cret") || !strings.Contains(line, "WORKERS=5") || !strings.Contains(line, "API_KEY=(set)") {
		t.Errorf("log attributes %s", line)
	}
	if _, err := Load(p, []string{"-workers", "9"}, func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), "-workers") {
		t.Errorf("an out-of-range flag: %v", err)
	}
	var out strings.Builder
	err = Run(context.Background(), p, []string{"-h"}, func(string) string { return "" }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("-h: %v", err)
	}
	for _, want := range []string{"Usage: x [flags]", "-addr, ADDR  (default \":1\")", "-shutdown-timeout, SHUTDOWN_TIMEOUT  (default 15s)",
		"-pprof, PPROF  (default false)", "-api-key, API_KEY  (default \"demo\")", "-workers, WORKERS  (default 3)", "how many"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the usage lacks %q:\n%s", want, out.String())
		}
	}
}

// Serve lets an in-flight request finish after its context ends, then returns.
func TestServeDrainsInFlight(t *testing.T) {
	t.Parallel()
	started := make(chan struct{})
	h := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		close(started)
		time.Sleep(300 * time.Millisecond)
		_, _ = io.WriteString(w, "done")
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Serve(ctx, New(h, slog.New(slog.DiscardHandler), DefaultLimits), ln, 5*time.Second) }()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + ln.Addr().String())
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	if body := <-got; body != "done" {
		t.Fatalf("in-flight request got %q, want done", body)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		t.Fatal("still accepting after shutdown")
	}
}
