package score

import (
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
)

// readJUnit reads JUnit XML: every <failure> of every <testcase>, on the
// operation the test case names ("GET /path" or a URL, in its name or
// classname). A failure's class comes from Schemathesis's titles in its
// message ("- Server error"), else from its type or its message's first
// line, when either is a known check or a catalogue class; anything else
// is kept under the tool's own name, belonging to no class. A failure
// whose message is APIFuzzer's JSON dump of its test is read from that:
// its request's method and URL, and the status it got (apiFuzzerFailure).
// <error>s are the tool's own trouble, counted but not findings; <skipped>
// is nothing.
//
// It is read with encoding/xml's decoder rather than a JUnit library: those
// (github.com/joshdk/go-junit, the common one) forget where in the file
// each test case is, and a report that cannot be read must be refused at
// its line. A document cut short (its writer stopped) is read for the
// elements it finished, and marked truncated.
func readJUnit(name string, data io.Reader) (Report, error) {
	r := Report{Format: "junit", Tool: "JUnit"}
	dec := xml.NewDecoder(data)
	dec.Strict = true
	var (
		inCase           bool
		caseName, caseOf string
		caseLine         int
		roots            int
		depth            int
	)
	// cut: the document ends unfinished, its writer stopped in it: what
	// came before is read, the report marked truncated.
	cut := func(err error) bool {
		var se *xml.SyntaxError
		if roots == 0 || !errors.As(err, &se) || !strings.HasPrefix(se.Msg, "unexpected EOF") {
			return false
		}
		l, _ := dec.InputPos()
		r.Truncated = fmt.Sprintf("cut short in line %d, unfinished: scored for the whole elements before the cut", l)
		return true
	}
read:
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if cut(err) {
			break
		}
		if err != nil {
			l, _ := dec.InputPos()
			if _, ok := err.(*xml.SyntaxError); !ok {
				return r, readError(name, l, err)
			}
			return r, &InputError{File: name, Line: l, Msg: "not well-formed XML: " + strings.TrimPrefix(err.Error(), "XML syntax error on line "+fmt.Sprint(l)+": ")}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				roots++
				if t.Name.Local != "testsuites" && t.Name.Local != "testsuite" {
					what := "XML"
					if strings.EqualFold(t.Name.Local, "html") {
						what = "an HTML page"
					}
					return r, &InputError{File: name, Line: line, Msg: fmt.Sprintf("%s, not JUnit: its root is <%s>, and a JUnit report's is <testsuites> or <testsuite>", what, t.Name.Local)}
				}
			}
			if t.Name.Local == "testsuite" && r.Tool == "JUnit" {
				r.Tool = junitTool(attr(t, "name"))
			}
			switch t.Name.Local {
			case "testcase":
				inCase, caseName, caseOf, caseLine = true, attr(t, "name"), attr(t, "classname"), line
			case "failure":
				if !inCase {
					return r, &InputError{File: name, Line: line, Msg: "<failure> outside a <testcase>"}
				}
				var f struct {
					Message string `xml:"message,attr"`
					Type    string `xml:"type,attr"`
					Text    string `xml:",chardata"`
				}
				if err := dec.DecodeElement(&f, &t); err != nil {
					if cut(err) {
						break read
					}
					return r, &InputError{File: name, Line: line, Msg: "not well-formed XML: " + err.Error()}
				}
				depth--
				message := f.Message
				if message == "" {
					message = f.Text
				}
				if af, ok := apiFuzzerFailure(message); ok {
					if v := af.version(); v != "" && r.Tool == "APIFuzzer" {
						r.Tool += " " + v
					}

					if op, ok := operationOf(af.Method, af.URL); ok {
						r.add(Finding{Operation: op, Check: af.check(), Class: af.class(), Detail: af.detail(), Line: line}, 1)
						break
					}
				}
				op, ok := methodAndPath(caseName)
				if !ok {
					op, ok = methodAndPath(caseOf)
				}
				if !ok {
					return r, &InputError{File: name, Line: caseLine, Msg: fmt.Sprintf("test case %q names no operation (\"GET /path\" or a URL in its name or classname)", caseName)}
				}
				for _, k := range junitKinds(f.Type, message) {
					r.add(Finding{Operation: op, Check: k.check, Class: classOf(k.check), Detail: k.detail, Line: line}, 1)
				}
			case "error":
				var e struct {
					Message string `xml:"message,attr"`
				}
				if err := dec.DecodeElement(&e, &t); err != nil {
					if cut(err) {
						break read
					}
					return r, &InputError{File: name, Line: line, Msg: "not well-formed XML: " + err.Error()}
				}
				depth--
				r.ToolErrors++
				if af, ok := apiFuzzerFailure(e.Message); ok && r.Tool == "APIFuzzer" {
					if v := af.version(); v != "" {
						r.Tool += " " + v
					}
				}
			}
		case xml.EndElement:
			depth--
			if t.Name.Local == "testcase" {
				inCase = false
			}
		}
	}
	if roots == 0 {
		return r, &InputError{File: name, Line: 1, Msg: "no <testsuites> or <testsuite>: not a JUnit report"}
	}
	return r, nil
}

