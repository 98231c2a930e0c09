package server

import (
	"encoding"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"
)

// Settings is a program's configuration: every setting is both a
// command-line flag and an environment variable, read through the same
// validation. A flag wins over its variable, which wins over the default;
// an empty variable counts as unset. Declare the settings, then Parse once,
// before anything is opened.
type Settings struct {
	name    string
	getenv  func(string) string
	fs      *flag.FlagSet
	list    []*Setting
	version bool // -version was given
}

// Setting is one declared setting.
type Setting struct {
	Flag, Env, Default, Usage string
	parse                     func(string) error // validates a value and stores it
	show                      func() string      // the value in effect
	secret                    bool
	source                    string // "default", "env" or "flag"
}

// Secret keeps the setting's value out of the start-up log.
func (s *Setting) Secret() *Setting { s.secret = true; return s }

// UsageError is a bad command line or setting: the program exits with
// status 2 without opening anything.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

// NewSettings starts the settings of the named program; getenv is
// os.Getenv in production.
func NewSettings(name string, getenv func(string) string) *Settings {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	s := &Settings{name: name, getenv: getenv, fs: fs}
	fs.BoolVar(&s.version, "version", false, "print the version and exit")
	return s
}

// flagValue lets the flag package set a setting through its own parse.
type flagValue struct{ s *Setting }

func (v flagValue) String() string {
	if v.s == nil || v.s.show == nil {
		return ""
	}
	return v.s.show()
}

func (v flagValue) Set(text string) error {
	if err := v.s.parse(text); err != nil {
		return err
	}
	v.s.source = "flag"
	return nil
}

// Func declares a setting read by parse; def is the default as -h shows it,
// and show tells the value in effect.
func (s *Settings) Func(flagName, env, def, usage string, parse func(string) error, show func() string) *Setting {
	return s.declare(false, flagName, env, def, usage, parse, show)
}

func (s *Settings) declare(isBool bool, flagName, env, def, usage string, parse func(string) error, show func() string) *Setting {
	st := &Setting{Flag: flagName, Env: env, Default: def, Usage: usage, parse: parse, show: show, source: "default"}
	s.list = append(s.list, st)
	var v flag.Value = flagValue{st}
	if isBool {
		v = boolFlag{flagValue{st}}
	}
	s.fs.Var(v, flagName, usage)
	return st
}

// String declares a setting of any text but the empty one.
func (s *Settings) String(p *string, flagName, env, def, usage string) *Setting {
	*p = def
	return s.Func(flagName, env, quoteDefault(def), usage, func(v string) error {
		if v == "" {
			return errors.New("want a value")
		}
		*p = v
		return nil
	}, func() string { return *p })
}

// Addr declares a listen address: host:port, the port a number (0 picks a
// free one), the host empty for every interface.
func (s *Settings) Addr(p *string, flagName, env, def, usage string) *Setting {
	*p = def
	return s.Func(flagName, env, quoteDefault(def), usage, func(v string) error {
		_, port, err := net.SplitHostPort(v)
		if n, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || n > 65535 {
			return errors.New("want host:port, such as :8080 or 127.0.0.1:8080")
		}
		*p = v
		return nil
	}, func() string { return *p })
}

// Duration declares a positive duration in Go's syntax (10s, 1m30s).
func (s *Settings) Duration(p *time.Duration, flagName, env string, def time.Duration, usage string) *Setting {
	*p = def
	return s.Func(flagName, env, def.String(), usage, func(v string) error {
		d, err := PositiveDuration(v)
		if err == nil {
			*p = d
		}
		return err
	}, func() string { return p.String() })
}

// PositiveDuration reads a positive duration in Go's syntax, as Duration
// settings do.
func PositiveDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, errors.New("want a positive duration such as 10s")
	}
	return d, nil
}

