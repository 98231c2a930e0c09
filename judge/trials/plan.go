package trials

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
)

// Planting is what one part of a campaign plants in its trials'
// instances: one setting for every trial (Set: the ten by default, a
// list, or one fixed mutant set), or, with Draw, a fresh mutant set per
// trial: trial i's instance gets mutants:<FirstSeed+i-1>:Draw, the same
// for every tool, so that the tools' trials pair by seed.
type Planting struct {
	Set  catalogue.Set
	Draw int
}

// Plan is a campaign's plantings, in order: each tool runs its trials
// under each, its trials numbered on (a campaign planting the ten and
// mutant sets with 10 trials has trials 1-10 of the ten and 11-20 of
// mutants). FirstSeed is the first mutant set's seed (default 1).
type Plan struct {
	Plantings []Planting
	FirstSeed uint64
}

// PlanOf is the plan of one fixed setting.
func PlanOf(s catalogue.Set) Plan { return Plan{Plantings: []Planting{{Set: s}}} }

// PlanUsage describes a campaign's -defects and its experiment's
// defects.
const PlanUsage = "what each trial's instance plants: all (the ten), none, a list of defect IDs, mutants:SEED:N (one set for every trial), or mutants[:N] (N mutants, 10 unless said, drawn afresh for each trial from seed i, the same for every tool); two joined by + (all+mutants) run both, each tool's trials of the one after the other's"

// ParsePlan reads a campaign's defects (PlanUsage).
func ParsePlan(s string) (Plan, error) {
	var p Plan
	for part := range strings.SplitSeq(strings.TrimSpace(s), "+") {
		part = strings.TrimSpace(part)
		var pl Planting
		low := strings.ToLower(part)
		switch {
		case low == "mutants":
			pl.Draw = catalogue.DefaultMutants
		case strings.HasPrefix(low, "mutants:") && strings.Count(low, ":") == 1:
			n, err := strconv.Atoi(part[len("mutants:"):])
			if err != nil || n < 1 || n > catalogue.MaxMutants {
				return Plan{}, fmt.Errorf("%q: a campaign's mutants:N draws N mutants (1 to %d) per trial; mutants:SEED:N is one set for every trial", part, catalogue.MaxMutants)
			}
			pl.Draw = n
		default:
			set, err := catalogue.Parse(part)
			if err != nil {
				return Plan{}, err
			}
			pl.Set = set
		}
		for _, q := range p.Plantings {
			if q == pl {
				return Plan{}, fmt.Errorf("%q is given twice", part)
			}
		}
		p.Plantings = append(p.Plantings, pl)
	}
	if len(p.Plantings) == 0 {
		return Plan{}, errors.New("no defects: " + PlanUsage)
	}
	return p, nil
}

// String is the plan as ParsePlan reads it (without its first seed).
func (p Plan) String() string {
	if len(p.Plantings) == 0 {
		return catalogue.All().String()
	}
	var parts []string
	for _, pl := range p.Plantings {
		switch {
		case pl.Draw == catalogue.DefaultMutants:
			parts = append(parts, "mutants")
		case pl.Draw > 0:
			parts = append(parts, fmt.Sprintf("mutants:%d", pl.Draw))
		default:
			parts = append(parts, pl.Set.String())
		}
	}
	return strings.Join(parts, "+")
}

// Draws reports whether the plan draws mutant sets per trial.
func (p Plan) Draws() bool {
	for _, pl := range p.Plantings {
		if pl.Draw > 0 {
			return true
		}
	}
	return false
}

// Each is the plantings, never none: the ten when the plan is empty.
func (p Plan) Each() []Planting {
	if len(p.Plantings) == 0 {
		return []Planting{{Set: catalogue.All()}}
	}
	return p.Plantings
}

// For is what trial i (1: the planting's first) of the planting plants.
func (p Plan) For(pl Planting, i int) catalogue.Set {
	if pl.Draw == 0 {
		return pl.Set
	}
	first := p.FirstSeed
	if first == 0 {
		first = 1
	}
	return catalogue.Mutants(first+uint64(i-1), pl.Draw)
}

// MarshalText and UnmarshalText make a plan a flag's value.
func (p Plan) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText reads a plan, as ParsePlan does, keeping the first seed.
func (p *Plan) UnmarshalText(b []byte) error {
	v, err := ParsePlan(string(b))
	if err != nil {
		return err
	}
	v.FirstSeed = p.FirstSeed
	*p = v
	return nil
}

// Equal reports whether two plans plant the same.
func (p Plan) Equal(q Plan) bool {
	a, b := p.Each(), q.Each()
	if len(a) != len(b) || p.Draws() && max(p.FirstSeed, 1) != max(q.FirstSeed, 1) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
