package coverage

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// The criteria, by the names the report gives them.
const (
	Paths                = "paths"
	Operations           = "operations"
	RequestContentTypes  = "request_content_types"
	ResponseContentTypes = "response_content_types"
	Parameters           = "parameters"
	StatusClasses        = "status_classes"
	ParameterValues      = "parameter_values"
	StatusCodes          = "status_codes"
	ResponseProperties   = "response_properties"
)

// Levels are the criteria each Test Coverage Level adds to the one below,
// as the paper arranges them (its Table 2). TCL7 adds operation flows,
// which a contract without links does not declare: MaxTCL is 6.
var Levels = [][]string{
	1: {Paths},
	2: {Operations},
	3: {RequestContentTypes, ResponseContentTypes},
	4: {Parameters, StatusClasses},
	5: {ParameterValues, StatusCodes},
	6: {ResponseProperties},
}

// MaxTCL is the highest level the instance can tell.
const MaxTCL = 6

// Classes are the status code classes each operation is to answer: a
// success and a client error, the paper's correct and erroneous usage. A
// 5XX is counted under the status codes, not as a class.
var Classes = []string{"2XX", "4XX"}

// Version is the version of the report's format. Version 2 added each
// operation's no_answer: before it, a request the client gave up on was
// listed under status 499.
const Version = 2

// Report is an instance's API coverage since Since: what its requests
// covered of each operation of the contract it serves, the criteria's
// totals and the TCL reached.
type Report struct {
	Version int       `json:"version"`
	Since   time.Time `json:"since"`
	// Requests is every request the instance received since Since, any path.
	Requests uint64 `json:"requests"`
	// TCL is the highest level whose criteria, and those of every level
	// below, are all covered; MaxTCL is the highest the instance can tell.
	TCL        int                `json:"tcl"`
	MaxTCL     int                `json:"max_tcl"`
	Criteria   []Criterion        `json:"criteria"`
	Operations []OperationCovered `json:"operations"`
	// Undeclared counts what the contract does not declare, not listed one
	// by one: requests to a path it does not name (the contract itself and
	// the pages included), and to a path it names with another method.
	Undeclared Undeclared `json:"undeclared"`
}

// Criterion is one criterion's count over the whole contract. A criterion
// with nothing to cover (Total 0, such as parameter values where no
// parameter is an enum or a boolean) is covered.
type Criterion struct {
	Name    string `json:"name"`
	Level   int    `json:"level"`
	Covered int    `json:"covered"`
	Total   int    `json:"total"`
}

// Title is a criterion's name for a person: "status codes".
func Title(name string) string { return strings.ReplaceAll(name, "_", " ") }

// Done reports whether the criterion is fully covered.
func (c Criterion) Done() bool { return c.Covered >= c.Total }

// Undeclared counts requests outside the contract's operations.
type Undeclared struct {
	Paths   uint64 `json:"paths"`
	Methods uint64 `json:"methods"`
}

// OperationCovered is what the requests with an operation's method covered
// of it.
type OperationCovered struct {
	Method      string `json:"method"`
	Path        string `json:"path"`
	OperationID string `json:"operation_id,omitempty"`
	// Requests is every request with its method: answered, or given up on.
	Requests uint64 `json:"requests"`
	// NoAnswer is how many of them the client gave up on (it left, or its
	// deadline passed) before their answer: they reached the operation and
	// count for what they sent, never for a status, class, media type or
	// property of an answer.
	NoAnswer uint64 `json:"no_answer"`
	// Parameters are the declared parameters and body properties, each
	// with how many requests sent it and, for an enum or boolean, each of
	// its values.
	Parameters []ParameterSent `json:"parameters"`
	// RequestTypes are the request bodies' media types: each declared one,
	// and each other one sent ("" for none), of an operation that declares
	// a body; a body property counts only in a body of a JSON type.
	RequestTypes []MediaCount `json:"request_types"`
	// Responses are the documented responses, each with how many answers
	// fell under it and the declared properties they carried.
	Responses []ResponseAnswered `json:"responses"`
	// Statuses are the statuses answered; Response names the documented
	// response each falls under, "" when none does (undocumented).
	Statuses      []StatusAnswered `json:"statuses"`
	StatusClasses []ClassAnswered  `json:"status_classes"`
	// ResponseTypes are the answers' media types: each documented one and
	// each other one answered.
	ResponseTypes []MediaCount `json:"response_types"`
}