// Int declares an integer from min to max.
func (s *Settings) Int(p *int, flagName, env string, def, min, max int, usage string) *Setting {
	*p = def
	return s.Func(flagName, env, strconv.Itoa(def), usage, func(v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < min || n > max {
			return fmt.Errorf("want an integer from %d to %d", min, max)
		}
		*p = n
		return nil
	}, func() string { return strconv.Itoa(*p) })
}

// Bool declares a switch: true, false, 1 or 0 (and the other spellings
// strconv.ParseBool takes). As a flag, -name alone is true.
func (s *Settings) Bool(p *bool, flagName, env string, def bool, usage string) *Setting {
	*p = def
	return s.declare(true, flagName, env, strconv.FormatBool(def), usage, func(v string) error {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return errors.New("want true or false (1 or 0)")
		}
		*p = b
		return nil
	}, func() string { return strconv.FormatBool(*p) })
}

// boolFlag marks a flag that needs no value.
type boolFlag struct{ flagValue }

func (boolFlag) IsBoolFlag() bool { return true }

// TextValue is a value that reads and writes itself as text.
type TextValue interface {
	encoding.TextMarshaler
	encoding.TextUnmarshaler
}

// Text declares a setting read by p's UnmarshalText; its current value is
// the default.
func (s *Settings) Text(p TextValue, flagName, env, usage string) *Setting {
	def, _ := p.MarshalText()
	show := func() string { b, _ := p.MarshalText(); return string(b) }
	return s.Func(flagName, env, string(def), usage, func(v string) error { return p.UnmarshalText([]byte(v)) }, show)
}

// ErrVersion is what Parse returns for -version: print the version, do
// nothing else.
var ErrVersion = errors.New("version asked for")

// Parse reads every setting: the environment first, then args, which win.
// A bad value or flag is a *UsageError naming it; -h or -help is
// flag.ErrHelp; -version is ErrVersion.
func (s *Settings) Parse(args []string) error {
	for _, st := range s.list {
		v := s.getenv(st.Env)
		if v == "" {
			continue
		}
		if err := st.parse(v); err != nil {
			return &UsageError{fmt.Errorf("%s: %s=%q: %v", s.name, st.Env, v, err)}
		}
		st.source = "env"
	}
	if err := s.fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return flag.ErrHelp
		}
		return &UsageError{fmt.Errorf("%s: %v", s.name, err)}
	}
	if s.version {
		return ErrVersion
	}
	if s.fs.NArg() > 0 {
		return &UsageError{fmt.Errorf("%s: unexpected argument %q", s.name, s.fs.Arg(0))}
	}
	return nil
}

// Usage writes what -h shows: every setting, its flag, variable and default.
func (s *Settings) Usage(w io.Writer) {
	fmt.Fprintf(w, "Usage: %s [flags]\n       %s healthcheck    (exit 0 when the running process's /readyz answers 200)\n\n", s.name, s.name)
	fmt.Fprintf(w, "       %s -version       (print the version and exit)\n\n", s.name)
	fmt.Fprintf(w, "Every setting is a flag and an environment variable; the flag wins, and an\nempty variable is unset.\n\n")
	for _, st := range s.list {
		fmt.Fprintf(w, "  -%s, %s", st.Flag, st.Env)
		if st.Default != "" {
			fmt.Fprintf(w, "  (default %s)", st.Default)
		}
		fmt.Fprintf(w, "\n      %s\n", strings.ReplaceAll(st.Usage, "\n", "\n      "))
	}
}

// LogAttrs are the settings in effect, for one log line at start: each as
// its variable's name, secrets hidden.
func (s *Settings) LogAttrs() []any {
	attrs := make([]any, 0, len(s.list))
	for _, st := range s.list {
		v := st.show()
		if st.secret && st.source != "default" {
			v = "(set)"
		}
		attrs = append(attrs, slog.String(st.Env, v))
	}
	return attrs
}

func quoteDefault(def string) string {
	if def == "" {
		return ""
	}
	return strconv.Quote(def)
}

// All lists the declared settings, in order.
func (s *Settings) All() []*Setting { return s.list }
