package catalogue

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"sync"
)

// Mutant is one operator applied to one operation under one condition.
type Mutant struct {
	Operator Operator
	op       *mutantOp
	cond     *condition
	// id and defect are worked out once, when the mutants are listed: a
	// trigger counts under the ID, and /defects lists the defect, on
	// every request.
	id     ID
	defect *Defect
}

// ID is the mutant's name, the same under every seed:
// <operator>:<METHOD> <path>:<condition>.
func (m Mutant) ID() ID { return m.id }

// Endpoint is the operation it is planted on.
func (m Mutant) Endpoint() Endpoint { return m.op.endpoint() }

// faces are the further findings that are the mutant seen from another
// side: its operator's; for a 500 where the operation declares none, the
// undeclared status; and for a 500 where a default response declares it,
// an invalid body (its error body is checked against the default's
// schema, which it does not match).
func (m Mutant) faces() []Class {
	fs := slices.Clone(m.Operator.Faces)
	if slices.Contains(m.Operator.Classes, ServerError) {
		switch {
		case m.op.defaultResponse:
			fs = append(fs, InvalidBody)
		case !m.op.declares500:
			fs = append(fs, UndocumentedStatus)
		}
	}
	return fs
}

// Condition is its condition's name; Depth its depth (DepthEvery,
// DepthClass, DepthNarrow).
func (m Mutant) Condition() string { return m.cond.name }

// Depth is its condition's depth.
func (m Mutant) Depth() int { return m.cond.depth }

// ReadsBody reports whether the conditions of its operation read the
// request's body: a request's other conditions can be asked before its
// body is read.
func (m Mutant) ReadsBody() bool { return m.op.body }

// Matches reports whether a request to its operation meets its condition.
func (m Mutant) Matches(in Input) bool { return m.cond.match(in) }

// Apply is the answer the mutant gives in place of the conformant answer
// a, and whether it differs: a mutant is triggered when it changes an
// answer.
func (m Mutant) Apply(a Answer) (Answer, bool) {
	b := m.Operator.apply(m.op, a)
	return b, !b.Same(a)
}

// triggers are the examples of its condition whose answers it changes.
func (m Mutant) triggers() []Trigger {
	var ts []Trigger
	for _, e := range m.cond.examples {
		c := e.conformant()
		mut, changed := m.Apply(c)
		if !changed {
			continue
		}
		ts = append(ts, Trigger{Query: e.query, Body: e.body, Header: e.header,
			Status: mut.Status, Shows: m.Operator.shows(m.op, c, mut),
			OffStatus: e.status, OffShows: fmt.Sprintf("%d %s", e.status, e.note)})
	}
	return ts
}

// Defect is the mutant as the ground truth, the scorer and the reference
// tool read a planted defect. Its slices are shared: read them only.
func (m Mutant) Defect() Defect { return *m.defect }

func (m Mutant) describe() Defect {
	o := m.Operator
	e := m.Endpoint()
	title := o.Title
	if m.cond.depth != DepthEvery {
		title += " " + m.cond.says
	}
	return Defect{ID: m.ID(), Endpoint: e.N, Title: title,
		Symptom:  fmt.Sprintf("%s %s, %s.", e.Method+" "+e.Path, o.Summary, m.cond.says),
		Triggers: m.triggers(), Classes: o.Classes, Faces: m.faces(), CWE: o.CWE, WFC: o.WFC, OWASP: o.OWASP, CodesNote: o.CodesNote,
		TriggeredWhen: fmt.Sprintf("a request it applies to (%s) whose conformant answer it changes", m.cond.says),
		Off:           "the conformant answer of DEFECTS=none",
		Operator:      o.Name, Condition: m.cond.name, Depth: m.cond.depth}
}

// allMutants is every mutant that can be drawn: each operator on each
// operation it fits, under each condition where one of the condition's
// examples gets an answer it changes. Any other would be equivalent,
// indistinguishable from the conformant service, and is never drawn.
var allMutants = sync.OnceValue(func() []Mutant {
	var all []Mutant
	for _, op := range mutantOps {
		for _, o := range Operators {
			if !o.applies(op) {
				continue
			}
			for i := range op.conditions {
				m := Mutant{Operator: o, op: op, cond: &op.conditions[i]}
				if len(m.triggers()) > 0 {
					e := op.endpoint()
					m.id = ID(o.Name + ":" + e.Method + " " + e.Path + ":" + m.cond.name)
					d := m.describe()
					m.defect = &d
					all = append(all, m)
				}
			}
		}
	}
	return all
})

// AllMutants lists every mutant that can be drawn, by operation, operator
// and condition.
func AllMutants() []Mutant { return slices.Clone(allMutants()) }

var mutantsByID = sync.OnceValue(func() map[ID]Mutant {
	by := map[ID]Mutant{}
	for _, m := range allMutants() {
		by[m.ID()] = m
	}
	return by
})

// MutantOf rebuilds a mutant from its ID.
func MutantOf(id ID) (Mutant, error) {
	if m, ok := mutantsByID()[id]; ok {
		return m, nil
	}
	return Mutant{}, fmt.Errorf("no mutant %q: want <operator>:<METHOD> <path>:<condition>, as /defects names one", id)
}