// ParameterSent is a parameter and how often it was sent.
type ParameterSent struct {
	In     string      `json:"in"`
	Name   string      `json:"name"`
	Sent   uint64      `json:"sent"`
	Values []ValueSent `json:"values,omitempty"`
}

// ValueSent is a value of an enum or boolean parameter.
type ValueSent struct {
	Value string `json:"value"`
	Sent  uint64 `json:"sent"`
}

// MediaCount is a media type, whether the contract documents it there, and
// how many requests or answers had it.
type MediaCount struct {
	Type       string `json:"type"`
	Documented bool   `json:"documented"`
	Count      uint64 `json:"count"`
}

// ResponseAnswered is a documented response.
type ResponseAnswered struct {
	Status     string            `json:"status"` // "200", "4XX", "default"
	Answered   uint64            `json:"answered"`
	Properties []PropertyCarried `json:"properties"`
}

// PropertyCarried is a declared response property and how many answers
// carried it: a JSON object that has it at the top level.
type PropertyCarried struct {
	Name    string `json:"name"`
	Carried uint64 `json:"carried"`
}

// StatusAnswered is a status answered.
type StatusAnswered struct {
	Status   int    `json:"status"`
	Response string `json:"response"`
	Answered uint64 `json:"answered"`
}

// ClassAnswered is a status code class and how many answers were in it.
type ClassAnswered struct {
	Class    string `json:"class"`
	Answered uint64 `json:"answered"`
}

// Undocumented are the statuses answered that no documented response of
// their operation covers, as "GET /path 404".
func (r *Report) Undocumented() []string {
	var out []string
	for _, o := range r.Operations {
		for _, s := range o.Statuses {
			if s.Response == "" && s.Answered > 0 {
				out = append(out, fmt.Sprintf("%s %s %d", o.Method, o.Path, s.Status))
			}
		}
	}
	return out
}

// Compute fills in the criteria and the TCL from the operations' counts.
func (r *Report) Compute() {
	r.Version, r.MaxTCL = Version, MaxTCL
	counts := map[string]*Criterion{}
	for level, names := range Levels {
		for _, n := range names {
			counts[n] = &Criterion{Name: n, Level: level}
		}
	}
	add := func(name string, covered bool) {
		c := counts[name]
		c.Total++
		if covered {
			c.Covered++
		}
	}
	paths := map[string]bool{}
	var order []string
	for _, o := range r.Operations {
		if _, seen := paths[o.Path]; !seen {
			order = append(order, o.Path)
		}
		paths[o.Path] = paths[o.Path] || o.Requests > 0
		add(Operations, o.Requests > 0)
		for _, p := range o.Parameters {
			add(Parameters, p.Sent > 0)
			for _, v := range p.Values {
				add(ParameterValues, v.Sent > 0)
			}
		}
		for _, t := range o.RequestTypes {
			if t.Documented {
				add(RequestContentTypes, t.Count > 0)
			}
		}
		for _, t := range o.ResponseTypes {
			if t.Documented {
				add(ResponseContentTypes, t.Count > 0)
			}
		}
		for _, c := range o.StatusClasses {
			add(StatusClasses, c.Answered > 0)
		}
		for _, resp := range o.Responses {
			add(StatusCodes, resp.Answered > 0)
			for _, p := range resp.Properties {
				add(ResponseProperties, p.Carried > 0)
			}
		}
	}
	for _, p := range order {
		add(Paths, paths[p])
	}
	r.Criteria = r.Criteria[:0]
	r.TCL = 0
	reached := true
	for level, names := range Levels {
		for _, n := range names {
			c := counts[n]
			r.Criteria = append(r.Criteria, *c)
			reached = reached && c.Done()
		}
		if level > 0 && reached {
			r.TCL = level
		}
	}
}

