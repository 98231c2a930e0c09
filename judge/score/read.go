package score

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxReportBytes bounds a report, unpacked: the largest real one is a few
// MB, and reading is linear, so this only stops a gzip bomb.
const MaxReportBytes = 1 << 30

// sniffBytes is how much of a report is looked at to recognise it.
const sniffBytes = 64 << 10

// Options are what the caller knows of a report that the report may not
// say.
type Options struct {
	// Tool names the tool (and its version) instead of what the report
	// says. With it an empty file is a report of no findings: nuclei's
	// JSONL export is empty when it found nothing.
	Tool string
}

// ReadFile reads the report in the named file (gzip or not).
func ReadFile(name string, opt Options) (Report, error) {
	f, err := os.Open(name)
	if err != nil {
		return Report{}, &InputError{File: name, Msg: strings.TrimPrefix(err.Error(), "open "+name+": ")}
	}
	defer f.Close()
	return Read(name, f, opt)
}

// Read reads a report, recognising its format from its content: the
// Schemathesis 4 ndjson event stream, JUnit XML (APIFuzzer's too), SARIF
// 2.1.0, nuclei's JSON and JSON Lines exports, or the plain CSV or JSON
// list of method,path,class that any other tool can be turned into. gzip
// is unpacked first. It reads as it goes: time grows with the report, and
// memory with what the report holds that is distinct, not with its size.
func Read(name string, r io.Reader, opt Options) (Report, error) {
	rep, err := read(name, r, opt)
	if err != nil {
		var ie *InputError
		if !errors.As(err, &ie) {
			err = &InputError{File: name, Msg: err.Error()}
		}
		return Report{}, err
	}
	rep.File = name
	if opt.Tool != "" {
		rep.Tool = opt.Tool
	}
	if rep.Findings == nil {
		rep.Findings = []Finding{}
	}
	rep.index = nil
	return rep, nil
}

func read(name string, r io.Reader, opt Options) (Report, error) {
	br := bufio.NewReaderSize(r, sniffBytes)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return Report{}, &InputError{File: name, Msg: "gzip: " + err.Error()}
		}
		br = bufio.NewReaderSize(&gzipReader{zr}, sniffBytes)
	}
	br = bufio.NewReaderSize(&limitReader{r: br, left: MaxReportBytes}, sniffBytes)
	if bom, _ := br.Peek(3); bytes.Equal(bom, []byte("\ufeff")) {
		_, _ = br.Discard(3)
	}
	head, err := br.Peek(sniffBytes)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return Report{}, readError(name, 1, err)
	}
	trimmed := bytes.TrimLeft(head, " \t\r\n")
	if len(trimmed) == 0 {
		if len(head) == 0 && opt.Tool != "" {
			return Report{Format: "empty"}, nil
		}
		if len(head) == sniffBytes {
			return Report{}, &InputError{File: name, Line: 1, Msg: "nothing but white space in its first 64 KiB: not a report"}
		}
		return Report{}, &InputError{File: name, Msg: "empty: a tool that writes an empty file when it finds nothing (nuclei's -jle) must be named with -tool"}
	}
	if nucleiText(trimmed) {
		return Report{}, &InputError{File: name, Line: 1, Msg: "nuclei's text output (-o): give its JSON (-je), JSON Lines (-jle) or SARIF (-se) export instead"}
	}
	switch trimmed[0] {
	case '<':
		return readJUnit(name, br)
	case '[':
		return readJSONArray(name, br)
	case '{':
		switch kind := sniffObject(trimmed); kind.format {
		case "schemathesis":
			return readSchemathesis(name, br)
		case "nuclei-jsonl":
			return readNucleiLines(name, br)
		case "sarif":
			return readSARIF(name, br)
		case "wfc":
			return readWFC(name, br)
		default:
			return Report{}, &InputError{File: name, Line: 1, Msg: kind.diagnosis}
		}
	}
	if looksBinary(trimmed) {
		return Report{}, &InputError{File: name, Line: 1, Msg: "binary data, not a report this scorer reads: " + readable}
	}
	if what := textKind(trimmed); what != "" {
		return Report{}, &InputError{File: name, Line: 1, Msg: what + ", not a report this scorer reads: " + readable}
	}
	return readCSV(name, br)
}

// textKind names a kind of text that is no report: Markdown (nuclei's -me
// index), a tool's log.
func textKind(head []byte) string {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	l := strings.TrimSpace(string(line))
	switch {
	case strings.HasPrefix(l, "|") || strings.HasPrefix(l, "# "):
		return "Markdown"
	case bytes.Contains(head, []byte("[FTL]")) || bytes.Contains(head, []byte("[ERR]")) || bytes.Contains(head, []byte("[INF]")):
		return "a tool's log"
	}
	return ""
}

