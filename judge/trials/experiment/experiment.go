// Package experiment reads a campaign's experiment file: the tools, how
// many trials of each, their budget, seeds, the instances' defects and the
// CPU and memory each trial is given, in YAML, after FuzzBench's
// experiment configuration. The same file runs on this machine and on a
// Kubernetes cluster. Every key is known, every value checked, and each
// error names the file, the line and the key, before anything starts.
package experiment

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/judge/trials"
	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"
)

// The images make images builds, used where the file names none.
const (
	DefaultShowcaseImage = "defect-showcase/gateway:latest"
	DefaultAgentImage    = "defect-showcase/showcase-agent:latest"
	// DefaultShowcaseCoverImage is the instance's image with code
	// coverage: the gateway built with Go's coverage (make images COVER=1).
	DefaultShowcaseCoverImage = "defect-showcase/gateway:latest-cover"
)

// Experiment is a campaign, as its file states it.
type Experiment struct {
	// File is the path it was read from, Raw its bytes and SHA256 their
	// digest (hex).
	File   string
	Raw    []byte
	SHA256 string

	Trials int
	Budget time.Duration
	Seeds  []string // one per trial; nil: 1..Trials
	// Defects is what the trials' instances plant: the ten (all, the
	// default), a list, mutant sets drawn per trial (mutants[:N], from
	// mutant_seed on), or two of them (all+mutants).
	Defects trials.Plan
	// Resources are each trial's, for the tool and the instance each.
	Resources Resources
	// InterruptGrace and TermGrace: at the budget, how long the tool has
	// after SIGINT, then after SIGTERM (0: the runner's default).
	InterruptGrace, TermGrace time.Duration
	// Showcase is the instance's image on a cluster, Agent the image that
	// carries showcase-agent (the program that runs the tool in its Pod).
	Showcase, Agent string
	// Coverage is what coverage each trial records ("", api or code), every
	// CoverageEvery (0: trials.DefaultCoverageEvery).
	Coverage      string
	CoverageEvery time.Duration
	// Retries is how many times, on a cluster, a trial whose attempt was
	// lost (its Pod evicted, preempted or gone with its node) runs again:
	// at most Retries+1 attempts. Default 2.
	Retries int
	Tools   []Tool
}

// DefaultRetries is an experiment's retries when its file gives none.
const DefaultRetries = 2

// Resources are a trial's CPU and memory, as Kubernetes quantities.
type Resources struct {
	CPU, Memory resource.Quantity
}

// Tool is one tool of the campaign.
type Tool struct {
	Name    string
	Version string // "": what the tool prints, where it says
	Image   string // on a cluster, what command runs in
	Command []string
	Report  string // a glob in {out}
	Line    int    // where it is in the file
}

// Read reads and checks an experiment file.
func Read(file string) (*Experiment, error) {
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, raw)
}