// Targets are the criteria's covered targets and their totals, summed:
// one number for all of the API coverage.
func (r *Report) Targets() (covered, total int) {
	for _, c := range r.Criteria {
		covered += c.Covered
		total += c.Total
	}
	return covered, total
}

// Criterion returns the named criterion's count.
func (r *Report) Criterion(name string) (Criterion, bool) {
	for _, c := range r.Criteria {
		if c.Name == name {
			return c, true
		}
	}
	return Criterion{}, false
}

// Summary writes the report for a person: each criterion's covered/total
// and the TCL, what was answered undocumented, what the requests never
// covered, and what they sent outside the contract.
func (r *Report) Summary(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, "API coverage since %s: %d requests, TCL %d of %d\n", r.Since.UTC().Format(time.RFC3339), r.Requests, r.TCL, r.MaxTCL)
	b.WriteString("(TCL7 adds operation flows, which the contract does not declare)\n\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "criterion\tTCL\tcovered\t")
	for _, c := range r.Criteria {
		fmt.Fprintf(tw, "%s\t%d\t%d/%d\t%s\n", Title(c.Name), c.Level, c.Covered, c.Total, percent(c))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var undocumented, never, unanswered []string
	for _, o := range r.Operations {
		op := o.Method + " " + o.Path
		if o.NoAnswer > 0 {
			unanswered = append(unanswered, fmt.Sprintf("%s: %d of %d", op, o.NoAnswer, o.Requests))
		}
		for _, s := range o.Statuses {
			if s.Response == "" {
				undocumented = append(undocumented, fmt.Sprintf("%s: status %d (%d)", op, s.Status, s.Answered))
			}
		}
		for _, t := range o.RequestTypes {
			if !t.Documented && t.Count > 0 {
				undocumented = append(undocumented, fmt.Sprintf("%s: request type %s (%d)", op, typeName(t.Type), t.Count))
			}
		}
		for _, t := range o.ResponseTypes {
			if !t.Documented && t.Count > 0 {
				undocumented = append(undocumented, fmt.Sprintf("%s: response type %s (%d)", op, typeName(t.Type), t.Count))
			}
		}
		if o.Requests == 0 {
			never = append(never, op+": never called")
			continue
		}
		var missing []string
		for _, p := range o.Parameters {
			if p.Sent == 0 {
				missing = append(missing, fmt.Sprintf("%s %s never sent", p.In, p.Name))
			}
			for _, v := range p.Values {
				if v.Sent == 0 {
					missing = append(missing, fmt.Sprintf("%s %s=%s never sent", p.In, p.Name, v.Value))
				}
			}
		}
		for _, c := range o.StatusClasses {
			if c.Answered == 0 {
				missing = append(missing, "no "+c.Class+" answer")
			}
		}
		for _, resp := range o.Responses {
			if resp.Answered == 0 {
				missing = append(missing, "response "+resp.Status+" never answered")
				continue
			}
			for _, p := range resp.Properties {
				if p.Carried == 0 {
					missing = append(missing, fmt.Sprintf("response %s never carried %s", resp.Status, p.Name))
				}
			}
		}
		for _, m := range missing {
			never = append(never, op+": "+m)
		}
	}
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&b, "\n%s\n", title)
		for _, l := range lines {
			fmt.Fprintf(&b, "  %s\n", l)
		}
	}
	section("Answered or sent, but not documented:", undocumented)
	section("Not covered:", never)
	section("Given up on by the client before an answer (reached, no status):", unanswered)
	fmt.Fprintf(&b, "\nOutside the contract: %d requests to undeclared paths, %d with an undeclared method\n", r.Undeclared.Paths, r.Undeclared.Methods)
	_, err := io.WriteString(w, b.String())
	return err
}

func typeName(t string) string {
	if t == "" {
		return "(none)"
	}
	return t
}

func percent(c Criterion) string {
	if c.Total == 0 {
		return "(nothing to cover)"
	}
	return fmt.Sprintf("%.0f%%", 100*float64(c.Covered)/float64(c.Total))
}