// IsMutantID reports whether id names a mutant rather than one of the
// ten.
func IsMutantID(id ID) bool { return strings.Contains(string(id), ":") }

// Mutant set sizes.
const (
	DefaultMutants  = 10 // one on each operation
	MaxMutants      = 30
	MaxMutantsPerOp = 3
)

// compatible reports whether m can be planted beside the mutants already
// on its operation: no request meets two conditions (each answer has one
// mutant to answer for), and no class of check finds two (each finding on
// the operation names one mutant).
func compatible(m Mutant, beside []Mutant) bool {
	for _, b := range beside {
		if !fitTogether(m, b) {
			return false
		}
	}
	return true
}

func fitTogether(a, b Mutant) bool {
	if a.cond == b.cond || a.op.overlap(a.cond, b.cond) {
		return false
	}
	for _, cs := range [][]Class{a.Operator.Classes, a.faces()} {
		for _, c := range cs {
			if slices.Contains(b.Operator.Classes, c) || slices.Contains(b.faces(), c) {
				return false
			}
		}
	}
	return true
}

// opMutants are an operation's mutants and which pairs of them fit
// together.
type opMutants struct {
	ms  []Mutant
	fit [][]bool
}

var candidatesByOp = sync.OnceValue(func() map[*mutantOp]*opMutants {
	by := map[*mutantOp]*opMutants{}
	for _, m := range allMutants() {
		if by[m.op] == nil {
			by[m.op] = &opMutants{}
		}
		by[m.op].ms = append(by[m.op].ms, m)
	}
	for _, o := range by {
		o.fit = make([][]bool, len(o.ms))
		for i, a := range o.ms {
			o.fit[i] = make([]bool, len(o.ms))
			for j, b := range o.ms {
				o.fit[i][j] = fitTogether(a, b)
			}
		}
	}
	return by
})

// fits reports whether candidate i fits beside those of here.
func (o *opMutants) fits(i int, here []int) bool {
	for _, h := range here {
		if !o.fit[i][h] {
			return false
		}
	}
	return true
}

// completes reports whether some candidates added to here make want of
// them, every one fitting beside the others.
func (o *opMutants) completes(here []int, want int) bool {
	if len(here) >= want {
		return true
	}
	for i := range o.ms {
		if o.fits(i, here) && o.completes(append(slices.Clip(here), i), want) {
			return true
		}
	}
	return false
}

// DrawMutants draws n mutants from seed. First how many fall on each
// operation: in rounds, each visiting the operations in an order the seed
// shuffles, one more on each until n are placed; so n up to 10 falls on n
// operations, 10 on each once, 30 on each three times. Then, operation by
// operation, each of its mutants: a depth drawn among those of the
// mutants that fit beside the ones already there (and still leave room
// for the rest), then a mutant of that depth. The same seed and n give
// the same set on any machine.
func DrawMutants(seed uint64, n int) []Mutant {
	rng := splitmix{seed}
	n = min(max(n, 0), MaxMutantsPerOp*len(mutantOps))
	want := make([]int, len(mutantOps))
	for placed := 0; placed < n; {
		order := make([]int, len(mutantOps))
		for i := range order {
			order[i] = i
		}
		for i := len(order) - 1; i > 0; i-- {
			j := rng.intn(i + 1)
			order[i], order[j] = order[j], order[i]
		}
		for _, i := range order {
			if placed < n {
				want[i]++
				placed++
			}
		}
	}
	byOp := candidatesByOp()
	var chosen []Mutant
	for i, op := range mutantOps {
		o := byOp[op]
		var here []int
		for len(here) < want[i] {
			var fits []int
			depths := []int{}
			for j, m := range o.ms {
				if o.fits(j, here) && o.completes(append(slices.Clip(here), j), want[i]) {
					fits = append(fits, j)
					if !slices.Contains(depths, m.cond.depth) {
						depths = append(depths, m.cond.depth)
					}
				}
			}
			if len(fits) == 0 {
				panic(fmt.Sprintf("catalogue: operation %d cannot take %d mutants", op.n, want[i]))
			}
			slices.Sort(depths)
			depth := depths[rng.intn(len(depths))]
			fits = slices.DeleteFunc(fits, func(j int) bool { return o.ms[j].cond.depth != depth })
			here = append(here, fits[rng.intn(len(fits))])
		}
		for _, j := range here {
			chosen = append(chosen, o.ms[j])
		}
	}
	slices.SortStableFunc(chosen, func(a, b Mutant) int {
		return cmp.Or(cmp.Compare(a.op.n, b.op.n), strings.Compare(string(a.ID()), string(b.ID())))
	})
	return chosen
}

// splitmix is SplitMix64, a generator small enough to state here, so that
// a seed draws the same set whatever Go's own generators become.
type splitmix struct{ x uint64 }

func (s *splitmix) next() uint64 {
	s.x += 0x9e3779b97f4a7c15
	z := s.x
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

func (s *splitmix) intn(n int) int { return int(s.next() % uint64(n)) }
