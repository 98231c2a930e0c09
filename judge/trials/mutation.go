package trials

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/stats"
)

// Why a mutant survived a trial, from what the instance saw (the three
// stages): the tool never requested its operation; it did, but never sent
// the input the mutant's condition needs; or it got the wrong answer and
// its report let it pass.
const (
	NotReached   = "not reached"
	NotTriggered = "reached, never triggered"
	NotReported  = "triggered, not reported"
)

// SurvivorGroups are the three, in the order a mutant gets through them.
var SurvivorGroups = []string{NotReached, NotTriggered, NotReported}

// IntervalMethod names the intervals of the mutation score.
const IntervalMethod = "Wilson score interval, 95 %"

// Score is a mutation score: mutants detected of mutants planted, over
// trials (a mutant planted in two trials counts twice), with its 95 %
// Wilson interval.
type Score struct {
	Key      string  `json:"key,omitempty"` // the operator, or the depth ("0", "1", "2")
	Detected int     `json:"detected"`
	Planted  int     `json:"planted"`
	Lower    float64 `json:"lower"`
	Upper    float64 `json:"upper"`
}

func scoreOf(key string, detected, planted int) Score {
	w := stats.Wilson(detected, planted)
	return Score{Key: key, Detected: detected, Planted: planted, Lower: w.Lower, Upper: w.Upper}
}

// Text is the score as the reports give it: "17/20 = 85 % (95 % CI
// 64-95 %)"; "—" with nothing planted.
func (s Score) Text() string {
	if s.Planted == 0 {
		return "—"
	}
	return fmt.Sprintf("%d/%d = %.0f %% (%.0f–%.0f %%)", s.Detected, s.Planted, 100*float64(s.Detected)/float64(s.Planted), 100*s.Lower, 100*s.Upper)
}

// Survivors are one operator's survivors of a tool, in the three groups.
type Survivors struct {
	Operator     string `json:"operator"`
	NotReached   int    `json:"not_reached"`
	NotTriggered int    `json:"reached_never_triggered"`
	NotReported  int    `json:"triggered_not_reported"`
}

// Total is how many survived.
func (s Survivors) Total() int { return s.NotReached + s.NotTriggered + s.NotReported }

func (s *Survivors) add(group string) {
	switch group {
	case NotReached:
		s.NotReached++
	case NotTriggered:
		s.NotTriggered++
	case NotReported:
		s.NotReported++
	}
}

// ToolMutation is one tool's mutation score over its trials of mutant
// sets: the whole, by operator and by depth, and its survivors by
// operator (the last row, operator "all", their sum).
type ToolMutation struct {
	Tool       string      `json:"tool"`
	Trials     int         `json:"trials"`
	Score      Score       `json:"score"`
	ByOperator []Score     `json:"by_operator"`
	ByDepth    []Score     `json:"by_depth"`
	Survivors  []Survivors `json:"survivors"`
	// Spurious counts its findings on mutants' operations that the ground
	// truth proves false (as Stage.Spurious).
	Spurious int `json:"spurious"`
	// NotRun are its trials of mutant sets that could not run (Trials does
	// not count them), Lost the attempts lost on a cluster, as the ten's.
	NotRun []NotRun      `json:"not_run,omitempty"`
	Lost   []LostAttempt `json:"lost,omitempty"`
}

// Total is the tool's survivors over every operator.
func (t ToolMutation) Total() Survivors {
	if n := len(t.Survivors); n > 0 {
		return t.Survivors[n-1]
	}
	return Survivors{Operator: "all"}
}

// MutationTest is McNemar's exact test of two tools on the mutants both
// met (the same set, by seed, each planted in a trial of each): Both and
// Neither detected, OnlyA (the first detected, the second not) and OnlyB;
// P from the discordant pairs alone, Adjusted by Holm's method over the
// operators' tests.
type MutationTest struct {
	Operator string  `json:"operator"` // "all": every mutant
	Pairs    int     `json:"pairs"`
	Both     int     `json:"both"`
	OnlyA    int     `json:"only_a"`
	OnlyB    int     `json:"only_b"`
	Neither  int     `json:"neither"`
	P        float64 `json:"p"`
	Adjusted float64 `json:"p_holm"`
	Better   string  `json:"better"`
	Words    string  `json:"words"`
}

// MutationPair compares two tools on the mutant sets both ran: on every
// mutant (a family of its own), and on each operator's (Holm over them).
type MutationPair struct {
	A          string         `json:"a"`
	B          string         `json:"b"`
	All        MutationTest   `json:"all"`
	ByOperator []MutationTest `json:"by_operator"`
}

// Undetected is a mutant that no tool detected in a set they met, in any
// trial: its set, ID, operator, depth and a trigger request, and the
// group it fell in for each tool that met it (the furthest it got, over
// its trials of the set).
type Undetected struct {
	Set      string            `json:"set"`
	ID       catalogue.ID      `json:"id"`
	Operator string            `json:"operator"`
	Depth    int               `json:"depth"`
	Trigger  string            `json:"trigger"`
	Groups   map[string]string `json:"groups"` // tool: group
}

