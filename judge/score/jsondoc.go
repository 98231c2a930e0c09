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

// openJSONDoc reads r, a JSON object whose findings are elements of
// arrays inside open objects (newJSONCloser), up to its opening brace.
func openJSONDoc(name string, r io.Reader, open int, what string) (*jsonDoc, error) {
	d := &jsonDoc{name: name, what: what, cl: newJSONCloser(r, open)}
	d.lc = &lineCounter{r: d.cl}
	d.dec = json.NewDecoder(d.lc)
	if err := expectDelim(d.dec, '{'); err != nil {
		return d, d.fail(err)
	}
	return d, nil
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

var errNotDelim = fmt.Errorf("not the expected delimiter")

// expectDelim reads the next token, which must be the delimiter d.
func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return errNotDelim
	}
	return nil
}

// objectKey reads an object's next key.
func objectKey(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, _ := tok.(string)
	return key, nil
}

// skipValue reads past the next value without keeping it.
func skipValue(dec *json.Decoder) error {
	depth := 0
	for {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
		if depth == 0 {
			return nil
		}
	}
}