// readable lists what the scorer reads, for a refusal.
const readable = "Schemathesis 4 ndjson, JUnit XML, SARIF 2.1.0, a WFC report (schema 0.x), nuclei's JSON or JSON Lines, or CSV/JSON of method,path,class"

// objectKind is what a report that begins with a JSON object is.
type objectKind struct {
	format    string // schemathesis, nuclei-jsonl, sarif, wfc, or "" when it is none
	diagnosis string // what it looks like, when it is none
}

// sniffObject recognises a report that begins with a JSON object from the
// keys of that object, as far as the first 64 KiB show them: Schemathesis's
// first event is {"Initialize": …} alone on its line, a nuclei result has a
// "template-id", a SARIF log has "runs" (or a SARIF "$schema" or a
// "version" of 2.1.0), a WFC report two of "schemaVersion", "toolName"
// and "faults". A first object that ends on its line and is followed
// by another is JSON Lines of some other tool.
func sniffObject(head []byte) objectKind {
	dec := json.NewDecoder(bytes.NewReader(head))
	var keys []string
	ended, sarifVersion := false, false
	if _, err := dec.Token(); err == nil {
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				break
			}
			key, _ := tok.(string)
			keys = append(keys, key)
			var v json.RawMessage
			if dec.Decode(&v) != nil {
				break
			}
			if (key == "$schema" && bytes.Contains(bytes.ToLower(v), []byte("sarif"))) || (key == "version" && string(v) == `"2.1.0"`) {
				sarifVersion = true
			}
		}
		if tok, err := dec.Token(); err == nil && tok == json.Delim('}') {
			ended = true
		}
	}
	has := func(k string) bool { return slices.Contains(keys, k) }
	rest := bytes.TrimLeft(head[min(int(dec.InputOffset()), len(head)):], " \t\r")
	lines := ended && (len(rest) == 0 || rest[0] == '\n')
	line1, _, _ := bytes.Cut(head, []byte("\n"))
	switch {
	case has("Initialize") && len(keys) == 1 && lines:
		return objectKind{format: "schemathesis"}
	case has("template-id") && lines:
		return objectKind{format: "nuclei-jsonl"}
	case has("runs") || sarifVersion:
		return objectKind{format: "sarif"}
	case has("schemaVersion") && (has("toolName") || has("faults")), has("faults") && has("toolName"):
		return objectKind{format: "wfc"}
	case !ended:
		if len(keys) == 0 && !json.Valid(line1) && len(head) < sniffBytes {
			return objectKind{diagnosis: "not JSON: " + jsonProblem(head)}
		}
		// Its keys run past what was looked at: let the SARIF reader say
		// what it lacks.
		return objectKind{format: "sarif"}
	case has("setting") && has("defects") && has("version"):
		return objectKind{diagnosis: "the showcase's ground truth (/defects), not a tool's report: give it with -exposure"}
	case lines && len(bytes.TrimSpace(rest)) > 0:
		return objectKind{diagnosis: fmt.Sprintf("JSON Lines, but not of a tool this scorer reads (its first object has %s); it reads %s", keyList(keys), readable)}
	}
	return objectKind{diagnosis: fmt.Sprintf("a JSON object that is not SARIF (no \"runs\"; it has %s); the scorer reads %s", keyList(keys), readable)}
}

func keyList(keys []string) string {
	if len(keys) == 0 {
		return "no keys"
	}
	if len(keys) > 6 {
		keys = append(keys[:6:6], "…")
	}
	return "the keys " + strings.Join(keys, ", ")
}

// jsonProblem is what encoding/json says of a document.
func jsonProblem(data []byte) string {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return err.Error()
	}
	return "valid"
}

func looksBinary(head []byte) bool {
	check := head[:min(len(head), 512)]
	if bytes.IndexByte(check, 0) >= 0 {
		return true
	}
	for i := 0; i < 3 && !utf8.Valid(check); i++ { // a rune cut by the window is not binary
		check = check[:len(check)-1]
	}
	return !utf8.Valid(check)
}

// nucleiText: nuclei's -o output, "[template-id] [http] [severity] URL".
func nucleiText(head []byte) bool {
	line, _, _ := bytes.Cut(head, []byte("\n"))
	f := strings.Fields(string(line))
	return len(f) >= 3 && strings.HasPrefix(f[0], "[") && strings.HasSuffix(f[0], "]") && strings.HasPrefix(f[1], "[") && isURL(f[len(f)-1])
}

