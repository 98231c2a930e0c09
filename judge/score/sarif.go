package score

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/owenrumney/go-sarif/v3/pkg/report/v210/sarif"
)

// readSARIF reads SARIF 2.1.0: every result, on the operation of its
// webRequest (method and target), else of its first location's URI (with
// the method in the result's properties; without one, by the path alone:
// nuclei writes the URI relative to the base, with no method), else of a
// logical location named "GET /path". Its class is that of its rule
// (ruleId or the rule's name, when a known check or a catalogue class) or
// of its "class" property; a CWE in the rule's tags
// ("external/cwe/cwe-306"), relationships or the result's taxa is kept, and
// matches a defect of that CWE on the operation.
//
// The document is walked with encoding/json's tokenizer and each result,
// and each run's tool, decoded on its own into go-sarif's model
// (github.com/owenrumney/go-sarif), so that no more of the report is held
// than one result and the distinct findings so far. A run's tool may come
// after its results (nuclei writes it last): results wait, merged by what
// they say, until the run ends. A document cut short is closed after its
// last whole value and read for what it holds, marked truncated.
func readSARIF(name string, r io.Reader) (Report, error) {
	rep := Report{Format: "sarif", Tool: "SARIF"}
	doc, err := openJSONDoc(name, r, 1, "not SARIF")
	if err != nil {
		return rep, err
	}
	cl, lc, dec := doc.cl, doc.lc, doc.dec
	fail := func(err error) (Report, error) { return rep, doc.fail(err) }
	refuse := func(line int, format string, args ...any) (Report, error) {
		return rep, doc.refuse(line, format, args...)
	}
	version, runs := "", -1
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return fail(err)
		}
		switch key {
		case "version":
			if err := dec.Decode(&version); err != nil {
				return fail(err)
			}
		case "runs":
			line := lc.lineAt(dec.InputOffset())
			if err := expectDelim(dec, '['); err != nil {
				return refuse(line, "not SARIF: runs is not an array")
			}
			for runs = 0; dec.More(); runs++ {
				if err := readSARIFRun(name, lc, dec, runs, &rep); err != nil {
					return rep, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
		default:
			if err := skipValue(dec); err != nil {
				return fail(err)
			}
		}
	}
	if err := doc.end(); err != nil {
		return rep, err
	}
	if version == "" && cl.cut {
		version = "2.1.0" // written last (nuclei does), and cut off: the sniffer knew it by its runs or its $schema
	}
	switch {
	case version != "2.1.0":
		return refuse(1, "SARIF version %q: this reader knows 2.1.0", version)
	case runs < 0:
		return refuse(1, "not SARIF: no runs")
	case runs == 0:
		return refuse(1, "SARIF without runs")
	}
	rep.Truncated = cl.truncation("results")
	return rep, nil
}

// sarifPending is a result whose rule may not be known yet, with how many
// results said the same.
type sarifPending struct {
	op        Operation
	ruleID    string
	ruleIndex int
	class     string // its "class" property
	cwe       int    // from its taxa
	detail    string
	line      int
	count     int
}

type sarifKey struct {
	op             Operation
	ruleID, class  string
	ruleIndex, cwe int
}

func readSARIFRun(name string, lc *lineCounter, dec *json.Decoder, run int, rep *Report) error {
	start := lc.lineAt(dec.InputOffset())
	if err := expectDelim(dec, '{'); err != nil {
		if err == errNotDelim {
			return &InputError{File: name, Line: start, Msg: fmt.Sprintf("not SARIF: run %d is not an object", run)}
		}
		return jsonError(name, lc, dec, "not SARIF", err)
	}
	var (
		tool    sarif.Tool
		pending []sarifPending
		index   = map[sarifKey]int{}
	)
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return jsonError(name, lc, dec, "not SARIF", err)
		}
		switch key {
		case "tool":
			if err := dec.Decode(&tool); err != nil {
				return jsonError(name, lc, dec, "not SARIF", err)
			}
		case "results":
			line := lc.lineAt(dec.InputOffset())
			if err := expectDelim(dec, '['); err != nil {
				if err == errNotDelim {
					return &InputError{File: name, Line: line, Msg: fmt.Sprintf("not SARIF: the results of run %d are not an array", run)}
				}
				return jsonError(name, lc, dec, "not SARIF", err)
			}
			for dec.More() {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return jsonError(name, lc, dec, "not SARIF", err)
				}
				line := lc.lineAt(dec.InputOffset() - int64(len(raw)))
				var res *sarif.Result
				if err := json.Unmarshal(raw, &res); err != nil {
					return &InputError{File: name, Line: line, Msg: "not SARIF: a result: " + err.Error()}
				}
				if res == nil {
					return &InputError{File: name, Line: line, Msg: "a null result"}
				}
				p, err := sarifResult(res)
				if err != nil {
					return &InputError{File: name, Line: line, Msg: err.Error()}
				}
				k := sarifKey{p.op, p.ruleID, p.class, p.ruleIndex, p.cwe}
				if i, ok := index[k]; ok {
					pending[i].count++
					continue
				}
				p.line, p.count = line, 1
				index[k] = len(pending)
				pending = append(pending, p)
			}
			if _, err := dec.Token(); err != nil {
				return jsonError(name, lc, dec, "not SARIF", err)
			}
		default:
			if err := skipValue(dec); err != nil {
				return jsonError(name, lc, dec, "not SARIF", err)
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return jsonError(name, lc, dec, "not SARIF", err)
	}
	return addSARIFRun(name, tool, pending, rep)
}