// junitTool is the tool a <testsuite>'s name says wrote the report: the
// known ones by their own names, any other by the suite's.
func junitTool(suite string) string {
	switch strings.ToLower(suite) {
	case "":
		return "JUnit"
	case "schemathesis":
		return "Schemathesis"
	case "api fuzzer", "apifuzzer":
		return "APIFuzzer"
	}
	return suite
}

// apiFuzzerTest is the part of APIFuzzer's JSON dump of a test, the message
// of its <failure>, that the scorer reads.
type apiFuzzerTest struct {
	URL     string          `json:"request_url"`
	Method  string          `json:"request_method"`
	Status  *int            `json:"parsed_status_code"`
	Reason  string          `json:"reason"`
	Headers string          `json:"request_headers"` // a JSON object, as text
	Body    json.RawMessage `json:"request_body"`
}

// apiFuzzerFailure reads a failure message that is APIFuzzer's dump.
func apiFuzzerFailure(message string) (apiFuzzerTest, bool) {
	var t apiFuzzerTest
	m := strings.TrimSpace(message)
	if !strings.HasPrefix(m, "{") || json.Unmarshal([]byte(m), &t) != nil || t.URL == "" {
		return t, false
	}
	return t, true
}

// check is what APIFuzzer's test failed on: the status it got (it fails an
// answer that is neither 2xx nor 4xx).
func (t apiFuzzerTest) check() string {
	if t.Status != nil {
		return fmt.Sprintf("status %d", *t.Status)
	}
	if t.Reason != "" {
		return t.Reason
	}
	return "failure"
}

func (t apiFuzzerTest) class() catalogue.Class {
	if t.Status == nil {
		return ""
	}
	return statusClass(*t.Status)
}

func (t apiFuzzerTest) detail() string {
	d := t.check()
	if len(t.Body) > 0 && string(t.Body) != "{}" && string(t.Body) != "null" {
		d += " to " + string(t.Body)
	}
	return d
}

// version is APIFuzzer's version, from the User-Agent it sent
// ("APIFuzzer 0.9.13").
func (t apiFuzzerTest) version() string {
	var h map[string]string
	if json.Unmarshal([]byte(t.Headers), &h) != nil {
		return ""
	}
	name, version, ok := strings.Cut(h["User-Agent"], " ")
	if !ok || !strings.EqualFold(name, "APIFuzzer") {
		return ""
	}
	return version
}

func attr(t xml.StartElement, name string) string {
	for _, a := range t.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

type junitKind struct{ check, detail string }

// junitKinds are the kinds of failure one <failure> reports. Schemathesis
// lists them as "- Title" lines, each followed by its details; another tool
// gives one, as the type or the message.
func junitKinds(typ, message string) []junitKind {
	var kinds []junitKind
	lines := strings.Split(message, "\n")
	for i, l := range lines {
		if title, ok := strings.CutPrefix(l, "- "); ok && classOf(title) != "" {
			detail := ""
			for _, d := range lines[i+1:] {
				if d = strings.TrimSpace(d); d != "" {
					detail = d
					break
				}
			}
			kinds = append(kinds, junitKind{check: strings.TrimSpace(title), detail: title + ": " + detail})
		}
	}
	if len(kinds) > 0 {
		return kinds
	}
	first := firstLine(message)
	switch {
	case classOf(typ) != "":
		return []junitKind{{check: typ, detail: first}}
	case classOf(first) != "":
		return []junitKind{{check: first, detail: first}}
	case typ != "" && typ != "failure" && typ != "AssertionError":
		return []junitKind{{check: typ, detail: first}}
	case first != "":
		return []junitKind{{check: first, detail: first}}
	}
	return []junitKind{{check: "failure", detail: ""}}
}
