package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/judge/trials"
	"github.com/defectshowcase/showcase/platform/version"
)

// sink is the report the replay writes: each request sent, each finding,
// and flush, after which the file holds everything so far.
type sink interface {
	tested(test, method, path, target string, status int) // status 0: no answer
	found(test, method, path string, f finding, at time.Time)
	flush() error
	close()
}

// csvSink writes the plain report, a row per finding.
type csvSink struct {
	f *os.File
	w *csv.Writer
}

func newCSVSink(name string) (*csvSink, error) {
	f, err := os.Create(name)
	if err != nil {
		return nil, err
	}
	w := csv.NewWriter(f)
	_ = w.Write([]string{"method", "path", "class", "detail", "time"})
	return &csvSink{f: f, w: w}, nil
}

func (s *csvSink) tested(string, string, string, string, int) {}

func (s *csvSink) found(_, method, path string, f finding, at time.Time) {
	_ = s.w.Write([]string{method, path, f.class, f.detail, at.UTC().Format(time.RFC3339Nano)})
}

func (s *csvSink) flush() error {
	s.w.Flush()
	return s.w.Error()
}

func (s *csvSink) close() { s.f.Close() }

// wfcSink writes a WFC report, whole, at each flush: written to a file
// beside it and renamed over it, so that the report is never half
// written, whenever the run is stopped.
type wfcSink struct {
	name    string
	start   time.Time
	rep     wfc.Report
	faults  map[string]int // a test case's found fault, by test case and operation
	unique  map[string]bool
	calls   int
	covered map[string]bool
	// targetCoverage, when not nil, asks the instance for its API
	// coverage, written as the report's extra at each flush.
	targetCoverage func() (*coverage.Report, error)
}

func newWFCSink(name string) *wfcSink {
	r := wfc.Report{SchemaVersion: catalogue.WFCSchemaVersion, ToolName: "showcase-replay", ToolVersion: version.String(),
		Faults: wfc.Faults{FoundFaults: []wfc.FoundFault{}}, TestFilePaths: []string{}, TestCases: []wfc.TestCase{},
		ProblemDetails: wfc.ProblemDetails{REST: &wfc.REST{EndpointIDs: []string{}, CoveredHTTPStatus: []wfc.CoveredEndpoint{}}}}
	return &wfcSink{name: name, start: time.Now(), rep: r, faults: map[string]int{}, unique: map[string]bool{}, covered: map[string]bool{}}
}

func (s *wfcSink) tested(test, method, path, target string, status int) {
	op := wfc.OperationID(method, path)
	s.calls++
	s.rep.TestCases = append(s.rep.TestCases, wfc.TestCase{ID: test, Name: method + " " + target})
	rest := s.rep.ProblemDetails.REST
	if !s.covered[op] {
		s.covered[op] = true
		rest.EndpointIDs = append(rest.EndpointIDs, op)
	}
	got := []int{}
	if status != 0 {
		got = []int{status}
	}
	rest.CoveredHTTPStatus = append(rest.CoveredHTTPStatus, wfc.CoveredEndpoint{EndpointID: op, TestCaseID: test, HTTPStatus: got})
}

func (s *wfcSink) found(test, method, path string, f finding, _ time.Time) {
	op := wfc.OperationID(method, path)
	class := catalogue.Class(f.class)
	code, ok := catalogue.WFCCodeOf(class)
	if !ok {
		s.rep.Warnings = append(s.rep.Warnings, wfc.Warning{Category: "not expressible", DisplayPriority: 1,
			Message: fmt.Sprintf("%s on %s in %s (%s): WFC has no fault class for it", class, op, test, f.detail)})
		return
	}
	context := catalogue.WFCContext(class) + ": " + f.detail
	key := test + " " + op
	i, seen := s.faults[key]
	if !seen {
		i = len(s.rep.Faults.FoundFaults)
		s.faults[key] = i
		s.rep.Faults.FoundFaults = append(s.rep.Faults.FoundFaults, wfc.FoundFault{OperationID: op, EndpointID: op, TestCaseID: test})
	}
	ff := &s.rep.Faults.FoundFaults[i]
	ff.FaultCategories = append(ff.FaultCategories, wfc.FaultCategory{Code: code, Context: &context})
	if u := fmt.Sprint(code, context); !s.unique[u] {
		s.unique[u] = true
		s.rep.Faults.TotalNumber++
	}
}

func (s *wfcSink) flush() error {
	s.rep.CreationTime = time.Now().UTC().Truncate(time.Second)
	s.rep.TotalTests = len(s.rep.TestCases)
	s.rep.ExecutionTimeInSeconds = int(time.Since(s.start).Seconds())
	s.rep.ProblemDetails.REST.OutputHTTPCalls, s.rep.ProblemDetails.REST.EvaluatedHTTPCalls = s.calls, s.calls
	if s.targetCoverage != nil {
		// What the target counted of the run: the instance's word, kept
		// as it last was when the instance does not answer.
		if c, err := s.targetCoverage(); err == nil {
			s.rep.Extra = []wfc.Coverage{wfc.CoverageOf(c)}
		}
	}
	b, err := json.MarshalIndent(s.rep, "", "  ")
	if err != nil {
		return err
	}
	return trials.WriteAtomic(s.name, append(b, '\n'))
}

func (s *wfcSink) close() {}
