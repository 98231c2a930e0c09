package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	t.Parallel()
	p := Program{Name: "x", DefaultAddr: ":8081", DefaultAdminAddr: ":9091"}
	tests := []struct {
		rule    string
		args    []string
		env     map[string]string
		want    Config
		wantErr string
	}{
		{"defaults", nil, nil, Config{Addr: ":8081", AdminAddr: ":9091", ShutdownTimeout: 15 * time.Second, Limits: DefaultLimits}, ""},
		{"the environment", nil, map[string]string{"ADDR": ":9", "SHUTDOWN_TIMEOUT": "3s"}, Config{Addr: ":9", AdminAddr: ":9091", ShutdownTimeout: 3 * time.Second, Limits: DefaultLimits}, ""},
		{"a flag wins over the environment", []string{"-addr", "127.0.0.1:7"}, map[string]string{"ADDR": ":9"}, Config{Addr: "127.0.0.1:7", AdminAddr: ":9091", ShutdownTimeout: 15 * time.Second, Limits: DefaultLimits}, ""},
		{"an empty variable is unset", nil, map[string]string{"ADDR": ""}, Config{Addr: ":8081", AdminAddr: ":9091", ShutdownTimeout: 15 * time.Second, Limits: DefaultLimits}, ""},
		{"a bad duration", nil, map[string]string{"SHUTDOWN_TIMEOUT": "soon"}, Config{}, "SHUTDOWN_TIMEOUT"},
		{"a negative duration", nil, map[string]string{"SHUTDOWN_TIMEOUT": "-1s"}, Config{}, "SHUTDOWN_TIMEOUT"},
		{"an unknown flag", []string{"-port", "1"}, nil, Config{}, "port"},
		{"a stray argument", []string{"serve"}, nil, Config{}, "serve"},
		{"a bad log format", nil, map[string]string{"LOG_FORMAT": "xml"}, Config{}, "LOG_FORMAT"},
		{"a bad log level", nil, map[string]string{"LOG_LEVEL": "loud"}, Config{}, "LOG_LEVEL"},
		{"the admin address", []string{"-admin-addr", "127.0.0.1:1"}, map[string]string{"ADMIN_ADDR": ":2"}, Config{Addr: ":8081", AdminAddr: "127.0.0.1:1", ShutdownTimeout: 15 * time.Second, Limits: DefaultLimits}, ""},
		{"a bad header limit", nil, map[string]string{"MAX_HEADER_BYTES": "10"}, Config{}, "MAX_HEADER_BYTES"},
		{"a bad read timeout", nil, map[string]string{"READ_HEADER_TIMEOUT": "0s"}, Config{}, "READ_HEADER_TIMEOUT"},
		{"admin and API on one port", nil, map[string]string{"ADMIN_ADDR": ":8081"}, Config{}, "admin"},
	}
	for _, tt := range tests {
		t.Run(tt.rule, func(t *testing.T) {
			env := NewEnv(func(k string) string { return tt.env[k] })
			env.Telemetry(io.Discard)
			got, err := ParseConfig(p, tt.args, env)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestEnvInt(t *testing.T) {
	t.Parallel()
	env := NewEnv(func(k string) string { return map[string]string{"A": "5", "B": "x", "C": "99"}[k] })
	if got := env.Int("A", 1, 0, 10); got != 5 || env.Err() != nil {
		t.Fatalf("A = %d, %v", got, env.Err())
	}
	if got := env.Int("UNSET", 7, 0, 10); got != 7 || env.Err() != nil {
		t.Fatalf("UNSET = %d, %v", got, env.Err())
	}
	if env.Int("B", 1, 0, 10); env.Err() == nil || !strings.Contains(env.Err().Error(), "B=") {
		t.Fatalf("a word was accepted: %v", env.Err())
	}
	env2 := NewEnv(func(k string) string { return "99" })
	if env2.Int("C", 1, 0, 10); env2.Err() == nil {
		t.Fatal("an out-of-range value was accepted")
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
