package score

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// nucleiResult is the part of a nuclei result (its -je JSON array and -jle
// JSON Lines exports, one object per finding) that the scorer reads.
type nucleiResult struct {
	TemplateID  string `json:"template-id"`
	MatcherName string `json:"matcher-name"`
	Info        struct {
		Name           string   `json:"name"`
		Severity       string   `json:"severity"`
		Tags           []string `json:"tags"`
		Classification *struct {
			CWE []string `json:"cwe-id"`
		} `json:"classification"`
	} `json:"info"`
	Type      string `json:"type"`
	MatchedAt string `json:"matched-at"`
	URL       string `json:"url"`
	Path      string `json:"path"`
	Request   string `json:"request"`
	Curl      string `json:"curl-command"`
	Timestamp string `json:"timestamp"` // RFC 3339
}

// nucleiTags are the nuclei template tags that name a class of the
// catalogue; any other template is its own class.
var nucleiTags = map[string]catalogue.Class{
	"unauth":      catalogue.AuthBypass,
	"auth-bypass": catalogue.AuthBypass,
}

// finding turns a nuclei result into a finding: the operation from the
// request it sent (the method of its raw request's first line, else of its
// curl command) and the URL it matched at; the check is the template
// (with its matcher, as nuclei names them "template:matcher").
func (n nucleiResult) finding() (Finding, error) {
	if n.TemplateID == "" {
		return Finding{}, fmt.Errorf("a nuclei result without a template-id")
	}
	f := Finding{Check: n.TemplateID, Detail: n.Info.Name}
	if at, err := time.Parse(time.RFC3339Nano, n.Timestamp); err == nil {
		at = at.UTC()
		f.At = &at
	}
	if n.MatcherName != "" {
		f.Check += ":" + n.MatcherName
	}
	if n.Info.Severity != "" {
		f.Detail += " (" + n.Info.Severity + ")"
	}
	f.Class = classOf(n.TemplateID)
	for _, tag := range n.Info.Tags {
		if c, ok := nucleiTags[strings.ToLower(tag)]; ok && f.Class == "" {
			f.Class = c
		}
	}
	if n.Info.Classification != nil {
		for _, c := range n.Info.Classification.CWE {
			if f.CWE = cweOf(c); f.CWE != 0 {
				break
			}
		}
	}
	method := ""
	if line, _, _ := strings.Cut(n.Request, "\n"); isMethod(firstField(line)) {
		method = firstField(line)
	} else if _, rest, ok := strings.Cut(n.Curl, "-X "); ok {
		method = strings.Trim(firstField(rest), `'"`)
	}
	for _, target := range []string{n.MatchedAt, n.URL, n.Path} {
		if isURL(target) || strings.HasPrefix(target, "/") {
			f.Operation, _ = operationOf(method, target)
			return f, nil
		}
	}
	return f, nil // a finding on the host (dns, ssl, tcp): on no operation
}

// readJSONArray reads a report that is a JSON array: nuclei's -je export
// when its elements are nuclei results, else the plain list of
// {"method", "path", "class", "detail"}. An empty array is a report of no
// findings. Each element is decoded as it comes. An array cut short is
// read for its whole elements and marked truncated.
func readJSONArray(name string, r io.Reader) (Report, error) {
	rep := Report{Format: "json", Tool: "JSON"}
	cl := newJSONCloser(r, 0)
	lc := &lineCounter{r: cl}
	dec := json.NewDecoder(lc)
	if _, err := dec.Token(); err != nil {
		return rep, jsonError(name, lc, dec, "JSON", err)
	}
	for i := 0; dec.More(); i++ {
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return rep, jsonError(name, lc, dec, "JSON", err)
		}
		line := lc.lineAt(dec.InputOffset() - int64(len(raw)))
		if i == 0 && isNucleiResult(raw) {
			rep.Format, rep.Tool = "nuclei-json", "nuclei"
		}
		var err error
		if rep.Format == "nuclei-json" {
			err = addNuclei(name, line, raw, &rep)
		} else {
			err = addPlainJSON(name, line, raw, &rep)
		}
		if err != nil {
			return rep, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return rep, jsonError(name, lc, dec, "JSON", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return rep, &InputError{File: name, Line: lc.lineAt(dec.InputOffset()), Msg: "JSON: more after the array"}
	}
	rep.Truncated = cl.truncation("elements")
	return rep, nil
}

func isNucleiResult(raw []byte) bool {
	var probe struct {
		TemplateID *string `json:"template-id"`
	}
	return json.Unmarshal(raw, &probe) == nil && probe.TemplateID != nil
}

func addNuclei(name string, line int, raw []byte, rep *Report) error {
	var n nucleiResult
	if err := json.Unmarshal(raw, &n); err != nil {
		return &InputError{File: name, Line: line, Msg: "not a nuclei result: " + err.Error()}
	}
	f, err := n.finding()
	if err != nil {
		return &InputError{File: name, Line: line, Msg: err.Error()}
	}
	f.Line = line
	rep.add(f, 1)
	return nil
}

// readNucleiLines reads nuclei's -jle export: a result per line.
func readNucleiLines(name string, br *bufio.Reader) (Report, error) {
	rep := Report{Format: "nuclei-jsonl", Tool: "nuclei"}
	lr := &lineReader{br: br}
	for {
		text, err := lr.next()
		if err == io.EOF {
			return rep, nil
		}
		if err != nil {
			return rep, readError(name, lr.line+1, err)
		}
		if len(bytes.TrimSpace(text)) == 0 {
			continue
		}
		if !isNucleiResult(text) {
			if lr.unended && !json.Valid(text) && lr.line > 1 {
				rep.Truncated = fmt.Sprintf("cut short in line %d, its last and unfinished: scored for the results before it", lr.line)
				return rep, nil
			}
			return rep, &InputError{File: name, Line: lr.line, Msg: "not a nuclei result: " + jsonLineProblem(text)}
		}
		if err := addNuclei(name, lr.line, text, &rep); err != nil {
			return rep, err
		}
	}
}

// jsonLineProblem says what is wrong with a line that should be a JSON
// object.
func jsonLineProblem(text []byte) string {
	if p := jsonProblem(text); p != "valid" {
		return p
	}
	return "no template-id"
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}
