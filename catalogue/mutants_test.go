package catalogue

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// The drawing is pinned: a change to the operators, the conditions or the
// drawing that moves a seed's set shows here, and must be a new ground
// truth version, since a set named by its seed in a published result
// would otherwise change under it.
func TestDrawPinned(t *testing.T) {
	t.Parallel()
	want := []ID{
		"drop-required:GET /security/unauthenticated-access:key-sent",
		"server-error:POST /internal-server-errors/improper-input-type-handling:number-empty",
		"wrong-type:POST /internal-server-errors/exceeding-column-size:text-max-length",
		"wrong-type:POST /internal-server-errors/improper-unicode-encoding:text-emoji",
		"slow:GET /response-conformance/malformed-json:accept-html",
		"undeclared-status:GET /response-conformance/incorrect-content-type:any",
		"malformed-body:GET /response-conformance/missing-field:any",
		"undeclared-status:GET /response-conformance/undocumented-status-code:id=0",
		"wrong-content-type:GET /performance/unbounded-result-set:limit-boundary",
		"slow:GET /performance/inefficient-algorithm:searchTerm=n",
	}
	var got []ID
	for _, m := range Mutants(1, DefaultMutants).Mutants() {
		got = append(got, m.ID())
	}
	if !slices.Equal(got, want) {
		t.Errorf("mutants:1 draws\n%s\nwant\n%s", strings.Join(idStrings(got), "\n"), strings.Join(idStrings(want), "\n"))
	}
}

func idStrings(ids []ID) []string {
	var s []string
	for _, id := range ids {
		s = append(s, string(id))
	}
	return s
}

// Over 1,000 seeds and every size: the set has exactly N mutants, at most
// three on an operation, N ≤ 10 on N operations; it is the same when drawn
// again; every mutant is rebuilt from its ID alone; and no two on one
// operation share a condition's request or a class of check.
func TestDrawShape(t *testing.T) {
	t.Parallel()
	seen := map[string]bool{}
	for seed := range uint64(1000) {
		for _, n := range []int{1, 2, 5, 10, 11, 20, 29, 30} {
			ms := DrawMutants(seed, n)
			if len(ms) != n {
				t.Fatalf("seed %d, N %d: %d mutants", seed, n, len(ms))
			}
			again := DrawMutants(seed, n)
			perOp := map[int][]Mutant{}
			for i, m := range ms {
				if again[i].ID() != m.ID() {
					t.Fatalf("seed %d, N %d: drawn twice, %s then %s", seed, n, m.ID(), again[i].ID())
				}
				back, err := MutantOf(m.ID())
				if err != nil || back.ID() != m.ID() || back.Depth() != m.Depth() {
					t.Fatalf("%s: rebuilt as %v, %v", m.ID(), back.ID(), err)
				}
				if !compatible(m, perOp[m.op.n]) {
					t.Fatalf("seed %d, N %d: %s does not fit beside %v", seed, n, m.ID(), perOp[m.op.n])
				}
				perOp[m.op.n] = append(perOp[m.op.n], m)
				seen[m.Operator.Name+"/"+fmt.Sprint(m.Depth())] = true
			}
			for op, here := range perOp {
				if len(here) > MaxMutantsPerOp || (n <= len(Endpoints) && len(here) != 1) {
					t.Fatalf("seed %d, N %d: %d mutants on operation %d", seed, n, len(here), op)
				}
			}
			if n == DefaultMutants && len(perOp) != len(Endpoints) {
				t.Fatalf("seed %d: the default set covers %d operations", seed, len(perOp))
			}
		}
	}
	// Every operator is drawn, at every depth where it has a mutant.
	for _, m := range AllMutants() {
		if k := m.Operator.Name + "/" + fmt.Sprint(m.Depth()); !seen[k] {
			t.Errorf("%s at depth %d is never drawn over 1,000 seeds", m.Operator.Name, m.Depth())
		}
	}
}