// Parse checks an experiment file's bytes (file names it in errors).
func Parse(file string, raw []byte) (*Experiment, error) {
	sum := sha256.Sum256(raw)
	e := &Experiment{File: file, Raw: raw, SHA256: hex.EncodeToString(sum[:]), Defects: trials.PlanOf(catalogue.All()),
		Showcase: DefaultShowcaseImage, Agent: DefaultAgentImage}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&doc); errors.Is(err, io.EOF) || err == nil && len(doc.Content) == 0 {
		return nil, fmt.Errorf("%s: empty: an experiment needs at least its tools", file)
	} else if err != nil {
		return nil, fmt.Errorf("%s: %v", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var extra yaml.Node
	if dec.Decode(&extra) == nil {
		return nil, fmt.Errorf("%s:%d: one experiment a file: a second document begins here", file, extra.Line)
	}
	p := parser{file: file}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, p.errf(root, "", "an experiment is a mapping (trials, budget, tools, …)")
	}
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if seen[k.Value] != nil {
			return nil, p.errf(k, k.Value, "given twice (first on line %d)", seen[k.Value].Line)
		}
		seen[k.Value] = k
		switch k.Value {
		case "trials":
			e.Trials = p.positive(v, "trials")
		case "retries":
			e.Retries = p.count(v, "retries")
		case "budget":
			e.Budget = p.duration(v, "budget")
		case "interrupt_grace":
			e.InterruptGrace = p.duration(v, "interrupt_grace")
		case "term_grace":
			e.TermGrace = p.duration(v, "term_grace")
		case "seeds":
			e.Seeds = p.strings(v, "seeds")
		case "defects":
			// defects: all | mutants:10 | all+mutants, or a list of them
			s := ""
			if v.Kind == yaml.SequenceNode {
				s = strings.Join(p.strings(v, "defects"), "+")
			} else {
				s = p.scalar(v, "defects")
			}
			if s != "" {
				plan, err := trials.ParsePlan(s)
				if err != nil {
					p.fail(v, "defects", "%v", err)
				}
				plan.FirstSeed = e.Defects.FirstSeed
				e.Defects = plan
			}
		case "mutant_seed":
			// The first mutant set's seed: trial i plants seed mutant_seed+i-1.
			n, err := strconv.ParseUint(p.scalar(v, "mutant_seed"), 10, 64)
			if err != nil || n == 0 {
				p.fail(v, "mutant_seed", "want a whole number from 1: the seed of the first trial's mutant set")
			}
			e.Defects.FirstSeed = n
		case "resources":
			e.Resources = p.resources(v)
		case "showcase":
			p.mapping(v, "showcase", func(k, v *yaml.Node) {
				switch k.Value {
				case "image":
					e.Showcase = p.scalar(v, "showcase.image")
				case "agent":
					e.Agent = p.scalar(v, "showcase.agent")
				default:
					p.fail(k, "showcase."+k.Value, "unknown key (showcase takes image and agent)")
				}
			})
		case "coverage":
			// coverage: api | code | none, or {kind: code, every: 5s}
			if v.Kind == yaml.MappingNode {
				p.mapping(v, "coverage", func(k, v *yaml.Node) {
					switch k.Value {
					case "kind":
						e.Coverage = p.scalar(v, "coverage.kind")
					case "every":
						e.CoverageEvery = p.duration(v, "coverage.every")
					default:
						p.fail(k, "coverage."+k.Value, "unknown key (coverage takes kind and every)")
					}
				})
			} else {
				e.Coverage = p.scalar(v, "coverage")
			}
			switch e.Coverage {
			case "none":
				e.Coverage = ""
			case "", "api", "code":
			default:
				p.fail(v, "coverage", "%q: want api, code or none", e.Coverage)
			}
		case "tools":
			e.Tools = p.tools(v)
		default:
			p.fail(k, k.Value, "unknown key (an experiment takes trials, budget, seeds, defects, mutant_seed, resources, interrupt_grace, term_grace, retries, showcase, coverage and tools)")
		}
		if p.err != nil {
			return nil, p.err
		}
	}
	if seen["tools"] == nil {
		return nil, p.errf(root, "tools", "missing: an experiment needs at least one tool")
	}
	if e.Trials == 0 {
		e.Trials = 10
	}
	if seen["retries"] == nil {
		e.Retries = DefaultRetries
	}
	if e.Budget == 0 {
		e.Budget = 10 * time.Minute
	}
	if e.Coverage == "code" && e.Showcase == DefaultShowcaseImage {
		// Code coverage needs the instance built with it.
		e.Showcase = DefaultShowcaseCoverImage
	}
	if e.Seeds != nil && len(e.Seeds) != e.Trials {
		return nil, p.errf(seen["seeds"], "seeds", "%d seeds for %d trials", len(e.Seeds), e.Trials)
	}
	names := map[string]int{}
	for _, t := range e.Tools {
		if l, ok := names[t.Name]; ok {
			return nil, fmt.Errorf("%s:%d: tools: two tools named %q (the first on line %d): each needs a folder of its own", file, t.Line, t.Name, l)
		}
		names[t.Name] = t.Line
	}
	return e, nil
}

type parser struct {
	file string
	err  error
}

func (p *parser) errf(n *yaml.Node, key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if key != "" {
		msg = key + ": " + msg
	}
	return fmt.Errorf("%s:%d: %s", p.file, n.Line, msg)
}

// fail keeps the first error.
func (p *parser) fail(n *yaml.Node, key, format string, args ...any) {
	if p.err == nil {
		p.err = p.errf(n, key, format, args...)
	}
}

