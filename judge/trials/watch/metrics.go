package watch

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/defectshowcase/showcase/judge/trials"
)

// The run's metrics, at /metrics: what the page shows, as Prometheus's
// conventions name it (a _total counter, a _seconds gauge, an _info of
// value 1 with the labels). They are read from the folder at each scrape.
var (
	descInfo = prometheus.NewDesc("showcase_trials_run_info",
		"The run being watched: where it runs, its ID on a cluster, and the version of showcase-trials watching it.", []string{"where", "run", "version"}, nil)
	descStart = prometheus.NewDesc("showcase_trials_run_start_time_seconds",
		"When the run started, in seconds since the Unix epoch.", nil, nil)
	descEnded = prometheus.NewDesc("showcase_trials_run_ended",
		"1 once the run has ended (every trial has, or it was interrupted), 0 while it runs.", nil, nil)
	descTrials = prometheus.NewDesc("showcase_trials_trials",
		"The run's trials by tool and state: queued, running, ended, not run, cancelled.", []string{"tool", "state"}, nil)
	descDetections = prometheus.NewDesc("showcase_trials_detections_total",
		"The ended trials of a tool whose report detected the defect.", []string{"tool", "defect"}, nil)
	descSpurious = prometheus.NewDesc("showcase_trials_spurious_findings_total",
		"The findings of the defect in a tool's ended trials that were spurious: the trial's instance never triggered it, or the report has them before its first trigger. Not detections.", []string{"tool", "defect"}, nil)
	descTriggered = prometheus.NewDesc("showcase_trials_triggered_total",
		"The ended trials of a tool whose requests triggered the defect.", []string{"tool", "defect"}, nil)
	descSeconds = prometheus.NewDesc("showcase_trials_trial_seconds",
		"How long each trial has run: so far while it runs, in all once it has ended.", []string{"tool", "trial"}, nil)
	descBudget = prometheus.NewDesc("showcase_trials_trial_budget_seconds",
		"The most a trial of the tool may run.", []string{"tool"}, nil)
	descCoverage = prometheus.NewDesc("showcase_trials_api_coverage_targets",
		"The API coverage targets (all criteria) a trial's requests covered: so far while it runs, at its end once ended; where the run records coverage.", []string{"tool", "trial"}, nil)
	descCoverageOf = prometheus.NewDesc("showcase_trials_api_coverage_targets_of",
		"The API coverage targets there are, for a trial.", []string{"tool", "trial"}, nil)
	descTCL = prometheus.NewDesc("showcase_trials_api_tcl",
		"The Test Coverage Level (0 to 6) a trial's requests reached: so far while it runs, at its end once ended.", []string{"tool", "trial"}, nil)
	descMutantsPlanted = prometheus.NewDesc("showcase_trials_mutants_planted_total",
		"The mutants planted in a tool's ended trials of mutant sets (a mutant in two trials counts twice): the mutation score's denominator.", []string{"tool"}, nil)
	descMutantsDetected = prometheus.NewDesc("showcase_trials_mutants_detected_total",
		"The mutants a tool's ended trials of mutant sets detected: the mutation score's numerator.", []string{"tool"}, nil)
	descSurvivors = prometheus.NewDesc("showcase_trials_mutant_survivors",
		"The mutants a tool's ended trials did not detect, by why: not reached (its operation never requested), reached never triggered (the condition's input never sent), triggered not reported (the wrong answer let pass).", []string{"tool", "group"}, nil)
	descStatements = prometheus.NewDesc("showcase_trials_statements_covered",
		"The statements of the instance's code an ended trial ran, where the run recorded code coverage.", []string{"tool", "trial"}, nil)
)

// collector reads the run's state at each scrape.
type collector struct{ w *Watch }

func (collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{descInfo, descStart, descEnded, descTrials, descDetections, descSpurious, descTriggered, descSeconds, descBudget, descCoverage, descCoverageOf, descTCL, descStatements, descMutantsPlanted, descMutantsDetected, descSurvivors} {
		ch <- d
	}
}

func (c collector) Collect(ch chan<- prometheus.Metric) {
	s := c.w.State()
	ch <- prometheus.MustNewConstMetric(descInfo, prometheus.GaugeValue, 1, s.Where, s.Run, s.Version)
	if s.Start != nil {
		ch <- prometheus.MustNewConstMetric(descStart, prometheus.GaugeValue, float64(s.Start.UnixNano())/1e9)
	}
	ended := 0.0
	if s.Ended {
		ended = 1
	}
	ch <- prometheus.MustNewConstMetric(descEnded, prometheus.GaugeValue, ended)
	for _, t := range s.Tools {
		for _, st := range trials.States {
			ch <- prometheus.MustNewConstMetric(descTrials, prometheus.GaugeValue, float64(t.Counts[st]), t.Tool, st)
		}
		for _, tile := range t.Tiles {
			ch <- prometheus.MustNewConstMetric(descDetections, prometheus.CounterValue, float64(tile.Detected), t.Tool, string(tile.ID))
			ch <- prometheus.MustNewConstMetric(descSpurious, prometheus.CounterValue, float64(tile.Spurious), t.Tool, string(tile.ID))
			ch <- prometheus.MustNewConstMetric(descTriggered, prometheus.CounterValue, float64(tile.Triggered), t.Tool, string(tile.ID))
		}
		ch <- prometheus.MustNewConstMetric(descBudget, prometheus.GaugeValue, t.Budget, t.Tool)
	}
	for _, m := range s.Mutation {
		ch <- prometheus.MustNewConstMetric(descMutantsPlanted, prometheus.CounterValue, float64(m.Planted), m.Tool)
		ch <- prometheus.MustNewConstMetric(descMutantsDetected, prometheus.CounterValue, float64(m.Detected), m.Tool)
		for group, n := range map[string]int{"not reached": m.NotReached, "reached never triggered": m.NotTriggered, "triggered not reported": m.NotReported} {
			ch <- prometheus.MustNewConstMetric(descSurvivors, prometheus.GaugeValue, float64(n), m.Tool, group)
		}
	}
	for _, tr := range s.Trials {
		if tr.State == trials.StateRunning || tr.State == trials.StateEnded {
			ch <- prometheus.MustNewConstMetric(descSeconds, prometheus.GaugeValue, tr.Elapsed, tr.Tool, strconv.Itoa(tr.Number))
		}
		c := tr.Coverage
		if tr.State == trials.StateRunning && tr.Live != nil {
			c = tr.Live.Coverage
		}
		if c != nil && (tr.State == trials.StateRunning || tr.State == trials.StateEnded) {
			n := strconv.Itoa(tr.Number)
			ch <- prometheus.MustNewConstMetric(descCoverage, prometheus.GaugeValue, float64(c.Targets), tr.Tool, n)
			ch <- prometheus.MustNewConstMetric(descCoverageOf, prometheus.GaugeValue, float64(c.Of), tr.Tool, n)
			ch <- prometheus.MustNewConstMetric(descTCL, prometheus.GaugeValue, float64(c.TCL), tr.Tool, n)
		}
		if tr.State == trials.StateEnded && tr.Statements != nil {
			ch <- prometheus.MustNewConstMetric(descStatements, prometheus.GaugeValue, float64(*tr.Statements), tr.Tool, strconv.Itoa(tr.Number))
		}
	}
}