// Only valid pairs exist: no skip-validation or reject-valid where the
// operation takes no input, no auth-bypass where no key is required, no
// undeclared status where a default response declares every status; and
// every mutant has a trigger its operator changes (no equivalent mutant).
func TestOnlyValidMutants(t *testing.T) {
	t.Parallel()
	ops := map[string]bool{}
	for _, m := range AllMutants() {
		op := m.op
		ops[m.Operator.Name] = true
		switch m.Operator.Name {
		case "skip-validation", "reject-valid":
			if !op.input || op.auth {
				t.Errorf("%s on an operation without input", m.ID())
			}
		case "auth-bypass":
			if !op.auth {
				t.Errorf("%s where no key is required", m.ID())
			}
		case "undeclared-status":
			if op.defaultResponse {
				t.Errorf("%s where every status is declared", m.ID())
			}
		}
		d := m.Defect()
		if len(d.Triggers) == 0 {
			t.Errorf("%s has no trigger", m.ID())
		}
		for _, tr := range d.Triggers {
			if tr.Shows == "" || tr.OffShows == "" || tr.Status == 0 || tr.OffStatus == 0 {
				t.Errorf("%s: trigger %+v says too little", m.ID(), tr)
			}
		}
	}
	for _, o := range Operators {
		if !ops[o.Name] {
			t.Errorf("operator %s has no mutant", o.Name)
		}
	}
}

// No request meets two conditions that a set may plant on one operation:
// random requests built from every value the conditions read.
func TestConditionsDisjoint(t *testing.T) {
	t.Parallel()
	values := []string{"", "0", "00", "1", "2", "5", "42", "-1", "-7", "999", "1000", "1001", "100000", "100001", "abc", "1.5", "+3", " ", "   ", "12a", "١٢", "café", "ok 🙂", strings.Repeat("a", 255), strings.Repeat("a", 256)}
	names := []string{"id", "limit", "n", "searchTerm", "number", "text", "note"}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for range 20000 {
		q := url.Values{}
		body := map[string]any{}
		for _, name := range names {
			switch rng.IntN(4) {
			case 0:
				q.Set(name, pick(values))
			case 1:
				body[name] = pick(values)
			case 2:
				body[name] = rng.IntN(3) - 1
			}
		}
		r, _ := http.NewRequest(http.MethodGet, "/?"+q.Encode(), nil)
		switch rng.IntN(5) {
		case 0:
			r.Header.Set("Accept", pick([]string{"application/json", "text/html", "*/*", "text/html, application/json"}))
		case 1:
			r.Header["X-Api-Key"] = []string{pick([]string{"", "wrong", defaultAPIKey})}
		}
		b := []byte(fmt.Sprint(body))
		if len(body) > 0 {
			b = mustMarshal(body)
		}
		in := NewInput(r, b)
		for _, op := range mutantOps {
			for i := range op.conditions {
				for j := range op.conditions {
					a, c := &op.conditions[i], &op.conditions[j]
					if i != j && !op.overlap(a, c) && a.match(in) && c.match(in) {
						t.Errorf("operation %d: %s and %s both meet %s %s, yet may be planted together", op.n, a.name, c.name, r.URL.RawQuery, b)
					}
				}
			}
		}
	}
}

// Settings read and write back, and bad ones say what is wanted.
func TestParseMutants(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, out string }{
		{"mutants:7", "mutants:7"}, {"MUTANTS:7:10", "mutants:7"}, {"mutants:18446744073709551615:30", "mutants:18446744073709551615:30"}, {"mutants:0:1", "mutants:0:1"},
	} {
		s, err := Parse(c.in)
		if err != nil || s.String() != c.out {
			t.Errorf("Parse(%q) = %q, %v; want %q", c.in, s, err, c.out)
			continue
		}
		if len(s.Mutants()) != s.N() || s.Active(SEC01) || !s.Active(s.Mutants()[0].ID()) || len(s.ActiveIDs()) != s.N() {
			t.Errorf("%s: the ten must be off and the mutants on: %v", c.in, s.ActiveIDs())
		}
	}
	for _, bad := range []string{"mutants", "mutants:", "mutants:x", "mutants:-1", "mutants:7:0", "mutants:7:31", "mutants:7:10:1", "mutants:18446744073709551616", "mutants7"} {
		if _, err := Parse(bad); err == nil || !strings.Contains(err.Error(), "mutants:SEED") {
			t.Errorf("Parse(%q): %v, want an error saying mutants:SEED", bad, err)
		}
	}
}

func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
