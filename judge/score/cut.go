package score

import (
	"bytes"
	"errors"
	"fmt"
	"io"
)

// jsonCloser passes a JSON document through to a decoder and, when the
// document ends unfinished (its writer was stopped, the file cut), ends it
// where its last whole value ended and closes what is open there, so that
// the decoder reads what came before the cut and nothing of the unfinished
// value. It holds back only the bytes since the last whole value, so its
// memory is one value's, not the document's. cut tells, at the end,
// whether it closed the document and at what line.
//
// It knows JSON's lexical structure only (strings and their escapes,
// brackets, commas, colons); whether what it lets through is the right
// JSON is the decoder's to say, and a document that is wrong before its
// end is refused there as before.
type jsonCloser struct {
	r   io.Reader
	buf []byte

	held  []byte // read, not passed on: since the last whole value
	out   []byte // to pass on
	stack []byte // the open containers: '[' or '{'
	// objects is how many of them are objects, not counting the
	// document's own; open, how many may be open where a value is kept.
	objects, open int
	// wantKey: in an object, the next string is a key.
	wantKey, inString, escaped bool
	// Where the last whole value ended, in held (0: at its start), and
	// how many containers were open there.
	keepDepth int
	line      int // lines passed on, for cut
	done      bool
	// cut: the document was unfinished and closed here (line, from 1, of
	// the cut), and at the last whole value.
	cut     bool
	cutLine int
}

// newJSONCloser closes a document whose findings are elements of arrays
// inside open objects (besides the document's own): 0 for a JSON array of
// findings, 1 for SARIF (runs[], each run an object, its results[]).
func newJSONCloser(r io.Reader, open int) *jsonCloser { return &jsonCloser{r: r, open: open} }

func (c *jsonCloser) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.done {
			return 0, io.EOF
		}
		if len(c.buf) < len(p) {
			c.buf = make([]byte, len(p))
		}
		n, err := c.r.Read(c.buf[:len(p)])
		c.scan(c.buf[:n])
		if errors.Is(err, io.EOF) {
			c.finish()
			c.done = true
		} else if err != nil {
			// Pass on what was read, then the error.
			c.out = append(c.out, c.held...)
			c.held = nil
			if len(c.out) == 0 {
				return 0, err
			}
			n := copy(p, c.out)
			c.out = c.out[n:]
			return n, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// scan follows the document through b, holding it back and releasing it
// at each point where a whole value has ended.
func (c *jsonCloser) scan(b []byte) {
	for _, ch := range b {
		c.held = append(c.held, ch)
		if c.inString {
			switch {
			case c.escaped:
				c.escaped = false
			case ch == '\\':
				c.escaped = true
			case ch == '"':
				c.inString = false
				if len(c.stack) > 0 && !(c.top() == '{' && c.wantKey) && c.whole() {
					c.keep() // a string value ended
				}
			}
			continue
		}
		switch ch {
		case '"':
			c.inString = true
		case '[':
			c.stack = append(c.stack, ch)
			if c.whole() {
				c.keep() // an empty array is whole once closed
			}
		case '{':
			c.stack = append(c.stack, ch)
			c.wantKey = true
			if len(c.stack) == 1 {
				c.keep() // the document's own object, empty
			} else {
				c.objects++
			}
		case ']', '}':
			if len(c.stack) > 0 {
				if ch == '}' && len(c.stack) > 1 {
					c.objects--
				}
				c.stack = c.stack[:len(c.stack)-1]
			}
			c.wantKey = false
			// A container ended: a whole value, or one that held the last
			// kept value and is whole with it.
			if c.whole() || len(c.stack) < c.keepDepth {
				c.keep()
			}
		case ',':
			// Before the comma, a whole value; the next is a key in an object.
			if c.whole() {
				c.held = c.held[:len(c.held)-1]
				c.keep()
				c.held = append(c.held, ch)
			}
			c.wantKey = len(c.stack) > 0 && c.top() == '{'
		case ':':
			c.wantKey = false
		}
	}
}

func (c *jsonCloser) top() byte { return c.stack[len(c.stack)-1] }

// whole says whether a value that ends here may be kept when what follows
// is cut: an element of an array, or a member of the document's own object.
// A member of any other object is not: an object cut after some of its
// members (a finding without its class) would be read as another finding.
// Nor is an element of an array inside more than open objects (other than
// the document's own): the objects a format nests its findings in (a
// SARIF run) may be closed early, a finding may not.
func (c *jsonCloser) whole() bool {
	return len(c.stack) <= 1 || (c.top() == '[' && c.objects <= c.open)
}

// keep passes on everything held: it ends with a whole value (or an
// opened container), and depth containers are open after it.
func (c *jsonCloser) keep() {
	c.line += bytes.Count(c.held, []byte("\n"))
	c.out = append(c.out, c.held...)
	c.held = c.held[:0]
	c.keepDepth = len(c.stack)
}

// finish ends the document: whole, it passes on the rest; cut, it drops
// what followed the last whole value and closes the containers open there.
func (c *jsonCloser) finish() {
	if len(c.stack) == 0 && !c.inString {
		c.out = append(c.out, c.held...)
		c.held = nil
		return
	}
	if c.keepDepth == 0 {
		// Nothing whole: pass it on as it is, for the decoder to refuse.
		c.out = append(c.out, c.held...)
		c.held = nil
		return
	}
	c.cut, c.cutLine = true, c.line+bytes.Count(c.held, []byte("\n"))+1
	c.held = nil
	for i := c.keepDepth - 1; i >= 0; i-- {
		if c.stack[i] == '[' {
			c.out = append(c.out, ']')
		} else {
			c.out = append(c.out, '}')
		}
	}
}

// truncation says what a closed document lost, for Report.Truncated.
func (c *jsonCloser) truncation(what string) string {
	if !c.cut {
		return ""
	}
	return fmt.Sprintf("cut short in line %d, unfinished: scored for the %s before the cut", c.cutLine, what)
}
