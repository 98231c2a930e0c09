package score

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// readJUnit reads JUnit XML: every <failure> of every <testcase>, on the
// operation the test case names ("GET /path" or a URL, in its name or
// classname). A failure's class comes from Schemathesis's titles in its
// message ("- Server error"), else from its type or its message's first
// line, when either is a known check or a catalogue class; anything else
// is kept under the tool's own name, belonging to no class. <error> and
// <skipped> are the tool's own trouble, not findings.
//
// It is read with encoding/xml's decoder rather than a JUnit library: those
// (github.com/joshdk/go-junit, the common one) forget where in the file
// each test case is, and a report that cannot be read must be refused at
// its line.
func readJUnit(name string, data []byte) (Report, error) {
	r := Report{Format: "junit", Tool: "JUnit"}
	dec := xml.NewDecoder(bytes.NewReader(data))
	dec.Strict = true
	var (
		inCase           bool
		caseName, caseOf string
		caseLine         int
		roots            int
		depth            int
	)
	for {
		line, _ := dec.InputPos()
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			l, _ := dec.InputPos()
			return r, &InputError{File: name, Line: l, Msg: "not well-formed XML: " + strings.TrimPrefix(err.Error(), "XML syntax error on line "+fmt.Sprint(l)+": ")}
		}
		switch t := tok.(type) {
		case xml.StartElement:
			depth++
			if depth == 1 {
				roots++
				if t.Name.Local != "testsuites" && t.Name.Local != "testsuite" {
					return r, &InputError{File: name, Line: line, Msg: fmt.Sprintf("<%s>: a JUnit report is <testsuites> or <testsuite>", t.Name.Local)}
				}
				if n := attr(t, "name"); n != "" && t.Name.Local == "testsuite" {
					r.Tool = n
				}
			}
			if t.Name.Local == "testsuite" && attr(t, "name") == "schemathesis" {
				r.Tool = "Schemathesis"
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
					return r, &InputError{File: name, Line: line, Msg: "not well-formed XML: " + err.Error()}
				}
				depth--
				op, ok := methodAndPath(caseName)
				if !ok {
					op, ok = methodAndPath(caseOf)
				}
				if !ok {
					return r, &InputError{File: name, Line: caseLine, Msg: fmt.Sprintf("test case %q names no operation (\"GET /path\" or a URL in its name or classname)", caseName)}
				}
				message := f.Message
				if message == "" {
					message = f.Text
				}
				for _, k := range junitKinds(f.Type, message) {
					r.add(Finding{Operation: op, Check: k.check, Class: classOf(k.check), Detail: k.detail, Line: line})
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
