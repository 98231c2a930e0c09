package score

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// readSARIF reads SARIF 2.1.0 (read with github.com/owenrumney/go-sarif,
// the Go model of the standard): every result, on the operation of its
// webRequest (method and target), else of its first location's URI (with
// the method in the result's properties, or the contract's for the path),
// else of a logical location named "GET /path". Its class is that of its
// rule (ruleId or the rule's name, when a known check or a catalogue class)
// or of its "class" property; a CWE in the rule's tags
// ("external/cwe/cwe-306"), relationships or the result's taxa is kept, and
// matches a defect of that CWE on the operation.
func readSARIF(name string, data []byte) (Report, error) {
	r := Report{Format: "sarif", Tool: "SARIF"}
	doc, err := sarif.FromBytes(data)
	if err != nil {
		return r, &InputError{File: name, Line: jsonErrorLine(data, err), Msg: "not SARIF: " + err.Error()}
	}
	if doc.Version != "2.1.0" {
		return r, &InputError{File: name, Line: 1, Msg: fmt.Sprintf("SARIF version %q: this reader knows 2.1.0", doc.Version)}
	}
	if len(doc.Runs) == 0 {
		return r, &InputError{File: name, Line: 1, Msg: "SARIF without runs"}
	}
	var lines map[string]int
	lineOf := func(run, result int) int {
		if lines == nil {
			lines = valueLines(data, func(p []string) bool {
				return len(p) < 3 || (len(p) == 3 && p[2] == "results")
			}, func(p []string) bool { return len(p) == 4 && p[2] == "results" })
		}
		return lines[fmt.Sprintf("runs/%d/results/%d", run, result)]
	}
	for i, run := range doc.Runs {
		if run == nil {
			return r, &InputError{File: name, Line: 1, Msg: fmt.Sprintf("run %d is null", i)}
		}
		rules := map[string]*sarif.ReportingDescriptor{}
		var ruleList []*sarif.ReportingDescriptor
		if run.Tool != nil && run.Tool.Driver != nil {
			if run.Tool.Driver.Name != nil {
				r.Tool = *run.Tool.Driver.Name
				if v := run.Tool.Driver.Version; v != nil && *v != "" {
					r.Tool += " " + *v
				}
			}
			ruleList = run.Tool.Driver.Rules
			for _, rule := range ruleList {
				if rule != nil && rule.ID != nil {
					rules[*rule.ID] = rule
				}
			}
		}
		for j, res := range run.Results {
			if res == nil {
				return r, &InputError{File: name, Line: lineOf(i, j), Msg: "a null result"}
			}
			var rule *sarif.ReportingDescriptor
			ruleID := str(res.RuleID)
			if ruleID == "" && res.Rule != nil {
				ruleID = str(res.Rule.ID)
			}
			if ruleID != "" {
				rule = rules[ruleID]
			} else if res.RuleIndex > 0 && res.RuleIndex < len(ruleList) {
				rule = ruleList[res.RuleIndex]
				if rule != nil {
					ruleID = str(rule.ID)
				}
			}
			op, ok := sarifOperation(res)
			if !ok {
				return r, &InputError{File: name, Line: lineOf(i, j), Msg: "a result without an operation: give a webRequest (method and target) or a location whose URI is the request's"}
			}
			f := Finding{Operation: op, Check: ruleID, Line: lineOf(i, j)}
			if res.Message != nil {
				f.Detail = str(res.Message.Text)
			}
			f.Class = classOf(ruleID)
			if f.Class == "" && rule != nil {
				f.Class = classOf(str(rule.Name))
			}
			if f.Class == "" && res.Properties != nil {
				if c, ok := res.Properties.Properties["class"].(string); ok {
					f.Class = classOf(c)
				}
			}
			f.CWE = sarifCWE(res, rule)
			if f.Check == "" {
				f.Check = string(f.Class)
			}
			if f.Check == "" {
				return r, &InputError{File: name, Line: lineOf(i, j), Msg: "a result without a rule or a class"}
			}
			r.add(f)
		}
	}
	return r, nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func sarifOperation(res *sarif.Result) (Operation, bool) {
	if w := res.WebRequest; w != nil && w.Target != nil {
		if op, ok := operationOf(str(w.Method), *w.Target); ok {
			return op, true
		}
	}
	method := ""
	if res.Properties != nil {
		method, _ = res.Properties.Properties["method"].(string)
	}
	for _, loc := range res.Locations {
		if loc == nil {
			continue
		}
		if pl := loc.PhysicalLocation; pl != nil && pl.ArtifactLocation != nil && pl.ArtifactLocation.URI != nil {
			if op, ok := operationOf(method, *pl.ArtifactLocation.URI); ok {
				return op, true
			}
		}
		for _, ll := range loc.LogicalLocations {
			if ll == nil {
				continue
			}
			for _, n := range []*string{ll.FullyQualifiedName, ll.Name} {
				if op, ok := methodAndPath(str(n)); ok {
					return op, true
				}
			}
		}
	}
	return Operation{}, false
}

var cweTag = regexp.MustCompile(`(?i)\bcwe[-/:]?(\d{1,5})$`)

// sarifCWE is the CWE a result or its rule names, 0 if none.
func sarifCWE(res *sarif.Result, rule *sarif.ReportingDescriptor) int {
	var refs []*sarif.ReportingDescriptorReference
	refs = append(refs, res.Taxa...)
	if rule != nil {
		if rule.Properties != nil {
			for _, tag := range rule.Properties.Tags {
				if m := cweTag.FindStringSubmatch(tag); m != nil {
					n, _ := strconv.Atoi(m[1])
					return n
				}
			}
		}
		for _, rel := range rule.Relationships {
			if rel != nil {
				refs = append(refs, rel.Target)
			}
		}
	}
	for _, ref := range refs {
		if ref == nil || ref.ID == nil {
			continue
		}
		component := ""
		if ref.ToolComponent != nil {
			component = str(ref.ToolComponent.Name)
		}
		id := strings.TrimPrefix(strings.ToUpper(*ref.ID), "CWE-")
		if n, err := strconv.Atoi(id); err == nil && (strings.EqualFold(component, "CWE") || strings.HasPrefix(strings.ToUpper(*ref.ID), "CWE-")) {
			return n
		}
	}
	return 0
}
