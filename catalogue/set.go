package catalogue

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Set is which defects are active. The zero value is every defect active:
// the specified behaviour. It is read once, when a program starts
// (DEFECTS, or -defects): as a flag value it implements
// encoding.TextMarshaler and encoding.TextUnmarshaler.
//
// A mutant set (mutants:SEED[:N]) has the ten switched off and the
// mutants SEED draws planted instead.
type Set struct {
	off     uint16 // bit i: Defects[i] is switched off
	mutants uint8  // how many mutants are drawn; 0: none, the ten's mode
	seed    uint64
}

// Mutants is the set of n mutants drawn from seed, the ten switched off.
func Mutants(seed uint64, n int) Set {
	return Set{off: None().off, mutants: uint8(n), seed: seed}
}

// IsMutants reports whether s is a mutant set.
func (s Set) IsMutants() bool { return s.mutants > 0 }

// Seed is a mutant set's seed; N how many mutants it plants.
func (s Set) Seed() uint64 { return s.seed }

// N is how many mutants a mutant set plants; 0 for the ten's mode.
func (s Set) N() int { return int(s.mutants) }

// Mutants are the mutants a mutant set plants; none in the ten's mode.
func (s Set) Mutants() []Mutant {
	if !s.IsMutants() {
		return nil
	}
	return drawn(s.seed, int(s.mutants))
}

// drawn keeps the sets drawn lately: a program draws its own once, a
// scorer a few.
var (
	drawnMu  sync.Mutex
	drawnFor = map[[2]uint64][]Mutant{}
)

func drawn(seed uint64, n int) []Mutant {
	drawnMu.Lock()
	defer drawnMu.Unlock()
	k := [2]uint64{seed, uint64(n)}
	if ms, ok := drawnFor[k]; ok {
		return ms
	}
	if len(drawnFor) >= 64 {
		clear(drawnFor)
	}
	ms := DrawMutants(seed, n)
	drawnFor[k] = ms
	return ms
}

// Defects are the ten, then the set's mutants: every defect its ground
// truth lists.
func (s Set) Defects() []Defect {
	ds := slices.Clone(Defects)
	for _, m := range s.Mutants() {
		ds = append(ds, m.Defect())
	}
	return ds
}

// All is every defect active (the default).
func All() Set { return Set{} }

// None is every defect switched off: a service that keeps its contract.
func None() Set { return Set{off: 1<<len(Defects) - 1} }

func index(id ID) int {
	return slices.IndexFunc(Defects, func(d Defect) bool { return d.ID == id })
}

// Active reports whether the defect (or mutant) is on. An ID outside the
// catalogue is a programming error; a mutant outside the set is off.
func (s Set) Active(id ID) bool {
	if IsMutantID(id) {
		return slices.ContainsFunc(s.Mutants(), func(m Mutant) bool { return m.ID() == id })
	}
	i := index(id)
	if i < 0 {
		panic("catalogue: unknown defect " + string(id))
	}
	return s.off&(1<<i) == 0
}

// Without is s with id switched off (one of the ten).
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
	for _, d := range Defects {
		if s.Active(d.ID) {
			ids = append(ids, d.ID)
		}
	}
	for _, m := range s.Mutants() {
		ids = append(ids, m.ID())
	}
	return ids
}

// String is the setting that gives s: all, none, or the active IDs.
func (s Set) String() string {
	if s.IsMutants() {
		if s.mutants == DefaultMutants {
			return fmt.Sprintf("mutants:%d", s.seed)
		}
		return fmt.Sprintf("mutants:%d:%d", s.seed, s.mutants)
	}
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

// MarshalText is the setting that gives s.
func (s Set) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a setting, as Parse does.
func (s *Set) UnmarshalText(b []byte) error {
	v, err := Parse(string(b))
	if err != nil {
		return err
	}
	*s = v
	return nil
}

// Parse reads a setting: "all" (or empty), "none", a comma-separated
// list of defect IDs and category names (a category's Name or its path
// prefix without the slash), any letter case: exactly those are active;
// or mutants:SEED[:N], the ten off and N mutants (10 unless said) drawn
// from SEED.
func Parse(setting string) (Set, error) {
	setting = strings.TrimSpace(setting)
	switch strings.ToLower(setting) {
	case "", "all":
		return All(), nil
	case "none":
		return None(), nil
	}
	if rest, ok := cutPrefixFold(setting, "mutants"); ok {
		return parseMutants(rest)
	}
	s := None()
	for _, tok := range strings.Split(setting, ",") {
		tok = strings.ToLower(strings.TrimSpace(tok))
		if tok == "" {
			continue
		}
		matched := false
		for i, d := range Defects {
			c, _ := CategoryNamed(EndpointOf(d.ID).Category)
			if strings.ToLower(string(d.ID)) == tok || tok == c.Name || tok == strings.TrimPrefix(c.Prefix, "/") {
				s.off &^= 1 << i
				matched = true
			}
		}
		if !matched {
			if tok == "all" || tok == "none" {
				return All(), fmt.Errorf("%q stands alone, not in a list", tok)
			}
			return All(), fmt.Errorf("unknown defect or category %q; %s", tok, Help())
		}
	}
	if s == None() {
		return All(), errors.New("an empty list; say none to switch every defect off")
	}
	return s, nil
}

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// parseMutants reads what follows "mutants": :SEED or :SEED:N.
func parseMutants(rest string) (Set, error) {
	const want = "want mutants:SEED or mutants:SEED:N, SEED a whole number from 0 to 18446744073709551615 and N from 1 to 30"
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "" {
		return All(), errors.New(want)
	}
	seed, err := strconv.ParseUint(parts[1], 10, 64)
	if err != nil {
		return All(), fmt.Errorf("seed %q: %s", parts[1], want)
	}
	n := DefaultMutants
	if len(parts) == 3 {
		if n, err = strconv.Atoi(parts[2]); err != nil || n < 1 || n > MaxMutants {
			return All(), fmt.Errorf("N %q: %s", parts[2], want)
		}
	}
	return Mutants(seed, n), nil
}

// Help describes the accepted settings.
func Help() string {
	var ids, cats []string
	for _, d := range Defects {
		ids = append(ids, string(d.ID))
	}
	for _, c := range Categories {
		cats = append(cats, c.Name)
	}
	return "want all (the default), none, or a comma-separated list of defect IDs (" + strings.Join(ids, ", ") +
		") and categories (" + strings.Join(cats, ", ") + "), or mutants:SEED[:N] for N contract mutants (10, 1 to 30) drawn from SEED"
}

// Switch reports whether the defect named id is active: the question a
// service's route table asks once per route when it is built.
func (s Set) Switch(id string) bool { return s.Active(ID(id)) }

// SettingUsage describes DEFECTS (and -defects) for a program's -h.
const SettingUsage = "which planted defects are active: all, none, a comma-separated list of defect IDs and categories, or mutants:SEED[:N] (the ten off, N contract mutants drawn from SEED)"
