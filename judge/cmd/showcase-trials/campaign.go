package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/judge/trials/agent"
	"github.com/defectshowcase/showcase/judge/trials/experiment"
	"github.com/defectshowcase/showcase/judge/trials/kube"
	"github.com/defectshowcase/showcase/judge/trials/runner"
	"github.com/defectshowcase/showcase/platform/version"
)

// campaign is how and where a run is made: its experiment file, if any,
// and the cluster's settings.
type campaign struct {
	file, on, namespace, kubeconfig, run string
	startTimeout, ttl                    time.Duration
	clean                                bool
	set                                  map[string]bool // the flags given
	exp                                  *experiment.Experiment
	// resumed is the record of the run -resume finishes.
	resumed *trials.Provenance
}

// resume readies the options to finish the run in dir as its record
// says: on a cluster, from its experiment file, in its namespace, under
// its run's name, as many at a time unless -parallel says.
func (c *campaign) resume(dir string, o *runner.Options) error {
	p, err := trials.ReadProvenance(dir)
	if err == nil && p == nil {
		err = fmt.Errorf("%s: no %s: not the folder of a run", dir, trials.RunFile)
	}
	if err != nil {
		return err
	}
	if p.Where != "kube" || p.Run == "" || p.Experiment == "" {
		return usageError{fmt.Errorf("-resume %s: a campaign on a cluster from an experiment file resumes (this run is %s, run %q, experiment %q)", dir, p.Where, p.Run, p.Experiment)}
	}
	if c.set["namespace"] && c.namespace != p.Namespace {
		return usageError{fmt.Errorf("-resume %s: the run is in namespace %s, not %s", dir, p.Namespace, c.namespace)}
	}
	c.resumed, c.on, c.namespace, c.run = p, "kube", p.Namespace, p.Run
	c.file = filepath.Join(dir, p.Experiment)
	o.Out, o.Resume = dir, true
	if o.Concurrency <= 0 {
		o.Concurrency = p.Parallel
	}
	return nil
}

// fromFile reads the experiment file into the options and the tools; a
// flag given that says otherwise than the file is refused.
func (c *campaign) fromFile(o *runner.Options) ([]runner.Tool, error) {
	e, err := experiment.Read(c.file)
	if err != nil {
		return nil, err
	}
	c.exp = e
	disagree := func(flag, fileSays, flagSays string) error {
		return fmt.Errorf("%s says %s: %s, but -%s says %s; give one of them", c.file, flag, fileSays, flag, flagSays)
	}
	if (c.set["defects"] || c.set["mutant-seed"]) && !o.Defects.Equal(e.Defects) {
		return nil, disagree("defects", e.Defects.String(), o.Defects.String())
	}
	o.Defects = e.Defects
	if e.InterruptGrace > 0 {
		if c.set["interrupt-grace"] && o.InterruptGrace != e.InterruptGrace {
			return nil, disagree("interrupt-grace", e.InterruptGrace.String(), o.InterruptGrace.String())
		}
		o.InterruptGrace = e.InterruptGrace
	}
	if e.TermGrace > 0 {
		if c.set["term-grace"] && o.TermGrace != e.TermGrace {
			return nil, disagree("term-grace", e.TermGrace.String(), o.TermGrace.String())
		}
		o.TermGrace = e.TermGrace
	}
	if e.Coverage != "" || e.CoverageEvery > 0 {
		if c.set["coverage"] && o.Coverage.Kind != e.Coverage {
			return nil, disagree("coverage", e.Coverage, o.Coverage.Kind)
		}
		o.Coverage.Kind = e.Coverage
		if e.CoverageEvery > 0 {
			o.Coverage.Every = e.CoverageEvery
		}
	}
	var tools []runner.Tool
	for _, t := range e.Tools {
		tools = append(tools, runner.Tool{Name: t.Name, Command: t.Command, Trials: e.Trials, Budget: e.Budget, Seeds: e.Seeds,
			Report: t.Report, Image: t.Image, Version: t.Version})
	}
	return tools, nil
}

// quantities are the resources each container of a trial is given: the
// file's, or on a cluster by default one CPU and 1 GiB.
func (c *campaign) quantities() (cpu, mem resource.Quantity) {
	cpu, mem = resource.MustParse("1"), resource.MustParse("1Gi")
	if c.exp != nil {
		if !c.exp.Resources.CPU.IsZero() {
			cpu = c.exp.Resources.CPU
		}
		if !c.exp.Resources.Memory.IsZero() {
			mem = c.exp.Resources.Memory
		}
	}
	return cpu, mem
}

