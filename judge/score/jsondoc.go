package score

import (
	"encoding/json"
	"fmt"
	"io"
)

// jsonDoc is a JSON report walked token by token (SARIF, WFC): the
// decoder, the line of any offset read, and the closer that ends a
// document cut short after its last whole value.
type jsonDoc struct {
	name string
	what string // what a decoding error says the document is not: "not SARIF"
	cl   *jsonCloser
	lc   *lineCounter
	dec  *json.Decoder
}

// openJSONDoc reads r, whose findings are elements of arrays inside open
// objects (newJSONCloser).
func openJSONDoc(name string, r io.Reader, open int, what string) *jsonDoc {
	d := &jsonDoc{name: name, what: what, cl: newJSONCloser(r, open)}
	d.lc = &lineCounter{r: d.cl}
	d.dec = json.NewDecoder(d.lc)
	return d
}

// fail is a decoding error, at its line.
func (d *jsonDoc) fail(err error) error { return jsonError(d.name, d.lc, d.dec, d.what, err) }

// refuse is a refusal at a line.
func (d *jsonDoc) refuse(line int, format string, args ...any) error {
	return &InputError{File: d.name, Line: line, Msg: fmt.Sprintf(format, args...)}
}

// end reads the document's closing brace and refuses anything after it.
func (d *jsonDoc) end() error {
	if _, err := d.dec.Token(); err != nil {
		return d.fail(err)
	}
	if _, err := d.dec.Token(); err != io.EOF {
		return d.refuse(d.lc.lineAt(d.dec.InputOffset()), "%s: more after the document", d.what)
	}
	return nil
}
