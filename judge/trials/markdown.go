package trials

import (
	"fmt"
	"io"
	"strings"
	"time"
)

// WriteMarkdown writes the summary for a person: per tool, how its trials
// ended and each defect's stages over them with the median times; each
// pair's verdicts; the ranking; and the pictures beside it (chartFile and
// cdFile, relative to the Markdown; "" for none).
func (s Summary) WriteMarkdown(w io.Writer, chartFile, cdFile string) error {
	fmt.Fprintf(w, "# Trials\n\n")
	fmt.Fprintf(w, "Times are seconds since the tool started, in each trial. A trial that did not detect (or trigger) a defect is censored at its budget: the median is Kaplan-Meier's, with its 95 %% confidence interval, \"beyond the budget\" when fewer than half the trials got there.\n\n")
	for _, t := range s.Tools {
		fmt.Fprintf(w, "## %s: %d trials, budget %s\n\n", md(t.Tool), t.Trials, duration(t.Budget))
		for _, n := range t.NotRun {
			fmt.Fprintf(w, "**Trial %d could not run**, and is left out of every figure: %s\n\n", n.Trial, md(n.Why))
		}
		for _, l := range t.Lost {
			on := ""
			if l.Node != "" {
				on = " on node " + md(l.Node)
			}
			fmt.Fprintf(w, "Trial %d's attempt %d was lost%s, and is not scored: %s\n\n", l.Trial, l.Attempt, on, md(l.Why))
		}
		if t.Trials == 0 {
			fmt.Fprintf(w, "No trial of it ran.\n\n")
			continue
		}
		sp := t.DetectedSpread
		fmt.Fprintf(w, "Ended: %s. Defects detected per trial: %s (median %s, IQR %s–%s).\n\n",
			strings.Join(sortedOutcomes(t.Outcomes), ", "), ints(t.Detected), num(sp.Median), num(sp.Q1), num(sp.Q3))
		if len(t.TestedNothing) > 0 {
			fmt.Fprintf(w, "**Trials %s tested nothing**: their requests reached none of the operations. They count, as detecting nothing.\n\n", ints(t.TestedNothing))
		}
		if len(t.NoReport) > 0 {
			fmt.Fprintf(w, "**Trials %s left no report the scorer reads** (see each trial's `trial.json`): they count as detecting nothing.\n\n", ints(t.NoReport))
		}
		if len(t.Truncated) > 0 {
			fmt.Fprintf(w, "Trials %s left a report cut short (the tool was stopped before it closed it): each is scored for what it held.\n\n", ints(t.Truncated))
		}
		if !t.Timed {
			fmt.Fprintf(w, "Its reports carry no time for some detections (JUnit, SARIF and WFC give none): no time to detect is given for those defects, and they are left out of the chart.\n\n")
		}
		fmt.Fprintln(w, "| defect | reached | triggered | detected | spurious | time to trigger, median (95 % CI) | time to detect, median (95 % CI) |")
		fmt.Fprintln(w, "|---|--:|--:|--:|---|---|---|")
		for _, d := range t.Defects {
			det := kmText(d.TimeToDetect)
			if d.Untimed > 0 {
				det = fmt.Sprintf("%d untimed", d.Untimed)
			}
			spurious := "—"
			if d.Spurious > 0 {
				spurious = fmt.Sprintf("%d in %d/%d", d.Spurious, d.SpuriousTrials, t.Trials)
			}
			fmt.Fprintf(w, "| %s | %d/%d | %d/%d | %d/%d | %s | %s | %s |\n", d.ID, d.Reached, t.Trials, d.Triggered, t.Trials, d.Detected, t.Trials, spurious, kmText(d.TimeToTrigger), det)
		}
		fmt.Fprintln(w)
		if n := t.spurious(); n > 0 {
			fmt.Fprintf(w, "%d of its findings were **spurious**: findings of a planted defect that the trial's own instance never triggered, or that the report has before the defect's first trigger. Each is a false positive the ground truth proves (`spurious_why` in each `trial.json`), and none is counted as a detection, in a time to detect or in a test.\n\n", n)
		}
	}
	if len(s.Pairs) > 0 {
		fmt.Fprintf(w, "## Which is better\n\nPer pair of tools: defects found per trial (Mann-Whitney U, exact up to 20 trials in all, two-sided; Vargha and Delaney's Â12); per defect, whether each detects it (Fisher's exact test on detected or not over the trials) and, where both reports time it, when (the log-rank test over the censored times). Every p is adjusted by Holm's method over the pair's tests; a difference is shown at adjusted p < %.2f.\n\n", Alpha)
		for _, p := range s.Pairs {
			fmt.Fprintf(w, "**%s and %s**\n\n", md(p.A), md(p.B))
			for _, v := range p.Verdicts {
				fmt.Fprintf(w, "- %s.\n", md(v.Words))
			}
			for _, n := range p.Notes {
				fmt.Fprintf(w, "\n%s\n", md(n))
			}
			fmt.Fprintln(w)
		}
	}
	if r := s.Ranking; r != nil {
		fmt.Fprintf(w, "## Ranking\n\n%s\n\n", md(r.Words))
		if cdFile != "" && len(r.MeanRanks) > 0 {
			fmt.Fprintf(w, "![Critical-difference diagram: mean ranks, and the tools the Nemenyi test does not tell apart joined by a bar](%s)\n\n", cdFile)
		}
	}
	if p := s.Provenance; p != nil {
		p.writeMarkdown(w)
	}
	if chartFile != "" {
		fmt.Fprintf(w, "![Defects detected over time since the tool started: each tool's median over its trials, stepping at each detection, and the band between the quartiles](%s)\n\nDetections whose report carries no time are not on the chart.\n", chartFile)
	}
	return nil
}