func (p *parser) scalar(n *yaml.Node, key string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.fail(n, key, "a value is needed here")
		return ""
	}
	return n.Value
}

func (p *parser) positive(n *yaml.Node, key string) int {
	s := p.scalar(n, key)
	v, err := strconv.Atoi(s)
	if p.err == nil && (err != nil || v <= 0) {
		p.fail(n, key, "%q is not a whole number above 0", s)
	}
	return v
}

// count is a whole number, 0 or more (at most 10: each is a whole
// trial's time again).
func (p *parser) count(n *yaml.Node, key string) int {
	s := p.scalar(n, key)
	v, err := strconv.Atoi(s)
	if p.err == nil && (err != nil || v < 0 || v > 10) {
		p.fail(n, key, "%q is not a whole number from 0 to 10", s)
	}
	return v
}

func (p *parser) duration(n *yaml.Node, key string) time.Duration {
	s := p.scalar(n, key)
	d, err := time.ParseDuration(s)
	if p.err == nil && (err != nil || d <= 0) {
		p.fail(n, key, "%q is not a duration above 0 (such as 90s, 10m or 1h)", s)
	}
	return d
}

func (p *parser) strings(n *yaml.Node, key string) []string {
	if n.Kind != yaml.SequenceNode {
		p.fail(n, key, "a list is needed here ([a, b, …])")
		return nil
	}
	out := []string{}
	for _, c := range n.Content {
		out = append(out, p.scalar(c, key))
	}
	return out
}

func (p *parser) mapping(n *yaml.Node, key string, each func(k, v *yaml.Node)) {
	if n.Kind != yaml.MappingNode {
		p.fail(n, key, "a mapping is needed here ({key: value, …})")
		return
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content) && p.err == nil; i += 2 {
		if seen[n.Content[i].Value] {
			p.fail(n.Content[i], key+"."+n.Content[i].Value, "given twice")
			return
		}
		seen[n.Content[i].Value] = true
		each(n.Content[i], n.Content[i+1])
	}
}

func (p *parser) quantity(n *yaml.Node, key string) resource.Quantity {
	s := p.scalar(n, key)
	q, err := resource.ParseQuantity(s)
	if p.err == nil && (err != nil || q.Sign() <= 0) {
		p.fail(n, key, "%q is not a quantity above 0 (such as 500m or 1 for CPU, 512Mi or 1Gi for memory)", s)
	}
	return q
}

func (p *parser) resources(n *yaml.Node) Resources {
	var r Resources
	p.mapping(n, "resources", func(k, v *yaml.Node) {
		switch k.Value {
		case "cpu":
			r.CPU = p.quantity(v, "resources.cpu")
		case "memory":
			r.Memory = p.quantity(v, "resources.memory")
		default:
			p.fail(k, "resources."+k.Value, "unknown key (resources takes cpu and memory)")
		}
	})
	return r
}

func (p *parser) tools(n *yaml.Node) []Tool {
	if n.Kind != yaml.SequenceNode || len(n.Content) == 0 {
		p.fail(n, "tools", "a list of at least one tool is needed here")
		return nil
	}
	var out []Tool
	for _, c := range n.Content {
		t := Tool{Line: c.Line}
		p.mapping(c, "tools", func(k, v *yaml.Node) {
			switch k.Value {
			case "name":
				t.Name = p.scalar(v, "tools.name")
			case "version":
				t.Version = p.scalar(v, "tools.version")
			case "image":
				t.Image = p.scalar(v, "tools.image")
			case "command":
				t.Command = p.strings(v, "tools.command")
			case "report":
				t.Report = p.scalar(v, "tools.report")
			default:
				p.fail(k, "tools."+k.Value, "unknown key (a tool takes name, version, image, command and report)")
			}
		})
		if p.err != nil {
			return nil
		}
		switch {
		case strings.TrimSpace(t.Name) == "":
			p.fail(c, "tools.name", "missing: each tool needs a name")
		case len(t.Command) == 0 || slices.Contains(t.Command, ""):
			p.fail(c, "tools.command", "missing: %s needs a command, a list of its arguments", t.Name)
		}
		out = append(out, t)
	}
	return out
}
