package score

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// plainFinding is one row of the plain format, CSV or JSON.
type plainFinding struct {
	Method string `json:"method"`
	Path   string `json:"path"`
	Class  string `json:"class"`
	Detail string `json:"detail"`
	Time   string `json:"time"` // optional: RFC 3339, when the tool saw it
}

// plain turns a row into a finding. Its class must be one of the
// catalogue's: the plain format is what a report is converted to, and a
// class the scorer cannot read would score wrong.
func plain(name string, line int, p plainFinding) (Finding, error) {
	op, ok := operationOf(p.Method, p.Path)
	if !ok {
		return Finding{}, &InputError{File: name, Line: line, Msg: fmt.Sprintf("%q %q is not a method and a path", p.Method, p.Path)}
	}
	class := catalogue.Class(strings.TrimSpace(p.Class))
	if !knownClass(class) {
		return Finding{}, &InputError{File: name, Line: line, Msg: fmt.Sprintf("class %q: want one of %s", p.Class, classList())}
	}
	f := Finding{Operation: op, Class: class, Check: string(class), Detail: p.Detail, Line: line}
	if t := strings.TrimSpace(p.Time); t != "" {
		at, err := time.Parse(time.RFC3339Nano, t)
		if err != nil {
			return Finding{}, &InputError{File: name, Line: line, Msg: fmt.Sprintf("time %q: want RFC 3339 (2026-11-25T10:00:00Z)", p.Time)}
		}
		at = at.UTC()
		f.At = &at
	}
	return f, nil
}

func knownClass(c catalogue.Class) bool {
	for _, k := range Classes {
		if k == c {
			return true
		}
	}
	return false
}

func classList() string {
	var s []string
	for _, c := range Classes {
		s = append(s, string(c))
	}
	return strings.Join(s, ", ")
}

// readCSV reads a CSV with a header naming at least the columns method, path
// and class (detail and time are optional), in any order.
func readCSV(name string, data io.Reader) (Report, error) {
	r := Report{Format: "csv", Tool: "CSV"}
	end := &endTracker{r: data}
	cr := csv.NewReader(end)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err != nil {
		return r, csvError(name, err)
	}
	col := map[string]int{}
	for i, h := range header {
		col[strings.ToLower(strings.TrimSpace(strings.TrimPrefix(h, "\ufeff")))] = i
	}
	for _, need := range []string{"method", "path", "class"} {
		if _, ok := col[need]; !ok {
			return r, &InputError{File: name, Line: 1, Msg: "not a report this scorer reads: " + readable + " (a CSV needs a header with method, path and class)"}
		}
	}
	get := func(rec []string, k string) string {
		if i, ok := col[k]; ok && i < len(rec) {
			return rec[i]
		}
		return ""
	}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		var pe *csv.ParseError
		if errors.As(err, &pe) && end.unendedLast(pe.StartLine) {
			r.Truncated = fmt.Sprintf("cut short in line %d, its last and unfinished: scored for the rows before it", pe.StartLine)
			break
		}
		if err != nil {
			return r, csvError(name, err)
		}
		line, _ := cr.FieldPos(0)
		f, err := plain(name, line, plainFinding{get(rec, "method"), get(rec, "path"), get(rec, "class"), get(rec, "detail"), get(rec, "time")})
		if err != nil {
			if end.unendedLast(line) && line > 1 {
				r.Truncated = fmt.Sprintf("cut short in line %d, its last and unfinished: scored for the rows before it", line)
				break
			}
			return r, err
		}
		r.add(f, 1)
	}
	return r, nil
}

// endTracker sees a report go by and knows, once it has ended, whether its
// last line had a line end: a row that cannot be read in an unended last
// line is where a writer was stopped, not a fault of the format.
type endTracker struct {
	r        io.Reader
	newlines int
	last     byte
	eof      bool
}

func (e *endTracker) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if n > 0 {
		e.newlines += bytes.Count(p[:n], []byte("\n"))
		e.last = p[n-1]
	}
	if err == io.EOF {
		e.eof = true
	}
	return n, err
}

// unendedLast says whether line is the report's last and has no line end.
func (e *endTracker) unendedLast(line int) bool {
	return e.eof && e.last != '\n' && line == e.newlines+1
}

func csvError(name string, err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &InputError{File: name, Line: pe.Line, Msg: "CSV: " + pe.Err.Error()}
	}
	return readError(name, 0, err)
}

// addPlainJSON adds one element of the plain JSON list.
func addPlainJSON(name string, line int, raw []byte, rep *Report) error {
	var row plainFinding
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&row); err != nil {
		return &InputError{File: name, Line: line, Msg: "JSON: " + err.Error()}
	}
	f, err := plain(name, line, row)
	if err != nil {
		return err
	}
	rep.add(f, 1)
	return nil
}