func ints(xs []int) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprint(x)
	}
	return strings.Join(parts, ", ")
}

func md(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// writeMarkdown is the provenance for a person.
func (p Provenance) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "## Provenance\n\n")
	if p.Experiment != "" {
		fmt.Fprintf(w, "- Experiment: `%s`, SHA-256 `%s`\n", p.Experiment, p.ExperimentSHA256)
	}
	where := "this machine (`local`)"
	if p.Where == "kube" {
		where = fmt.Sprintf("Kubernetes Jobs (`kube`), namespace `%s`, run `%s`", p.Namespace, p.Run)
	}
	fmt.Fprintf(w, "- Ran on: %s, %d trial(s) at a time, from %s to %s; showcase-trials %s\n", where, p.Parallel, p.Start.UTC().Format(time.RFC3339), p.End.UTC().Format(time.RFC3339), p.Runner)
	if r := p.Resources; r != nil {
		fmt.Fprintf(w, "- Each trial's tool and instance: CPU %s, memory %s each\n", orDash(r.CPU), orDash(r.Memory))
	}
	sc := p.Showcase
	fmt.Fprintf(w, "- The showcase: version %s, `DEFECTS=%s`%s\n", orDash(sc.Version), sc.Defects, imageText(sc.Image, sc.Digest))
	for _, t := range p.Tools {
		bin := ""
		if t.Binary != "" {
			bin = fmt.Sprintf(", `%s` SHA-256 `%s`", t.Binary, t.BinarySHA256)
		}
		fmt.Fprintf(w, "- %s: version %s%s%s\n", md(t.Name), orDash(t.Version), imageText(t.Image, t.Digest), bin)
	}
	for _, m := range p.Machines {
		fmt.Fprintf(w, "- Machine %s: %s, %d cores, %.1f GiB, Linux %s\n", orDash(m.Hostname), orDash(m.CPUModel), m.Cores, float64(m.Memory)/(1<<30), orDash(m.Kernel))
	}
	fmt.Fprintf(w, "\nThe raw data, a row per trial and defect, is in `%s`.\n\n", RawCSV)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func imageText(image, digest string) string {
	switch {
	case image == "":
		return ""
	case digest == "":
		return fmt.Sprintf(", image `%s`", image)
	}
	return fmt.Sprintf(", image `%s` (`%s`)", image, digest)
}
