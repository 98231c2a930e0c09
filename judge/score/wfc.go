package score

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
	"github.com/defectshowcase/showcase/catalogue/wfc"
)

// readWFC reads a Web Fuzzing Commons report (report.json, schema 0.x, as
// EvoMaster writes it): every found fault, on the operation of its
// operationId or endpointId ("GET:/users/{id}", with or without a server
// before the path: placed as every format's are), once per fault code.
// A code's class is catalogue.WFCClass's (F100 a server error, F101 an
// undocumented status, a wrong content type or an invalid body as its
// context says, F102 an accepted invalid request, F207 an authentication
// bypass); a code of a weakness keeps its CWE (F209's is CWE-209); any
// other code, one WFC does not define included, is the tool's own finding
// under that code, never dropped. The coverage it says it collected
// (extra) is kept, to be shown beside the instance's. The version of the schema it read is
// kept (Report.FormatVersion); a report of schema 1 or later, or naming
// none, is refused.
//
// Like SARIF it is walked with encoding/json's tokenizer, one found fault
// decoded at a time, and test cases and the rest are skipped
// without being held; a report cut short is closed after its last whole
// fault and read for what it holds, marked truncated.
func readWFC(name string, r io.Reader) (Report, error) {
	rep := Report{Format: "wfc", Tool: "a WFC tool"}
	doc, err := openJSONDoc(name, r, 1, "not a WFC report")
	if err != nil {
		return rep, err
	}
	cl, lc, dec := doc.cl, doc.lc, doc.dec
	fail := func(err error) (Report, error) { return rep, doc.fail(err) }
	refuse := func(line int, format string, args ...any) (Report, error) {
		return rep, doc.refuse(line, format, args...)
	}
	var toolName, toolVersion string
	version, versionLine := "", 1
	totalTests, calls := -1, -1
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return fail(err)
		}
		line := lc.lineAt(dec.InputOffset())
		switch key {
		case "schemaVersion", "toolName", "toolVersion":
			var s string
			if err := dec.Decode(&s); err != nil {
				return fail(err)
			}
			switch key {
			case "schemaVersion":
				version, versionLine = strings.TrimSpace(s), line
			case "toolName":
				toolName = strings.TrimSpace(s)
			default:
				toolVersion = strings.TrimSpace(s)
			}
		case "totalTests":
			if err := dec.Decode(&totalTests); err != nil {
				return fail(err)
			}
		case "faults":
			if err := expectDelim(dec, '{'); err != nil {
				if err == errNotDelim {
					return refuse(line, "not a WFC report: faults is not an object")
				}
				return fail(err)
			}
			for dec.More() {
				key, err := objectKey(dec)
				if err != nil {
					return fail(err)
				}
				if key != "foundFaults" {
					if err := skipValue(dec); err != nil {
						return fail(err)
					}
					continue
				}
				if err := readWFCFaults(name, lc, dec, &rep); err != nil {
					return rep, err
				}
			}
			if _, err := dec.Token(); err != nil {
				return fail(err)
			}
		case "problemDetails":
			n, err := evaluatedCalls(dec)
			if err != nil {
				if err == errNotDelim {
					return refuse(line, "not a WFC report: problemDetails is not an object")
				}
				return fail(err)
			}
			calls = n
		case "extra":
			// The coverage the tool collected: shown beside what the
			// instance measured, never scored. null is none.
			var extra []wfc.Coverage
			if err := dec.Decode(&extra); err != nil {
				return refuse(line, "not a WFC report: extra is not a list of coverage (%v)", err)
			}
			rep.Coverage = append(rep.Coverage, extra...)
		default:
			if err := skipValue(dec); err != nil {
				return fail(err)
			}
		}
	}
	if err := doc.end(); err != nil {
		return rep, err
	}
	switch major, _, _ := strings.Cut(strings.TrimPrefix(version, "v"), "."); {
	case version == "":
		return refuse(1, "a WFC report without its schemaVersion: this reader knows schema 0.x (checked against %s)", catalogue.WFCSchemaVersion)
	case major != "0":
		return refuse(versionLine, "WFC schema version %q: this reader knows 0.x (checked against %s)", version, catalogue.WFCSchemaVersion)
	}
	rep.FormatVersion = version
	if toolName != "" {
		rep.Tool = strings.TrimSpace(toolName + " " + toolVersion)
	}
	// A whole report that ran no test and made no call says itself that
	// the run tested nothing.
	rep.NoTests = !cl.cut && totalTests == 0 && calls <= 0 && len(rep.Findings) == 0
	rep.Truncated = cl.truncation("faults")
	return rep, nil
}

