package server

import (
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/platform/observe"
)

// Env reads configuration values: getenv with a default for absent or empty
// values, and the first parse error remembered for Err. Parsing config is a
// pure function of getenv, so it is table-tested without touching the process.
type Env struct {
	getenv    func(string) string
	overrides map[string]string // set by command-line flags, which win
	err       error
}

// NewEnv wraps getenv (os.Getenv in production).
func NewEnv(getenv func(string) string) *Env { return &Env{getenv: getenv} }

// Err is the first invalid value met, or nil.
func (e *Env) Err() error { return e.err }

// Reject records that key's value is invalid, and why; Err reports it.
func (e *Env) Reject(key, value, why string) {
	if e.err == nil {
		e.err = fmt.Errorf("%s=%q: %s", key, value, why)
	}
}

// Override makes key read value, as a command-line flag does.
func (e *Env) Override(key, value string) {
	if e.overrides == nil {
		e.overrides = map[string]string{}
	}
	e.overrides[key] = value
}

func (e *Env) get(key string) string {
	if v, ok := e.overrides[key]; ok {
		return v
	}
	return e.getenv(key)
}

func (e *Env) fail(key, value, want string) {
	if e.err == nil {
		e.err = fmt.Errorf("%s=%q: want %s", key, value, want)
	}
}

// String returns the value of key, or def when it is unset or empty.
func (e *Env) String(key, def string) string {
	if v := e.get(key); v != "" {
		return v
	}
	return def
}

// Int returns the integer value of key within [min, max], or def.
func (e *Env) Int(key string, def, min, max int) int {
	v := e.get(key)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < min || n > max {
		e.fail(key, v, fmt.Sprintf("an integer from %d to %d", min, max))
		return def
	}
	return n
}

// Duration returns the positive duration value of key (Go syntax, "10s"), or def.
func (e *Env) Duration(key string, def time.Duration) time.Duration {
	v := e.get(key)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		e.fail(key, v, "a positive duration such as 10s")
		return def
	}
	return d
}

// Telemetry returns the process's telemetry: a new registry, and logs on w
// as JSON (the default) or as text for local reading with LOG_FORMAT=text,
// at LOG_LEVEL (debug, info, warn, error; default info).
func (e *Env) Telemetry(w io.Writer) (*observe.Telemetry, *prometheus.Registry) {
	var level slog.Level
	if v := e.getenv("LOG_LEVEL"); v != "" {
		if err := level.UnmarshalText([]byte(v)); err != nil {
			e.fail("LOG_LEVEL", v, "debug, info, warn or error")
		}
	}
	json := true
	switch f := e.String("LOG_FORMAT", "json"); f {
	case "json":
	case "text":
		json = false
	default:
		e.fail("LOG_FORMAT", f, "json or text")
	}
	reg := prometheus.NewRegistry()
	return &observe.Telemetry{Registry: reg, Writer: w, JSON: json, Level: level}, reg
}