// provenance is what the run records of itself before it starts.
func (c *campaign) provenance(o runner.Options, tools []runner.Tool) trials.Provenance {
	p := trials.Provenance{Where: c.on, Runner: version.String(), Showcase: trials.ShowcaseSource{Defects: o.Defects.String()}, Machines: []trials.Machine{}}
	if o.Defects.Draws() {
		p.Showcase.MutantSeed = max(o.Defects.FirstSeed, 1)
	}
	if c.exp != nil {
		p.Experiment, p.ExperimentSHA256 = trials.ExperimentFile, c.exp.SHA256
		if !c.exp.Resources.CPU.IsZero() || !c.exp.Resources.Memory.IsZero() {
			p.Resources = &trials.Resources{CPU: qty(c.exp.Resources.CPU), Memory: qty(c.exp.Resources.Memory)}
		}
	}
	if c.on == "local" {
		p.Showcase.Version = version.String() // the instance is this program's
		if o.Base != "" {
			p.Showcase.Version = ""
		}
		p.Machines = append(p.Machines, *trials.ThisMachine())
	}
	for _, t := range tools {
		ts := trials.ToolSource{Name: t.Name, Version: t.Version, Command: t.Command, Report: t.Report}
		if c.on == "local" {
			ts.Binary, ts.BinarySHA256 = binary(t.Command[0])
			if ts.Version == "" && ts.Binary != "" {
				ts.Version = agent.PrintedVersion(ts.Binary)
			}
		} else {
			ts.Image = t.Image
		}
		p.Tools = append(p.Tools, ts)
	}
	return p
}

func qty(q resource.Quantity) string {
	if q.IsZero() {
		return ""
	}
	return q.String()
}

// binary is the program a command runs, and its SHA-256.
func binary(name string) (string, string) {
	path, err := exec.LookPath(name)
	if err != nil {
		return "", ""
	}
	f, err := os.Open(path)
	if err != nil {
		return path, ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return path, ""
	}
	return path, hex.EncodeToString(h.Sum(nil))
}

// connect readies a run on a cluster: the client, the namespace, the
// run's name and, unless -parallel says, how many trials the nodes hold.
func (c *campaign) connect(ctx context.Context, o *runner.Options, tools []runner.Tool, p *trials.Provenance, stderr io.Writer) error {
	for _, t := range tools {
		if t.Image == "" {
			return usageError{fmt.Errorf("%s: no image: on a cluster each tool's command runs in the image it names", t.Name)}
		}
	}
	client, ns, err := kube.Connect(c.kubeconfig, c.namespace)
	if err != nil {
		return err
	}
	cpu, mem := c.quantities()
	run := kube.NewRun()
	if c.resumed != nil {
		run = c.resumed.Run
	}
	cl := &kube.Cluster{Client: client, Namespace: ns, Run: run, Showcase: experiment.DefaultShowcaseImage, Agent: experiment.DefaultAgentImage,
		CPU: cpu, Memory: mem, StartTimeout: c.startTimeout, TTL: c.ttl, Retries: experiment.DefaultRetries}
	if c.exp != nil {
		cl.Showcase, cl.Agent, cl.Retries = c.exp.Showcase, c.exp.Agent, c.exp.Retries
	}
	if o.Coverage.Kind == trials.CoverageCode && cl.Showcase == experiment.DefaultShowcaseImage {
		cl.Showcase = experiment.DefaultShowcaseCoverImage // code coverage needs the instance built with it
	}
	if o.Concurrency <= 0 {
		n, err := kube.Parallel(ctx, client, cpu)
		if err != nil {
			return fmt.Errorf("how many trials the nodes hold (listing the nodes, which the runner's Role need not allow): %w; give -parallel N", err)
		}
		o.Concurrency = n
		fmt.Fprintf(stderr, "showcase-trials: %d trials at a time: what the nodes' allocatable CPU holds at %s per container, two containers a trial\n", n, cpu.String())
	}
	fmt.Fprintf(stderr, "showcase-trials: run %s in namespace %s (showcase-trials -clean -on kube -run %s removes what it leaves)\n", cl.Run, ns, cl.Run)
	o.Executor = cl
	p.Namespace, p.Run = ns, cl.Run
	p.Showcase.Image = cl.Showcase
	p.Resources = &trials.Resources{CPU: cpu.String(), Memory: mem.String()}
	return nil
}

// cleanCluster removes what runs left in the namespace.
func cleanCluster(ctx context.Context, c campaign, stderr io.Writer) error {
	client, ns, err := kube.Connect(c.kubeconfig, c.namespace)
	if err != nil {
		return err
	}
	return kube.Clean(ctx, client, ns, c.run, func(format string, args ...any) {
		fmt.Fprintf(stderr, "showcase-trials: "+format+"\n", args...)
	})
}
