package catalogue

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Set is which defects are active. The zero value is every defect active:
// the specified behaviour. It is read once, when a program starts
// (DEFECTS, or -defects): as a flag value it implements
// encoding.TextMarshaler and encoding.TextUnmarshaler.
type Set struct{ off uint16 } // bit i: Defects[i] is switched off

// All is every defect active (the default).
func All() Set { return Set{} }

// None is every defect switched off: a service that keeps its contract.
func None() Set { return Set{off: 1<<len(Defects) - 1} }

func index(id ID) int {
	return slices.IndexFunc(Defects, func(d Defect) bool { return d.ID == id })
}

// Active reports whether the defect is on. An ID outside the catalogue is
// a programming error.
func (s Set) Active(id ID) bool {
	i := index(id)
	if i < 0 {
		panic("catalogue: unknown defect " + string(id))
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
	for _, d := range Defects {
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

// Parse reads a setting: "all" (or empty), "none", or a comma-separated
// list of defect IDs and category names (a category's Name or its path
// prefix without the slash), any letter case: exactly those are active.
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
		") and categories (" + strings.Join(cats, ", ") + ")"
}

// Switch reports whether the defect named id is active: the question a
// service's route table asks once per route when it is built.
func (s Set) Switch(id string) bool { return s.Active(ID(id)) }

// SettingUsage describes DEFECTS (and -defects) for a program's -h.
const SettingUsage = "which planted defects are active: all, none, or a comma-separated list of defect IDs and categories"
