// Package score reads the report of an API-testing tool run against the
// showcase and scores it against the ground truth: which planted defects the
// tool reported, which it reached without noticing, what it reported that is
// not planted, and, against a report of the same tool on an instance with
// every defect switched off, its false positives. Several tools' scorecards
// make a scoreboard.
//
// A report is a list of findings, each an operation, a class of finding
// (catalogue.Class) and the tool's own name for its check. Findings are
// counted once per operation and check, the way WAFP deduplicates failures:
// a tool that reports the same failure a hundred times has found one thing.
package score

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/wfc"
)

// Operation is a method and path of the contract, or of whatever the tool
// reported on. Method is "" when the report gave none and the path is not
// one operation of the contract; Path is "" for a finding that is on no
// HTTP path at all (a scanner's finding on the host).
type Operation struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

func (o Operation) String() string {
	if o.Path == "" {
		return "(no operation)"
	}
	return strings.TrimSpace(o.Method + " " + o.Path)
}

// Finding is one kind of failure a tool reported on one operation.
type Finding struct {
	Operation Operation `json:"operation"`
	// Class is the class of finding the tool's check belongs to; "" when it
	// belongs to none of catalogue's classes (the check is then all there
	// is to say).
	Class catalogue.Class `json:"class"`
	Check string          `json:"check"`         // the tool's name for it: a check, a rule, a title
	CWE   int             `json:"cwe,omitempty"` // the CWE the tool gave, if any
	// Detail is the tool's first message for it, first line.
	Detail string `json:"detail"`
	Count  int    `json:"count"` // how often the report has it
	Line   int    `json:"line"`  // where in the report it is first
	// Sent is the method the report gave when the operation at its path
	// has another (nuclei's templates send GET to POST paths): the finding
	// is on that operation all the same (see placeOnContract).
	Sent string `json:"sent,omitempty"`
	// At is the earliest time the report gives for it (Schemathesis's
	// scenario, nuclei's result, a plain report's time column); nil when
	// the report carries none (SARIF, JUnit).
	At *time.Time `json:"at,omitempty"`
	// Last is the latest time the report gives for it: with At, the span
	// its Count occurrences fall in.
	Last *time.Time `json:"last,omitempty"`
}

// Report is what a tool reported: its findings, deduplicated.
type Report struct {
	File   string `json:"file"`
	Format string `json:"format"`
	// FormatVersion is the version of the format's schema the report
	// names and the reader read (WFC's schemaVersion); "" where the
	// format has one version.
	FormatVersion string `json:"format_version,omitempty"`
	// Tool is the tool's name, with its version where the report carries
	// it.
	Tool     string    `json:"tool"`
	Findings []Finding `json:"findings"`
	// ToolErrors counts the tool's own trouble the report records (JUnit
	// <error>s, Schemathesis's errors): not findings, but a sign that part
	// of the run tested nothing.
	ToolErrors int `json:"tool_errors"`
	// Truncated says where and how the report was cut short (a tool
	// stopped before it closed its report, a file cut mid-line); its
	// findings are those it held before the cut. "" for a whole report.
	Truncated string `json:"truncated,omitempty"`
	// NoTests: the report says itself that the run made no test and no
	// call (a WFC report's totalTests and evaluatedHttpCalls of 0): it
	// tested nothing, whatever the instance counted.
	NoTests bool `json:"no_tests,omitempty"`
	// Coverage is what the tool says it covered (a WFC report's extra).
	Coverage []wfc.Coverage `json:"coverage,omitempty"`

	index map[findingKey]int // where each operation and check is in Findings
}

type findingKey struct {
	op    Operation
	check string
	class catalogue.Class
	cwe   int
}

// add counts f n times, merging it with the finding of the same operation,
// check, class and CWE.
func (r *Report) add(f Finding, n int) {
	f = placeOnContract(f)
	k := findingKey{f.Operation, f.Check, f.Class, f.CWE}
	if i, ok := r.index[k]; ok {
		r.Findings[i].Count += n
		if at := r.Findings[i].At; f.At != nil && (at == nil || f.At.Before(*at)) {
			r.Findings[i].At = f.At
		}
		if last := r.Findings[i].Last; f.At != nil && (last == nil || f.At.After(*last)) {
			r.Findings[i].Last = f.At
		}
		return
	}
	if r.index == nil {
		r.index = map[findingKey]int{}
	}
	r.index[k] = len(r.Findings)
	f.Count = n
	f.Last = f.At
	f.Detail = firstLine(f.Detail)
	r.Findings = append(r.Findings, f)
}

// InputError is a report the scorer cannot read: it names the file and the
// line, and nothing is scored.
type InputError struct {
	File string
	Line int // 0 when the whole file is at fault
	Msg  string
}

func (e *InputError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return e.File + ": " + e.Msg
}

