// Package defects names the showcase's planted defects and reads the switch
// that turns them on and off (DEFECTS, or -defects). It knows the names
// only: what switching a defect off changes lives beside the defect, in its
// service, at its DEFECT(<id>) comment.
//
// The names are here, in the shared module, because all five processes
// must read one setting the same way and reject the same typos.
package defects

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/platform/observe"
	"github.com/defectshowcase/showcase/platform/server"
)

// ID names one planted defect, as its DEFECT(<id>) comment does.
type ID string

// The ten planted defects.
const (
	SEC01  ID = "SEC-01"
	ERR01  ID = "ERR-01"
	ERR02  ID = "ERR-02"
	ERR03  ID = "ERR-03"
	CONF01 ID = "CONF-01"
	CONF02 ID = "CONF-02"
	CONF03 ID = "CONF-03"
	CONF04 ID = "CONF-04"
	PERF01 ID = "PERF-01"
	PERF02 ID = "PERF-02"
)

// Defect is a row of the catalogue.
type Defect struct {
	ID       ID
	Category string // security, errors, conformance, performance
	Endpoint string // the path it lives on
	Name     string
}

// Catalogue lists every defect, in endpoint order.
var Catalogue = []Defect{
	{SEC01, "security", "/security/unauthenticated-access", "unauthenticated access"},
	{ERR01, "errors", "/internal-server-errors/improper-input-type-handling", "improper input type handling"},
	{ERR02, "errors", "/internal-server-errors/exceeding-column-size", "exceeding column size"},
	{ERR03, "errors", "/internal-server-errors/improper-unicode-encoding", "improper unicode encoding"},
	{CONF01, "conformance", "/response-conformance/malformed-json", "malformed json"},
	{CONF02, "conformance", "/response-conformance/incorrect-content-type", "incorrect content type"},
	{CONF03, "conformance", "/response-conformance/missing-field", "missing field"},
	{CONF04, "conformance", "/response-conformance/undocumented-status-code", "undocumented status code"},
	{PERF01, "performance", "/performance/unbounded-result-set", "unbounded result set"},
	{PERF02, "performance", "/performance/inefficient-algorithm", "inefficient algorithm"},
}

// categoryNames maps every accepted category name to its category: the
// short name and the path prefix's.
var categoryNames = map[string]string{
	"security": "security", "errors": "errors", "internal-server-errors": "errors",
	"conformance": "conformance", "response-conformance": "conformance", "performance": "performance",
}

// Set is which defects are active. The zero value is every defect active:
// the specified behaviour.
type Set struct{ off uint16 } // bit i: Catalogue[i] is switched off

// All is every defect active (the default).
func All() Set { return Set{} }

// None is every defect switched off: a service that keeps its contract.
func None() Set { return Set{off: 1<<len(Catalogue) - 1} }

func index(id ID) int {
	return slices.IndexFunc(Catalogue, func(d Defect) bool { return d.ID == id })
}

// Active reports whether the defect is on. An ID outside the catalogue is
// a programming error.
func (s Set) Active(id ID) bool {
	i := index(id)
	if i < 0 {
		panic("defects: unknown ID " + string(id))
	}
	return s.off&(1<<i) == 0
}

// Without is s with id switched off.
func (s Set) Without(id ID) Set {
	if i := index(id); i >= 0 {
		s.off |= 1 << i
	}
	return s
}

// IsAll reports whether every defect is active.
func (s Set) IsAll() bool { return s.off == 0 }

// ActiveIDs lists the active defects in catalogue order.
func (s Set) ActiveIDs() []ID {
	ids := []ID{}
	for _, d := range Catalogue {
		if s.Active(d.ID) {
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// String is the setting that gives s: all, none, or the active IDs.
func (s Set) String() string {
	switch s {
	case All():
		return "all"
	case None():
		return "none"
	}
	var b []string
	for _, id := range s.ActiveIDs() {
		b = append(b, string(id))
	}
	return strings.Join(b, ",")
}

// Parse reads a setting: "all" (or empty), "none", or a comma-separated
// list of defect IDs and category names (security, errors or
// internal-server-errors, conformance or response-conformance, performance),
// any letter case: exactly those are active.
func Parse(setting string) (Set, error) {
	setting = strings.TrimSpace(setting)
	switch strings.ToLower(setting) {
	case "", "all":
		return All(), nil
	case "none":
		return None(), nil
	}
	s := None()
	for _, tok := range strings.Split(setting, ",") {
		tok = strings.ToLower(strings.TrimSpace(tok))
		if tok == "" {
			continue
		}
		matched := false
		for i, d := range Catalogue {
			if strings.ToLower(string(d.ID)) == tok || categoryNames[tok] == d.Category {
				s.off &^= 1 << i
				matched = true
			}
		}
		if !matched {
			if tok == "all" || tok == "none" {
				return All(), fmt.Errorf("%q stands alone, not in a list", tok)
			}
			return All(), fmt.Errorf("unknown defect or category %q; %s", tok, Help)
		}
	}
	if s == None() {
		return All(), errors.New("an empty list; say none to switch every defect off")
	}
	return s, nil
}

// Help describes the accepted settings.
const Help = "want all (the default), none, or a comma-separated list of defect IDs (SEC-01, ERR-01 to ERR-03, CONF-01 to CONF-04, PERF-01, PERF-02) and categories (security, errors, conformance, performance)"

// FromEnv reads DEFECTS (which the -defects flag overrides). An invalid
// setting is recorded on env, so the program refuses to start.
func FromEnv(env *server.Env) Set {
	v := env.String("DEFECTS", "all")
	s, err := Parse(v)
	if err != nil {
		env.Reject("DEFECTS", v, err.Error())
	}
	return s
}

// Report makes the state of ids visible: one log line, and the gauge
// showcase_defect_active{defect} (1 active, 0 switched off) on the
// service's metrics.
func (s Set) Report(in *observe.Instruments, ids ...ID) {
	g := observe.Register(in.Registerer, prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: "showcase", Name: "defect_active",
		Help: "Whether a planted defect is active (1) or switched off with DEFECTS (0).",
	}, []string{"defect"}))
	var on, off []string
	for _, id := range ids {
		v := 0.0
		if s.Active(id) {
			v = 1
			on = append(on, string(id))
		} else {
			off = append(off, string(id))
		}
		g.WithLabelValues(string(id)).Set(v)
	}
	in.Logger.Info("defects", slog.String("active", strings.Join(on, ",")), slog.String("off", strings.Join(off, ",")))
}

// IDs lists every defect, in catalogue order.
func IDs() []ID {
	ids := make([]ID, len(Catalogue))
	for i, d := range Catalogue {
		ids[i] = d.ID
	}
	return ids
}

// IDsOf lists the defects of a category, in catalogue order.
func IDsOf(category string) []ID {
	var ids []ID
	for _, d := range Catalogue {
		if d.Category == category {
			ids = append(ids, d.ID)
		}
	}
	return ids
}