// sarifResult reads what a result says by itself.
func sarifResult(res *sarif.Result) (sarifPending, error) {
	op, ok := sarifOperation(res)
	if !ok {
		return sarifPending{}, fmt.Errorf("a result without an operation: give a webRequest (method and target) or a location whose URI is the request's")
	}
	p := sarifPending{op: op, ruleID: str(res.RuleID), ruleIndex: res.RuleIndex, cwe: taxaCWE(res.Taxa)}
	if p.ruleID == "" && res.Rule != nil {
		p.ruleID = str(res.Rule.ID)
	}
	if res.Message != nil {
		p.detail = firstLine(str(res.Message.Text))
	}
	if res.Properties != nil {
		p.class, _ = res.Properties.Properties["class"].(string)
	}
	if p.ruleID == "" && p.ruleIndex <= 0 && classOf(p.class) == "" {
		return sarifPending{}, fmt.Errorf("a result without a rule or a class")
	}
	return p, nil
}

// addSARIFRun adds a run's results, now that its rules are known.
func addSARIFRun(name string, tool sarif.Tool, pending []sarifPending, rep *Report) error {
	rules := map[string]*sarif.ReportingDescriptor{}
	var ruleList []*sarif.ReportingDescriptor
	if d := tool.Driver; d != nil {
		if d.Name != nil && *d.Name != "" {
			rep.Tool = *d.Name
			if v := firstOf(d.Version, d.SemanticVersion); v != "" {
				rep.Tool += " " + v
			}
		}
		ruleList = d.Rules
		for _, rule := range ruleList {
			if rule != nil && rule.ID != nil {
				rules[*rule.ID] = rule
			}
		}
	}
	for _, p := range pending {
		var rule *sarif.ReportingDescriptor
		ruleID := p.ruleID
		if ruleID != "" {
			rule = rules[ruleID]
		} else if p.ruleIndex > 0 && p.ruleIndex < len(ruleList) {
			if rule = ruleList[p.ruleIndex]; rule != nil {
				ruleID = str(rule.ID)
			}
		}
		f := Finding{Operation: p.op, Check: ruleID, Detail: p.detail, Line: p.line, Class: classOf(ruleID)}
		if f.Class == "" && rule != nil {
			f.Class = classOf(str(rule.Name))
		}
		if f.Class == "" {
			f.Class = classOf(p.class)
		}
		f.CWE = p.cwe
		if f.CWE == 0 {
			f.CWE = ruleCWE(rule)
		}
		if f.Check == "" {
			f.Check = string(f.Class)
		}
		if f.Check == "" {
			return &InputError{File: name, Line: p.line, Msg: "a result without a rule or a class"}
		}
		rep.add(f, p.count)
	}
	return nil
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func firstOf(ps ...*string) string {
	for _, p := range ps {
		if s := strings.TrimSpace(str(p)); s != "" {
			return s
		}
	}
	return ""
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

// cweOf reads a CWE from a tag or an ID: "CWE-306", "external/cwe/cwe-306",
// "cwe-89"; 0 if it names none.
func cweOf(s string) int {
	if m := cweTag.FindStringSubmatch(strings.TrimSpace(s)); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// ruleCWE is the CWE a rule names in its tags or relationships, 0 if none.
func ruleCWE(rule *sarif.ReportingDescriptor) int {
	if rule == nil {
		return 0
	}
	if rule.Properties != nil {
		for _, tag := range rule.Properties.Tags {
			if n := cweOf(tag); n != 0 {
				return n
			}
		}
	}
	var refs []*sarif.ReportingDescriptorReference
	for _, rel := range rule.Relationships {
		if rel != nil {
			refs = append(refs, rel.Target)
		}
	}
	return taxaCWE(refs)
}

// taxaCWE is the CWE among references to a taxonomy, 0 if none.
func taxaCWE(refs []*sarif.ReportingDescriptorReference) int {
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