// checkClasses maps the names tools give their checks, lower case, to the
// class they belong to: catalogue's own names, Schemathesis 4's checks and
// the titles its reports give them, and the few nuclei template tags that
// name one of the classes. A name not here belongs to no class.
var checkClasses = map[string]catalogue.Class{
	// Schemathesis 4 checks.
	"not_a_server_error":          catalogue.ServerError,
	"status_code_conformance":     catalogue.UndocumentedStatus,
	"content_type_conformance":    catalogue.WrongContentType,
	"response_schema_conformance": catalogue.InvalidBody,
	"negative_data_rejection":     catalogue.AcceptedInvalid,
	"missing_required_header":     catalogue.AcceptedInvalid,
	"positive_data_acceptance":    catalogue.RejectedValid,
	"ignored_auth":                catalogue.AuthBypass,
	"max_response_time":           catalogue.SlowResponse,
	// The titles Schemathesis 4 gives them in its text and JUnit reports.
	"server error":                                catalogue.ServerError,
	"undocumented http status code":               catalogue.UndocumentedStatus,
	"undocumented content-type":                   catalogue.WrongContentType,
	"missing content-type header":                 catalogue.WrongContentType,
	"malformed media type":                        catalogue.WrongContentType,
	"response violates schema":                    catalogue.InvalidBody,
	"json deserialization error":                  catalogue.InvalidBody,
	"api accepted schema-violating request":       catalogue.AcceptedInvalid,
	"missing header not rejected":                 catalogue.AcceptedInvalid,
	"api rejected schema-compliant request":       catalogue.RejectedValid,
	"api accepts requests without authentication": catalogue.AuthBypass,
	"response time limit exceeded":                catalogue.SlowResponse,
}

func init() {
	for _, c := range Classes {
		checkClasses[string(c)] = c
	}
}

// Classes are catalogue's classes of finding, the vocabulary of the CSV and
// JSON reports.
var Classes = []catalogue.Class{
	catalogue.UndocumentedStatus, catalogue.WrongContentType, catalogue.InvalidBody, catalogue.ServerError,
	catalogue.AcceptedInvalid, catalogue.RejectedValid, catalogue.AuthBypass, catalogue.SlowResponse,
}

// classOf is the class of a tool's check name; "" for none.
func classOf(check string) catalogue.Class {
	return checkClasses[strings.ToLower(strings.TrimSpace(check))]
}

// statusClass is the class of a status code a tool reported as a failure
// without naming a check (APIFuzzer fails every answer that is not 2xx or
// 4xx): a 5xx is a server error, anything else is the tool's own finding.
func statusClass(status int) catalogue.Class {
	if status >= 500 && status <= 599 {
		return catalogue.ServerError
	}
	return ""
}

// operationOf reads an operation from a method and a target that may be a
// path, a path relative to the base URL (nuclei's SARIF writes
// "security/unauthenticated-access"), a path with a query or a whole URL.
// Without a method the operation is found from the path alone (pathOnly).
func operationOf(method, target string) (Operation, bool) {
	target = strings.TrimSpace(target)
	if target == "" {
		return Operation{}, false
	}
	u, err := url.Parse(target)
	if err != nil || u.Opaque != "" || (u.Scheme != "" && u.Scheme != "http" && u.Scheme != "https") {
		return Operation{}, false
	}
	path := u.Path
	if u.Scheme == "" && u.Host == "" && !strings.HasPrefix(path, "/") {
		path = "/" + path // relative to the base URL, which is the service's root
	}
	if path == "" {
		path = "/"
	}
	method = strings.ToUpper(strings.TrimSpace(method))
	if method == "" {
		return pathOnly(path), true
	}
	return Operation{Method: method, Path: path}, true
}

// The rule that places a finding, the same in every format: the path
// decides. Where the contract has exactly one operation at a finding's
// path (each of the showcase's paths has one), the finding is on that
// operation, whatever method the report names or whether it names one:
// SARIF names none, and nuclei's JSON names the GET its template sent to a
// POST path, and both must land where the other does. The method sent is
// kept in Sent. A path with several operations takes the method to choose
// (none given, or none of them: on the path alone, no operation); a path
// that is not the contract's is on no operation.
func placeOnContract(f Finding) Finding {
	if f.Operation.Method == "" || f.Operation.Path == "" {
		return f
	}
	op := pathOnly(f.Operation.Path)
	if op.Method != "" && op.Method != f.Operation.Method {
		f.Sent, f.Operation = f.Operation.Method, op
	}
	return f
}

// pathOnly is the operation of a path given with no method: the contract's
// one operation at that path; otherwise the path, with no method, on no
// operation of the contract.
func pathOnly(path string) Operation {
	var found []catalogue.Endpoint
	for _, e := range catalogue.Endpoints {
		if e.Path == path {
			found = append(found, e)
		}
	}
	if len(found) == 1 {
		return Operation{Method: found[0].Method, Path: path}
	}
	return Operation{Path: path}
}

// methodAndPath finds "METHOD /path" in a text, such as a test case's name,
// or else a path or URL alone.
func methodAndPath(text string) (Operation, bool) {
	fields := strings.Fields(text)
	for i := 0; i+1 < len(fields); i++ {
		if isMethod(fields[i]) {
			if op, ok := operationOf(fields[i], fields[i+1]); ok && (strings.HasPrefix(fields[i+1], "/") || isURL(fields[i+1])) {
				return op, true
			}
		}
	}
	for _, f := range fields {
		if strings.HasPrefix(f, "/") || isURL(f) {
			if op, ok := operationOf("", f); ok {
				return op, true
			}
		}
	}
	return Operation{}, false
}

func isURL(s string) bool { return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") }

func isMethod(s string) bool {
	switch s {
	case "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT":
		return true
	}
	return false
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = strings.TrimSpace(s[:i])
	}
	const max = 200
	if len(s) > max {
		s = strings.ToValidUTF8(s[:max], "") + "…"
	}
	return s
}
