// Package wfc is the showcase's side of Web Fuzzing Commons (WFC,
// github.com/WebFuzzing/Commons): the report a WFC tool writes
// (report.json, schema 0.x), as Go types the scorer reads and the
// showcase writes, and the answer key: the showcase's planted faults as
// the WFC report of a tool that found every one.
//
// The published schema (v0.6.0) has two slips this package lives with. A
// found fault's "operationId" is defined but "endpointId" required: it
// reads either and writes both. Its fault codes allow 100-104, 200-206 and
// 900-999, while WFC's catalogue defines F207-F210: the answer key leaves
// those codes (SEC-01's F207, ERR-02's F209) out of its found faults, and
// says so in a warning, unless asked for the catalogue's codes
// (Options.CatalogueCodes).
package wfc

import (
	"fmt"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/coverage"
)

// Report is a WFC report.
type Report struct {
	SchemaVersion          string         `json:"schemaVersion"`
	ToolName               string         `json:"toolName"`
	ToolVersion            string         `json:"toolVersion"`
	CreationTime           time.Time      `json:"creationTime"`
	Faults                 Faults         `json:"faults"`
	ProblemDetails         ProblemDetails `json:"problemDetails"`
	TotalTests             int            `json:"totalTests"`
	TestFilePaths          []string       `json:"testFilePaths"`
	TestCases              []TestCase     `json:"testCases"`
	ExecutionTimeInSeconds int            `json:"executionTimeInSeconds"`
	Extra                  []Coverage     `json:"extra,omitempty"`
	Warnings               []Warning      `json:"warnings,omitempty"`
}

// Faults are the faults a tool found.
type Faults struct {
	TotalNumber int          `json:"totalNumber"`
	FoundFaults []FoundFault `json:"foundFaults"`
}

// FoundFault is a fault found on an operation. The schema defines
// operationId and requires endpointId: a reader takes either, a writer
// writes both.
type FoundFault struct {
	OperationID     string          `json:"operationId,omitempty"`
	EndpointID      string          `json:"endpointId,omitempty"`
	TestCaseID      string          `json:"testCaseId"`
	FaultCategories []FaultCategory `json:"faultCategories"`
}

// Operation is the fault's operation, "GET:/users/{id}", from whichever
// key the tool wrote.
func (f FoundFault) Operation() string {
	if f.OperationID != "" {
		return f.OperationID
	}
	return f.EndpointID
}

// FaultCategory is a fault's code and its context.
type FaultCategory struct {
	Code    int     `json:"code"`
	Context *string `json:"context"`
}

// ProblemDetails are what is particular to the kind of API.
type ProblemDetails struct {
	REST *REST `json:"rest,omitempty"`
}

// REST is the problem details of a REST API.
type REST struct {
	OutputHTTPCalls    int               `json:"outputHttpCalls"`
	EvaluatedHTTPCalls int               `json:"evaluatedHttpCalls"`
	EndpointIDs        []string          `json:"endpointIds"`
	CoveredHTTPStatus  []CoveredEndpoint `json:"coveredHttpStatus"`
}

// CoveredEndpoint is the statuses a test case got from an endpoint.
type CoveredEndpoint struct {
	EndpointID string `json:"endpointId"`
	TestCaseID string `json:"testCaseId"`
	HTTPStatus []int  `json:"httpStatus"`
}

// TestCase is a test case the tool wrote.
type TestCase struct {
	ID       string `json:"id"`
	FilePath string `json:"filePath,omitempty"`
	Name     string `json:"name,omitempty"`
}

// Coverage is coverage a tool collected.
type Coverage struct {
	ToolName string      `json:"toolName"`
	Criteria []Criterion `json:"criteria"`
}

// Criterion is one coverage criterion.
type Criterion struct {
	Name    string `json:"name"`
	Covered int    `json:"covered"`
	Total   *int   `json:"total,omitempty"`
}

// Warning is a warning of the run as a whole.
type Warning struct {
	Message         string `json:"message"`
	Category        string `json:"category,omitempty"`
	DisplayPriority int    `json:"displayPriority"`
}

// OperationID is WFC's name for an operation: "GET:/security/unauthenticated-access".
func OperationID(method, path string) string { return method + ":" + path }

// ParseOperationID splits "GET:/path" (or "GET:http://host/path") into its
// method and target; ok is false when it has no method before a colon.
func ParseOperationID(id string) (method, target string, ok bool) {
	method, target, ok = strings.Cut(strings.TrimSpace(id), ":")
	if !ok || method == "" || strings.ContainsAny(method, " /") {
		return "", "", false
	}
	return strings.ToUpper(method), target, true
}

// ToolName is the answer key's toolName.
const ToolName = "defect-showcase answer key"

// Options are the answer key's choices.
type Options struct {
	// Version is the showcase's version, the report's toolVersion.
	Version string
	// Created is the report's creationTime.
	Created time.Time
	// CatalogueCodes writes every code as WFC's catalogue defines it,
	// SEC-01 under F207 and ERR-02 under F209 too, though the published
	// schema's code ranges leave 207-210 out: the report is then what a
	// tool that follows the catalogue writes, not valid against the
	// schema.
	CatalogueCodes bool
	// Coverage, when not nil, is the instance's API coverage of the
	// requests it received, written as the report's extra coverage.
	Coverage *coverage.Report
}