// gzipReader marks what goes wrong in the gzip stream as gzip's.
type gzipReader struct{ r io.Reader }

type gzipError struct{ err error }

func (e gzipError) Error() string { return "gzip: " + e.err.Error() }
func (e gzipError) Unwrap() error { return e.err }

func (g *gzipReader) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	if err != nil && err != io.EOF {
		err = gzipError{err}
	}
	return n, err
}

var errTooLarge = fmt.Errorf("larger than %d MiB unpacked", MaxReportBytes>>20)

// limitReader fails, rather than ending quietly, past its limit.
type limitReader struct {
	r    io.Reader
	left int64
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.left <= 0 {
		return 0, errTooLarge
	}
	if int64(len(p)) > l.left {
		p = p[:l.left+1] // one more byte tells a file of exactly the limit from a larger one
	}
	n, err := l.r.Read(p)
	if int64(n) > l.left {
		return int(l.left), errTooLarge
	}
	l.left -= int64(n)
	return n, err
}

// readError is a failure to read the report's bytes (its gzip, its size)
// at a line, or a cut where the format needed more.
func readError(name string, line int, err error) error {
	var ge gzipError
	switch {
	case errors.As(err, &ge):
		return &InputError{File: name, Line: line, Msg: ge.Error()}
	case errors.Is(err, errTooLarge):
		return &InputError{File: name, Line: line, Msg: errTooLarge.Error()}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &InputError{File: name, Line: line, Msg: "cut short"}
	}
	return &InputError{File: name, Line: line, Msg: err.Error()}
}

// lineCounter sits between a report and its decoder and knows the line of
// any offset read so far, asked for in increasing order: it keeps only the
// newlines the decoder has read ahead, so its memory does not grow with
// the report, nor its time with the number of questions.
type lineCounter struct {
	r        io.Reader
	read     int64   // bytes read so far
	newlines []int64 // offsets of the newlines read and not yet passed
	passed   int     // newlines before newlines[0]
}

func (c *lineCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	for off := 0; off < n; {
		i := bytes.IndexByte(p[off:n], '\n')
		if i < 0 {
			break
		}
		c.newlines = append(c.newlines, c.read+int64(off+i))
		off += i + 1
	}
	c.read += int64(n)
	return n, err
}

// lineAt is the line, from 1, of the byte at offset.
func (c *lineCounter) lineAt(offset int64) int {
	i := 0
	for i < len(c.newlines) && c.newlines[i] < offset {
		i++
	}
	c.passed += i
	c.newlines = c.newlines[i:]
	return c.passed + 1
}

// jsonError is a JSON decoding error, at its line, as a refusal.
func jsonError(name string, lc *lineCounter, dec *json.Decoder, what string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var ge gzipError
	switch {
	case errors.As(err, &se):
		return &InputError{File: name, Line: lc.lineAt(se.Offset), Msg: what + ": " + err.Error()}
	case errors.As(err, &te):
		return &InputError{File: name, Line: lc.lineAt(te.Offset), Msg: what + ": " + err.Error()}
	case errors.As(err, &ge):
	case err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF):
		return &InputError{File: name, Line: lc.lineAt(lc.read), Msg: what + ": cut short"}
	}
	return readError(name, lc.lineAt(dec.InputOffset()), err)
}

// documentError is a JSON decoding error of a whole document held in
// memory (a ground truth file), at its line.
func documentError(name string, data []byte, what string, err error) error {
	lc := &lineCounter{r: bytes.NewReader(data)}
	_, _ = io.Copy(io.Discard, lc)
	dec := json.NewDecoder(bytes.NewReader(data))
	return jsonError(name, lc, dec, what, err)
}

// lineReader reads a report line by line, numbering the lines; a line may
// be as long as the report.
type lineReader struct {
	br   *bufio.Reader
	line int
	buf  []byte
	// unended: the line next returned last is the file's last and has no
	// line end: a writer stopped in it may have left it unfinished.
	unended bool
}

// next returns the next line without its end, or io.EOF.
func (l *lineReader) next() ([]byte, error) {
	l.buf = l.buf[:0]
	for {
		chunk, err := l.br.ReadSlice('\n')
		l.buf = append(l.buf, chunk...)
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(l.buf) == 0:
			return nil, io.EOF
		case err != nil && err != io.EOF:
			return nil, err
		}
		l.line++
		l.unended = err == io.EOF
		return bytes.TrimRight(l.buf, "\r\n"), nil
	}
}
