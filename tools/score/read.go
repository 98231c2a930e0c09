package score

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"io"
	"os"
	"strconv"
)

// MaxReportBytes bounds a report, unpacked: the largest real one is a few
// MB.
const MaxReportBytes = 256 << 20

// ReadFile reads the report in the named file (gzip or not).
func ReadFile(name string) (Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return Report{}, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxReportBytes+1))
	if err != nil {
		return Report{}, &InputError{File: name, Msg: err.Error()}
	}
	return Read(name, data)
}

// Read reads a report, recognising its format from its content: Schemathesis
// 4 ndjson, JUnit XML, SARIF 2.1.0, or the plain CSV or JSON of
// method,path,class that any other tool can be turned into. gzip is
// unpacked first.
func Read(name string, data []byte) (Report, error) {
	if len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return Report{}, &InputError{File: name, Msg: "gzip: " + err.Error()}
		}
		unpacked, err := io.ReadAll(io.LimitReader(zr, MaxReportBytes+1))
		if err != nil {
			return Report{}, &InputError{File: name, Msg: "gzip: " + err.Error()}
		}
		data = unpacked
	}
	if len(data) > MaxReportBytes {
		return Report{}, &InputError{File: name, Msg: "larger than 256 MiB"}
	}
	var (
		r   Report
		err error
	)
	trimmed := bytes.TrimLeft(data, " \t\r\n\ufeff")
	switch {
	case len(trimmed) == 0:
		return Report{}, &InputError{File: name, Msg: "empty"}
	case trimmed[0] == '<':
		r, err = readJUnit(name, data)
	case trimmed[0] == '[':
		r, err = readJSONList(name, data)
	case trimmed[0] == '{' && isSchemathesis(trimmed):
		r, err = readSchemathesis(name, data)
	case trimmed[0] == '{':
		r, err = readSARIF(name, data)
	default:
		r, err = readCSV(name, data)
	}
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			err = &InputError{File: name, Msg: err.Error()}
		}
		return Report{}, err
	}
	r.File = name
	if r.Findings == nil {
		r.Findings = []Finding{}
	}
	return r, nil
}

// isSchemathesis: the first line is Schemathesis's Initialize event.
func isSchemathesis(data []byte) bool {
	line, _, _ := bytes.Cut(data, []byte("\n"))
	var first map[string]json.RawMessage
	if json.Unmarshal(line, &first) != nil {
		return false
	}
	_, ok := first["Initialize"]
	return ok && len(first) == 1
}

// lineAt is the line of a byte offset in data, from 1.
func lineAt(data []byte, offset int64) int {
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	if offset < 0 {
		offset = 0
	}
	return bytes.Count(data[:offset], []byte("\n")) + 1
}

// jsonErrorLine is the line a JSON decoding error points at, 0 if none.
func jsonErrorLine(data []byte, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return lineAt(data, se.Offset)
	case errors.As(err, &te):
		return lineAt(data, te.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return lineAt(data, int64(len(data)))
	}
	return 0
}

// valueLines walks a valid JSON document and returns the line on which each
// value at a path accepted by keep begins; descend says which paths to look
// inside. Paths are keys and indices joined by "/".
func valueLines(data []byte, descend, keep func(path []string) bool) map[string]int {
	dec := json.NewDecoder(bytes.NewReader(data))
	lines := map[string]int{}
	var walk func(path []string) error
	walk = func(path []string) error {
		start := skipSeparators(data, dec.InputOffset())
		if keep(path) {
			lines[joinPath(path)] = lineAt(data, start)
		}
		if !descend(path) {
			var skip json.RawMessage
			return dec.Decode(&skip)
		}
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				key, _ := k.(string)
				if err := walk(append(path, key)); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if err := walk(append(path, strconv.Itoa(i))); err != nil {
					return err
				}
			}
			_, err = dec.Token()
		}
		return err
	}
	_ = walk(nil) // the document was decoded already: it is valid
	return lines
}

func skipSeparators(data []byte, off int64) int64 {
	for off < int64(len(data)) {
		switch data[off] {
		case ' ', '\t', '\r', '\n', ',', ':':
			off++
		default:
			return off
		}
	}
	return off
}

func joinPath(path []string) string {
	var b bytes.Buffer
	for i, p := range path {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(p)
	}
	return b.String()
}