// MutationSummary is a run's trials of mutant sets: each tool's score and
// survivors, the pairs' tests and the mutants none detected.
type MutationSummary struct {
	Method     string         `json:"interval_method"`
	Sets       []string       `json:"sets"`
	Tools      []ToolMutation `json:"tools"`
	Pairs      []MutationPair `json:"pairs"`
	Undetected []Undetected   `json:"undetected"`
}

// group is why a mutant's stage survived; "" if it was detected.
func group(s Stage) string {
	switch {
	case s.Detected:
		return ""
	case !s.Reached:
		return NotReached
	case !s.Triggered:
		return NotTriggered
	}
	return NotReported
}

// operatorOf is a mutant stage's operator, from the stage or its ID.
func operatorOf(s Stage) string {
	if s.Operator != "" {
		return s.Operator
	}
	op, _, _ := strings.Cut(string(s.ID), ":")
	return op
}

// depthOf is a mutant stage's depth (-1 when the record has none).
func depthOf(s Stage) int {
	if s.Depth != nil {
		return *s.Depth
	}
	if m, err := catalogue.MutantOf(s.ID); err == nil {
		return m.Depth()
	}
	return -1
}

// summarizeMutants is the mutation summary of the trials of mutant sets
// that ran (byTool), for every tool with a trial of one (planted: those
// that could not run too), in order of names; nil when there are none.
func summarizeMutants(names []string, byTool map[string][]Trial, planted map[string]bool) *MutationSummary {
	ms := &MutationSummary{Method: IntervalMethod, Sets: []string{}, Tools: []ToolMutation{}, Pairs: []MutationPair{}, Undetected: []Undetected{}}
	sets := map[string]bool{}
	var ran []string
	for _, name := range names {
		var ts []Trial
		for _, t := range byTool[name] {
			if t.Mutants() {
				ts = append(ts, t)
				sets[t.Defects] = true
			}
		}
		if !planted[name] {
			continue
		}
		ms.Tools = append(ms.Tools, toolMutation(name, ts))
		if len(ts) > 0 {
			ran = append(ran, name)
		}
	}
	if len(ms.Tools) == 0 {
		return nil
	}
	ms.Sets = slices.SortedFunc(maps.Keys(sets), bySeed)
	// Each tool's stage of each mutant in each trial, by the trial's set
	// and seed: trials of two tools with both the same met the same
	// mutants (with a set drawn per trial, trial i's; with one set for
	// every trial, the trials of one seed). And, by set alone, the
	// furthest each tool got with each mutant over its trials.
	met := map[string]map[[3]string]Stage{}
	best := map[string]map[[2]string]Stage{}
	for _, name := range ran {
		met[name], best[name] = map[[3]string]Stage{}, map[[2]string]Stage{}
		for _, t := range byTool[name] {
			if !t.Mutants() {
				continue
			}
			for _, s := range t.Stages {
				met[name][[3]string{t.Defects, t.Seed, string(s.ID)}] = s
				k := [2]string{t.Defects, string(s.ID)}
				b, ok := best[name][k]
				if !ok {
					b = s
				}
				b.Reached, b.Triggered, b.Detected = b.Reached || s.Reached, b.Triggered || s.Triggered, b.Detected || s.Detected
				best[name][k] = b
			}
		}
	}
	for i := range ran {
		for j := i + 1; j < len(ran); j++ {
			ms.Pairs = append(ms.Pairs, compareMutants(ran[i], ran[j], met[ran[i]], met[ran[j]]))
		}
	}
	// The mutants no tool that met them detected, set by set.
	for _, set := range ms.Sets {
		var ids []string
		seen := map[string]bool{}
		for _, name := range ran {
			for k := range best[name] {
				if k[0] == set && !seen[k[1]] {
					seen[k[1]] = true
					ids = append(ids, k[1])
				}
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			u := Undetected{Set: set, ID: catalogue.ID(id), Groups: map[string]string{}}
			detected := false
			for _, name := range ran {
				s, ok := best[name][[2]string{set, id}]
				if !ok {
					continue
				}
				if s.Detected {
					detected = true
					break
				}
				u.Operator, u.Depth = operatorOf(s), depthOf(s)
				u.Groups[name] = group(s)
			}
			if detected {
				continue
			}
			u.Trigger = triggerText(u.ID)
			ms.Undetected = append(ms.Undetected, u)
		}
	}
	return ms
}

// bySeed orders sets mutants:SEED:N by their seed.
func bySeed(a, b string) int {
	seed := func(s string) uint64 {
		set, err := catalogue.Parse(s)
		if err != nil {
			return 0
		}
		return set.Seed()
	}
	return cmp.Or(cmp.Compare(seed(a), seed(b)), strings.Compare(a, b))
}

// triggerText is a mutant's first trigger as a reader sends it: the
// method, the path and query, a header and the JSON body.
func triggerText(id catalogue.ID) string {
	m, err := catalogue.MutantOf(id)
	if err != nil || len(m.Defect().Triggers) == 0 {
		return ""
	}
	d := m.Defect()
	r := d.Triggers[0]
	s := m.Endpoint().Method + " " + d.Target(r)
	if r.Header != "" {
		s += " · " + r.Header
	}
	if r.Body != "" {
		s += " · " + r.Body
	}
	return s
}

func toolMutation(name string, ts []Trial) ToolMutation {
	tm := ToolMutation{Tool: name, Trials: len(ts)}
	type tally struct{ detected, planted int }
	ops, depths := map[string]*tally{}, map[int]*tally{}
	surv := map[string]*Survivors{}
	var all tally
	for _, t := range ts {
		for _, s := range t.Stages {
			op, d := operatorOf(s), depthOf(s)
			if ops[op] == nil {
				ops[op] = &tally{}
			}
			if depths[d] == nil {
				depths[d] = &tally{}
			}
			for _, x := range []*tally{&all, ops[op], depths[d]} {
				x.planted++
				x.detected += b2i(s.Detected)
			}
			tm.Spurious += s.Spurious
			if g := group(s); g != "" {
				if surv[op] == nil {
					surv[op] = &Survivors{Operator: op}
				}
				surv[op].add(g)
			}
		}
	}
	tm.Score = scoreOf("", all.detected, all.planted)
	for _, op := range operatorOrder(slices.Collect(maps.Keys(ops))) {
		tm.ByOperator = append(tm.ByOperator, scoreOf(op, ops[op].detected, ops[op].planted))
		if s := surv[op]; s != nil {
			tm.Survivors = append(tm.Survivors, *s)
		}
	}
	for _, d := range slices.Sorted(maps.Keys(depths)) {
		tm.ByDepth = append(tm.ByDepth, scoreOf(fmt.Sprint(d), depths[d].detected, depths[d].planted))
	}
	sum := Survivors{Operator: "all"}
	for _, s := range tm.Survivors {
		sum.NotReached += s.NotReached
		sum.NotTriggered += s.NotTriggered
		sum.NotReported += s.NotReported
	}
	tm.Survivors = append(tm.Survivors, sum)
	return tm
}

// operatorOrder is operators in the catalogue's order (one it does not
// know, last by name).
func operatorOrder(ops []string) []string {
	at := func(op string) int {
		i := slices.IndexFunc(catalogue.Operators, func(o catalogue.Operator) bool { return o.Name == op })
		if i < 0 {
			return len(catalogue.Operators)
		}
		return i
	}
	slices.SortFunc(ops, func(a, b string) int { return cmp.Or(cmp.Compare(at(a), at(b)), strings.Compare(a, b)) })
	return ops
}

// compareMutants tests two tools on the mutants both met, paired by set,
// seed and ID: McNemar's exact test on every mutant, and on each
// operator's with Holm's correction over the operators.
func compareMutants(a, b string, ma, mb map[[3]string]Stage) MutationPair {
	p := MutationPair{A: a, B: b, ByOperator: []MutationTest{}}
	tests := map[string]*MutationTest{}
	all := &MutationTest{Operator: "all"}
	for k, sa := range ma {
		sb, ok := mb[k]
		if !ok {
			continue
		}
		op := operatorOf(sa)
		if tests[op] == nil {
			tests[op] = &MutationTest{Operator: op}
		}
		for _, t := range []*MutationTest{all, tests[op]} {
			t.Pairs++
			switch {
			case sa.Detected && sb.Detected:
				t.Both++
			case sa.Detected:
				t.OnlyA++
			case sb.Detected:
				t.OnlyB++
			default:
				t.Neither++
			}
		}
	}
	all.P = stats.McNemar(all.OnlyA, all.OnlyB)
	all.Adjusted = all.P
	word(all, a, b, "its own test")
	p.All = *all
	ops := operatorOrder(slices.Collect(maps.Keys(tests)))
	ps := make([]float64, len(ops))
	for i, op := range ops {
		ps[i] = stats.McNemar(tests[op].OnlyA, tests[op].OnlyB)
	}
	for i, adj := range stats.Holm(ps) {
		t := tests[ops[i]]
		t.P, t.Adjusted = ps[i], adj
		word(t, a, b, fmt.Sprintf("Holm over %d operators", len(ops)))
		p.ByOperator = append(p.ByOperator, *t)
	}
	return p
}

// word says a test's verdict by its adjusted p.
func word(t *MutationTest, a, b, family string) {
	what := "every mutant"
	if t.Operator != "all" {
		what = t.Operator + " mutants"
	}
	tail := fmt.Sprintf("(%d paired: both %d, only %s %d, only %s %d, neither %d; McNemar's exact test, p %s alone, adjusted p %s, %s)",
		t.Pairs, t.Both, a, t.OnlyA, b, t.OnlyB, t.Neither, pShort(t.P), pShort(t.Adjusted), family)
	switch {
	case t.Adjusted < Alpha && t.OnlyA > t.OnlyB:
		t.Better = a
		t.Words = fmt.Sprintf("%s detects %s more often than %s %s", a, what, b, tail)
	case t.Adjusted < Alpha:
		t.Better = b
		t.Words = fmt.Sprintf("%s detects %s more often than %s %s", b, what, a, tail)
	default:
		t.Words = fmt.Sprintf("no difference shown on %s %s", what, tail)
	}
}
