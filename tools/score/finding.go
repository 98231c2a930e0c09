// Package score reads the report of an API-testing tool run against the
// showcase and scores it against the ground truth: which planted defects the
// tool reported, which it reached without noticing, what it reported that is
// not planted, and, against a report of the same tool on an instance with
// every defect switched off, its false positives.
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

	"github.com/defectshowcase/showcase/catalogue"
)

// Operation is a method and path of the contract, or of whatever the tool
// reported on.
type Operation struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

func (o Operation) String() string { return strings.TrimSpace(o.Method + " " + o.Path) }

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
}

// Report is what a tool reported: its findings, deduplicated.
type Report struct {
	File     string    `json:"file"`
	Format   string    `json:"format"`
	Tool     string    `json:"tool"`
	Findings []Finding `json:"findings"`
}

// add counts f, merging it with the finding of the same operation and check.
func (r *Report) add(f Finding) {
	for i := range r.Findings {
		g := &r.Findings[i]
		if g.Operation == f.Operation && g.Check == f.Check && g.Class == f.Class {
			g.Count++
			return
		}
	}
	f.Count = 1
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
// the titles its reports give them. A name not here belongs to no class.
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

// operationOf reads an operation from a method and a target that may be a
// path, a path with a query or a whole URL. A method left out is the one
// the contract has for the path, when the path is one of its operations.
func operationOf(method, target string) (Operation, bool) {
	target = strings.TrimSpace(target)
	if target == "" {
		return Operation{}, false
	}
	u, err := url.Parse(target)
	if err != nil || !strings.HasPrefix(u.Path, "/") {
		return Operation{}, false
	}
	path := u.Path
	method = strings.ToUpper(strings.TrimSpace(method))
	if method == "" {
		for _, e := range catalogue.Endpoints {
			if e.Path == path {
				method = e.Method
			}
		}
	}
	if method == "" {
		return Operation{}, false
	}
	return Operation{Method: method, Path: path}, true
}

// methodAndPath finds "METHOD /path" in a text, such as a test case's name.
func methodAndPath(text string) (Operation, bool) {
	fields := strings.Fields(text)
	for i := 0; i+1 < len(fields); i++ {
		if isMethod(fields[i]) {
			if op, ok := operationOf(fields[i], fields[i+1]); ok {
				return op, true
			}
		}
	}
	for _, f := range fields {
		if strings.HasPrefix(f, "/") || strings.HasPrefix(f, "http://") || strings.HasPrefix(f, "https://") {
			if op, ok := operationOf("", f); ok {
				return op, true
			}
		}
	}
	return Operation{}, false
}

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