// readWFCFaults reads foundFaults, a fault at a time.
func readWFCFaults(name string, lc *lineCounter, dec *json.Decoder, rep *Report) error {
	start := lc.lineAt(dec.InputOffset())
	if err := expectDelim(dec, '['); err != nil {
		if err == errNotDelim {
			return &InputError{File: name, Line: start, Msg: "not a WFC report: foundFaults is not an array"}
		}
		return jsonError(name, lc, dec, "not a WFC report", err)
	}
	for i := 0; dec.More(); i++ {
		line := lc.lineAt(valueStart(dec))
		var f wfc.FoundFault
		if err := dec.Decode(&f); err != nil {
			return jsonError(name, lc, dec, fmt.Sprintf("not a WFC report: found fault %d", i), err)
		}
		op := wfcOperation(f.Operation())
		if len(f.FaultCategories) == 0 {
			return &InputError{File: name, Line: line, Msg: fmt.Sprintf("found fault %d (%s) has no faultCategories", i, f.Operation())}
		}
		for _, c := range f.FaultCategories {
			context := ""
			if c.Context != nil {
				context = *c.Context
			}
			fault, known := catalogue.WFCFaultOf(c.Code)
			detail := context
			if detail == "" && known {
				detail = fault.Name
			}
			rep.add(Finding{Operation: op, Class: catalogue.WFCClass(c.Code, context), Check: fmt.Sprintf("F%d", c.Code),
				CWE: fault.CWE, Detail: detail, Line: line}, 1)
		}
	}
	_, err := dec.Token()
	if err != nil {
		return jsonError(name, lc, dec, "not a WFC report", err)
	}
	return nil
}

// valueStart is the offset of the next value, past the white space and
// the comma before it, which the decoder holds buffered after More.
func valueStart(dec *json.Decoder) int64 {
	off := dec.InputOffset()
	r, b := dec.Buffered(), []byte{0}
	for {
		if n, _ := r.Read(b); n == 0 || (b[0] != ' ' && b[0] != '\t' && b[0] != '\r' && b[0] != '\n' && b[0] != ',') {
			return off
		}
		off++
	}
}

// wfcOperation is the operation of a WFC operationId: "VERB:/path", the
// path perhaps a whole URL or relative to the server; without a verb
// before a colon, as other formats' texts are read ("GET /path", a path).
// An empty one is on no operation.
func wfcOperation(id string) Operation {
	if method, target, ok := wfc.ParseOperationID(id); ok {
		if op, ok := operationOf(method, target); ok {
			return op
		}
	}
	if op, ok := methodAndPath(id); ok {
		return op
	}
	return Operation{}
}

// evaluatedCalls reads problemDetails for rest.evaluatedHttpCalls, the
// calls the whole run made (-1 when it does not say), holding nothing
// else.
func evaluatedCalls(dec *json.Decoder) (int, error) {
	calls := -1
	if err := expectDelim(dec, '{'); err != nil {
		return calls, err
	}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return calls, err
		}
		if key != "rest" {
			if err := skipValue(dec); err != nil {
				return calls, err
			}
			continue
		}
		tok, err := dec.Token()
		if err != nil {
			return calls, err
		}
		if tok != json.Delim('{') {
			if tok == json.Delim('[') {
				return calls, errNotDelim
			}
			continue // null
		}
		for dec.More() {
			key, err := objectKey(dec)
			if err != nil {
				return calls, err
			}
			if key == "evaluatedHttpCalls" {
				if err := dec.Decode(&calls); err != nil {
					return calls, err
				}
				continue
			}
			if err := skipValue(dec); err != nil {
				return calls, err
			}
		}
		if _, err := dec.Token(); err != nil {
			return calls, err
		}
	}
	_, err := dec.Token()
	return calls, err
}
