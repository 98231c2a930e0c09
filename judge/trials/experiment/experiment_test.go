package experiment

import (
	"strings"
	"testing"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
)

// The example, as written.
const example = `trials: 10
budget: 10m
seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]   # optional; else 1..trials
defects: all                # the instances' DEFECTS
resources: {cpu: "1", memory: 512Mi}   # per trial, for the tool and the instance each
tools:
  - name: replay
    version: "v1"
    image: defect-showcase/showcase-replay:latest
    command: [showcase-replay, -base, "{url}", -out, "{out}/report.csv"]
    report: report.csv
`

func TestParseExample(t *testing.T) {
	e, err := Parse("x.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	if e.Trials != 10 || e.Budget != 10*time.Minute || len(e.Seeds) != 10 || e.Seeds[2] != "3" || !e.Defects.Equal(trials.PlanOf(catalogue.All())) {
		t.Errorf("read %+v", e)
	}
	if e.Resources.CPU.String() != "1" || e.Resources.Memory.String() != "512Mi" {
		t.Errorf("resources %v %v", e.Resources.CPU.String(), e.Resources.Memory.String())
	}
	if e.Showcase != DefaultShowcaseImage || e.Agent != DefaultAgentImage {
		t.Errorf("images %s %s", e.Showcase, e.Agent)
	}
	tl := e.Tools[0]
	if tl.Name != "replay" || tl.Version != "v1" || tl.Image != "defect-showcase/showcase-replay:latest" || tl.Report != "report.csv" ||
		strings.Join(tl.Command, " ") != "showcase-replay -base {url} -out {out}/report.csv" || tl.Line != 7 {
		t.Errorf("tool %+v", tl)
	}
	if len(e.SHA256) != 64 {
		t.Errorf("sha256 %q", e.SHA256)
	}
}

func TestParseDefaults(t *testing.T) {
	e, err := Parse("x.yaml", []byte("tools:\n  - {name: a, command: [a]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if e.Trials != 10 || e.Budget != 10*time.Minute || e.Seeds != nil || !e.Defects.Equal(trials.PlanOf(catalogue.All())) || e.Retries != 2 {
		t.Errorf("defaults %+v", e)
	}
	for in, want := range map[string]int{"0": 0, "5": 5} {
		e, err = Parse("x.yaml", []byte("retries: "+in+"\ntools:\n  - {name: a, command: [a]}\n"))
		if err != nil || e.Retries != want {
			t.Errorf("retries: %s: %d, %v", in, e.Retries, err)
		}
	}
	e, err = Parse("x.yaml", []byte("defects: none\nshowcase: {image: r/g:1, agent: r/a:1}\ntools:\n  - {name: a, command: [a]}\n"))
	if err != nil || !e.Defects.Equal(trials.PlanOf(catalogue.None())) || e.Showcase != "r/g:1" || e.Agent != "r/a:1" {
		t.Errorf("%+v %v", e, err)
	}
}

// Each error names the file, the line and the key.
func TestParseErrors(t *testing.T) {
	tool := "tools:\n  - {name: a, command: [a]}\n"
	for _, c := range []struct{ name, file, want string }{
		{"unknown key", "trails: 10\n" + tool, "x.yaml:1: trails: unknown key"},
		{"unknown key of a tool", "tools:\n  - name: a\n    command: [a]\n    imgae: b\n", "x.yaml:4: tools.imgae: unknown key"},
		{"unknown resource", "resources: {cpu: 1, disk: 1Gi}\n" + tool, "x.yaml:1: resources.disk: unknown key"},
		{"missing name", "tools:\n  - command: [a]\n", "x.yaml:2: tools.name: missing"},
		{"missing command", "tools:\n  - name: a\n", "x.yaml:2: tools.command: missing"},
		{"empty command", "tools:\n  - name: a\n    command: []\n", "x.yaml:2: tools.command: missing"},
		{"bad duration", "budget: 10 minutes\n" + tool, `x.yaml:1: budget: "10 minutes" is not a duration`},
		{"zero duration", "budget: 0s\n" + tool, `x.yaml:1: budget: "0s" is not a duration`},
		{"bad quantity", "resources:\n  cpu: one\n" + tool, `x.yaml:2: resources.cpu: "one" is not a quantity`},
		{"bad memory", "resources: {cpu: 1, memory: 512MB}\n" + tool, `x.yaml:1: resources.memory: "512MB" is not a quantity`},
		{"bad trials", "trials: ten\n" + tool, `x.yaml:1: trials: "ten" is not a whole number`},
		{"negative retries", "retries: -1\n" + tool, `x.yaml:1: retries: "-1" is not a whole number from 0 to 10`},
		{"too many retries", "retries: 11\n" + tool, `x.yaml:1: retries: "11" is not a whole number from 0 to 10`},
		{"seeds for other trials", "trials: 2\nseeds: [1, 2, 3]\n" + tool, "x.yaml:2: seeds: 3 seeds for 2 trials"},
		{"bad defects", "defects: SEC-99\n" + tool, "x.yaml:1: defects:"},
		{"too many mutants", "defects: mutants:31\n" + tool, `x.yaml:1: defects: "mutants:31": a campaign's mutants:N draws N mutants (1 to 30) per trial`},
		{"a planting twice", "defects: all+all\n" + tool, `x.yaml:1: defects: "all" is given twice`},
		{"bad mutant seed", "mutant_seed: zero\n" + tool, "x.yaml:1: mutant_seed: want a whole number from 1"},
		{"no tools", "trials: 2\n", "tools: missing"},
		{"two tools of one name", "tools:\n  - {name: a, command: [a]}\n  - {name: a, command: [b]}\n", `x.yaml:3: tools: two tools named "a" (the first on line 2)`},
		{"a key twice", "trials: 2\ntrials: 3\n" + tool, "x.yaml:2: trials: given twice (first on line 1)"},
		{"not YAML", "trials: [\n", "x.yaml:"},
		{"empty", "", "x.yaml: empty"},
		{"only comments", "# nothing yet\n", "x.yaml: empty"},
		{"not a mapping", "- a\n", "x.yaml:1: an experiment is a mapping"},
		{"two documents", tool + "---\n" + tool, "x.yaml:3: one experiment a file"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("x.yaml", []byte(c.file))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want %q", err, c.want)
			}
		})
	}
}