// AnswerKey is the WFC report of a tool that found every planted fault of
// an instance with the given defects active: one found fault per active
// defect that WFC can express, on its operation, with each of its codes
// and a context that names the defect; a test case per trigger request of
// every defect, with the status it gets from such an instance. What WFC
// cannot express (a slow answer; a code outside the schema's ranges,
// unless asked) is a warning.
func AnswerKey(active catalogue.Set, opt Options) Report {
	r := Report{SchemaVersion: catalogue.WFCSchemaVersion, ToolName: ToolName, ToolVersion: opt.Version,
		CreationTime: opt.Created.UTC().Truncate(time.Second), TestFilePaths: []string{}, TestCases: []TestCase{},
		Faults: Faults{FoundFaults: []FoundFault{}}}
	rest := &REST{EndpointIDs: []string{}, CoveredHTTPStatus: []CoveredEndpoint{}}
	for _, e := range catalogue.Endpoints {
		rest.EndpointIDs = append(rest.EndpointIDs, OperationID(e.Method, e.Path))
	}
	for _, d := range active.Defects() {
		e := catalogue.Endpoints[d.Endpoint-1]
		op := OperationID(e.Method, e.Path)
		on := d.IsMutant() || active.Active(d.ID)
		for i, t := range d.Triggers {
			id := fmt.Sprintf("%s/%d", d.ID, i+1)
			status := t.OffStatus
			if on {
				status = t.Status
			}
			r.TestCases = append(r.TestCases, TestCase{ID: id, Name: fmt.Sprintf("%s %s", e.Method, d.Target(t))})
			rest.CoveredHTTPStatus = append(rest.CoveredHTTPStatus, CoveredEndpoint{EndpointID: op, TestCaseID: id, HTTPStatus: []int{status}})
		}
		if !on {
			continue
		}
		fault := FoundFault{OperationID: op, EndpointID: op, TestCaseID: string(d.ID) + "/1"}
		var left []string
		for _, code := range d.WFC {
			if !catalogue.WFCSchemaAllows(code) && !opt.CatalogueCodes {
				f, _ := catalogue.WFCFaultOf(code)
				left = append(left, f.ID())
				continue
			}
			ctx := fmt.Sprintf("%s (%s %s)", contextOf(d, code), d.ID, d.Title)
			if d.IsMutant() {
				// Its ID and title name its operation, whose path may hold
				// words (status) that the reader of an F101's context
				// takes for its class.
				ctx = fmt.Sprintf("%s (mutant %s, condition %s)", contextOf(d, code), d.Operator, d.Condition)
			}
			fault.FaultCategories = append(fault.FaultCategories, FaultCategory{Code: code, Context: &ctx})
		}
		switch {
		case len(d.WFC) == 0:
			r.Warnings = append(r.Warnings, Warning{Category: "not expressible",
				Message: fmt.Sprintf("%s %s on %s is planted and active, and not among the found faults: WFC has no fault class for it (%s)", d.ID, d.Title, op, d.CodesNote)})
		case len(left) == len(d.WFC):
			r.Warnings = append(r.Warnings, Warning{Category: "outside the schema",
				Message: fmt.Sprintf("%s %s on %s is planted and active, and not among the found faults: its code %s is outside the code ranges of WFC's published report schema %s (ask for the catalogue's codes to have it written)", d.ID, d.Title, op, strings.Join(left, ", "), catalogue.WFCSchemaVersion)})
		case len(left) > 0:
			r.Warnings = append(r.Warnings, Warning{Category: "outside the schema",
				Message: fmt.Sprintf("%s %s on %s is found under its other codes, not under %s: outside the code ranges of WFC's published report schema %s (ask for the catalogue's codes to have it written)", d.ID, d.Title, op, strings.Join(left, ", "), catalogue.WFCSchemaVersion)})
		}
		if len(fault.FaultCategories) > 0 {
			r.Faults.FoundFaults = append(r.Faults.FoundFaults, fault)
			r.Faults.TotalNumber += len(fault.FaultCategories)
		}
	}
	r.TotalTests = len(r.TestCases)
	rest.OutputHTTPCalls, rest.EvaluatedHTTPCalls = len(r.TestCases), len(r.TestCases)
	r.ProblemDetails.REST = rest
	if opt.Coverage != nil {
		r.Extra = []Coverage{CoverageOf(opt.Coverage)}
	}
	return r
}

// contextOf is the context of a defect's code: for the code that detects
// it, the words that say which class of check (an F101's context decides
// between a status, a content type and a body); for a further code, what
// it is.
func contextOf(d catalogue.Defect, code int) string {
	for _, c := range d.Classes {
		if catalogue.WFCClass(code, catalogue.WFCContext(c)) == c {
			return catalogue.WFCContext(c)
		}
	}
	f, _ := catalogue.WFCFaultOf(code)
	return f.Name
}
