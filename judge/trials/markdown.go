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
	if s.Mutation != nil && len(s.Tools) > 0 {
		fmt.Fprintf(w, "The run planted the ten in some trials and mutant sets in others: the ten's figures come first, from their trials alone; the mutants' are under [Mutation score](#mutation-score).\n\n")
	}
	if len(s.Tools) > 0 {
		fmt.Fprintf(w, "Times are seconds since the tool started, in each trial. A trial that did not detect (or trigger) a defect is censored at its budget: the median is Kaplan-Meier's, with its 95 %% confidence interval, \"beyond the budget\" when fewer than half the trials got there.\n\n")
	}
	for _, t := range s.Tools {
		fmt.Fprintf(w, "## %s: %d trials, budget %s\n\n", md(t.Tool), t.Trials, duration(t.Budget))
		writeNotRun(w, t.NotRun, t.Lost)
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
	if m := s.Mutation; m != nil {
		m.writeMarkdown(w)
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
	fmt.Fprintf(w, "- The showcase: version %s, `DEFECTS=%s`%s%s\n", orDash(sc.Version), sc.Defects, seedText(sc.MutantSeed), imageText(sc.Image, sc.Digest))
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

// seedText is where a run's mutant sets begin: ", a mutant set per trial
// from seed 7 (…)"; "" for a run that draws none.
func seedText(first uint64) string {
	if first == 0 {
		return ""
	}
	return fmt.Sprintf(", a mutant set per trial from seed %d (the i-th trial of mutants: seed %d+i-1, the same for every tool)", first, first)
}

// writeNotRun names a tool's trials that could not run and its attempts
// lost on a cluster, a paragraph each.
func writeNotRun(w io.Writer, notRun []NotRun, lost []LostAttempt) {
	for _, p := range notRunText(notRun, lost, func(s string) string { return "**" + s + "**" }, md) {
		fmt.Fprintf(w, "%s\n\n", p)
	}
}

// notRunText says what writeNotRun does, a sentence each, with strong
// for the words to stress and esc for what the records give.
func notRunText(notRun []NotRun, lost []LostAttempt, strong, esc func(string) string) []string {
	var out []string
	for _, n := range notRun {
		out = append(out, fmt.Sprintf("%s, and is left out of every figure: %s", strong(fmt.Sprintf("Trial %d could not run", n.Trial)), esc(n.Why)))
	}
	for _, l := range lost {
		on := ""
		if l.Node != "" {
			on = " on node " + esc(l.Node)
		}
		out = append(out, fmt.Sprintf("Trial %d's attempt %d was lost%s, and is not scored: %s", l.Trial, l.Attempt, on, esc(l.Why)))
	}
	return out
}

// writeMarkdown is the mutation score for a person: each tool's score,
// by operator and by depth; its survivors in the three groups by
// operator; the pairs' tests; the mutants no tool detected.
func (m MutationSummary) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "## Mutation score\n\n")
	fmt.Fprintf(w, "The trials of mutant sets (%d sets: %s). A tool's score is the mutants it detected over those planted in its trials; a mutant in two trials counts twice. Each score has its 95 %% interval (%s).\n\n", len(m.Sets), setsText(m.Sets), m.Method)
	fmt.Fprintf(w, "| tool | trials | score | depth 0 | depth 1 | depth 2 | spurious |\n|---|--:|---|---|---|---|--:|\n")
	for _, t := range m.Tools {
		fmt.Fprintf(w, "| %s | %d | %s | %s | %s | %s | %d |\n", md(t.Tool), t.Trials, t.Score.Text(), scoreAt(t.ByDepth, "0").Text(), scoreAt(t.ByDepth, "1").Text(), scoreAt(t.ByDepth, "2").Text(), t.Spurious)
	}
	fmt.Fprintln(w)
	for _, t := range m.Tools {
		if len(t.NotRun)+len(t.Lost) > 0 {
			fmt.Fprintf(w, "%s:\n\n", md(t.Tool))
			writeNotRun(w, t.NotRun, t.Lost)
		}
	}
	ops := m.operators()
	fmt.Fprintf(w, "**By operator**\n\n| operator |")
	for _, t := range m.Tools {
		fmt.Fprintf(w, " %s |", md(t.Tool))
	}
	fmt.Fprintf(w, "\n|---|%s\n", strings.Repeat("---|", len(m.Tools)))
	for _, op := range ops {
		fmt.Fprintf(w, "| %s |", op)
		for _, t := range m.Tools {
			fmt.Fprintf(w, " %s |", scoreAt(t.ByOperator, op).Text())
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "\n**Why each survivor survived**: *not reached*, the tool never requested its operation; *reached, never triggered*, it did not send the input the mutant's condition needs; *triggered, not reported*, the answer was wrong and its checks let it pass.\n\n")
	fmt.Fprintf(w, "| tool | operator | not reached | reached, never triggered | triggered, not reported |\n|---|---|--:|--:|--:|\n")
	for _, t := range m.Tools {
		for _, s := range t.Survivors {
			fmt.Fprintf(w, "| %s | %s | %d | %d | %d |\n", md(t.Tool), s.Operator, s.NotReached, s.NotTriggered, s.NotReported)
		}
	}
	fmt.Fprintln(w)
	if len(m.Pairs) > 0 {
		fmt.Fprintf(w, "**Which detects more**: McNemar's exact test on the mutants both tools met (the same set, by seed), from the pairs only one detected; by operator, Holm-adjusted over the operators. A difference is shown at adjusted p < %.2f.\n\n", Alpha)
		for _, p := range m.Pairs {
			fmt.Fprintf(w, "- %s.\n", md(p.All.Words))
			for _, t := range p.ByOperator {
				if t.OnlyA+t.OnlyB > 0 {
					fmt.Fprintf(w, "  - %s.\n", md(t.Words))
				}
			}
		}
		fmt.Fprintln(w)
	}
	if len(m.Undetected) == 0 {
		fmt.Fprintf(w, "Every mutant planted was detected by at least one tool.\n\n")
		return
	}
	fmt.Fprintf(w, "**Mutants no tool detected** (%d), each with a request that triggers it and why it survived each tool:\n\n| set | mutant | depth | a trigger |", len(m.Undetected))
	for _, t := range m.Tools {
		fmt.Fprintf(w, " %s |", md(t.Tool))
	}
	fmt.Fprintf(w, "\n|---|---|--:|---|%s\n", strings.Repeat("---|", len(m.Tools)))
	for _, u := range m.Undetected {
		fmt.Fprintf(w, "| %s | `%s` | %d | `%s` |", u.Set, md(string(u.ID)), u.Depth, md(u.Trigger))
		for _, t := range m.Tools {
			g := u.Groups[t.Tool]
			if g == "" {
				g = "—"
			}
			fmt.Fprintf(w, " %s |", g)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// operators are the operators any tool met, in the catalogue's order.
func (m MutationSummary) operators() []string {
	seen := map[string]bool{}
	var ops []string
	for _, t := range m.Tools {
		for _, s := range t.ByOperator {
			if !seen[s.Key] {
				seen[s.Key] = true
				ops = append(ops, s.Key)
			}
		}
	}
	return operatorOrder(ops)
}

// scoreAt is the score under key; nothing planted when there is none.
func scoreAt(ss []Score, key string) Score {
	for _, s := range ss {
		if s.Key == key {
			return s
		}
	}
	return Score{Key: key}
}

// setsText names the sets, the first and last few when there are many.
func setsText(sets []string) string {
	if len(sets) <= 4 {
		return strings.Join(sets, ", ")
	}
	return strings.Join(sets[:2], ", ") + ", …, " + sets[len(sets)-1]
}