// A campaign's defects: one setting, mutant sets drawn per trial from
// mutant_seed on (in either order of the keys), or both, as a string
// joined by + or a list; trial i of a drawing planting plants
// mutants:<mutant_seed+i-1>:N.
func TestMutantPlans(t *testing.T) {
	tool := "tools:\n  - {name: a, command: [a]}\n"
	for _, c := range []struct {
		file  string
		plan  string
		first uint64
		sets  []string // trial 1 and 2 of each planting
	}{
		{"defects: mutants\n", "mutants", 1, []string{"mutants:1", "mutants:2"}},
		{"defects: mutants:14\nmutant_seed: 40\n", "mutants:14", 40, []string{"mutants:40:14", "mutants:41:14"}},
		{"mutant_seed: 40\ndefects: mutants:14\n", "mutants:14", 40, []string{"mutants:40:14", "mutants:41:14"}},
		{"defects: all+mutants:3\n", "all+mutants:3", 1, []string{"all", "all", "mutants:1:3", "mutants:2:3"}},
		{"defects: [none, mutants]\n", "none+mutants", 1, []string{"none", "none", "mutants:1", "mutants:2"}},
		{"defects: mutants:7:5\n", "mutants:7:5", 1, []string{"mutants:7:5", "mutants:7:5"}},
	} {
		e, err := Parse("x.yaml", []byte(c.file+tool))
		if err != nil {
			t.Errorf("%q: %v", c.file, err)
			continue
		}
		var sets []string
		for _, pl := range e.Defects.Each() {
			for i := 1; i <= 2; i++ {
				sets = append(sets, e.Defects.For(pl, i).String())
			}
		}
		if e.Defects.String() != c.plan || max(e.Defects.FirstSeed, 1) != c.first || strings.Join(sets, " ") != strings.Join(c.sets, " ") {
			t.Errorf("%q: plan %s from seed %d, sets %v; want %s from %d, %v", c.file, e.Defects, e.Defects.FirstSeed, sets, c.plan, c.first, c.sets)
		}
	}
}

// The repository's example (docs/trials.md runs it) reads as it says.
func TestShippedExample(t *testing.T) {
	e, err := Read("../../experiments/reference.yaml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Read("../../experiments/mutants.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if m.Trials != 30 || m.Defects.String() != "mutants:14" || m.Defects.FirstSeed != 1 || len(m.Tools) != 2 || !strings.Contains(strings.Join(m.Tools[0].Command, " "), "-defects {defects}") {
		t.Errorf("mutants.yaml: %+v", m)
	}
	if e.Trials != 10 || e.Budget != 10*time.Minute || len(e.Tools) != 2 || e.Tools[1].Name != "weak" ||
		e.Tools[0].Image != "defect-showcase/showcase-replay:latest" || e.Showcase != DefaultShowcaseImage || e.Resources.Memory.String() != "512Mi" {
		t.Errorf("%+v", e)
	}
}
