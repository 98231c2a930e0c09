// Package wfctest checks a document against what WFC's published report
// schema (v0.6.0, draft 2020-12) requires: every required key, every
// type, range and uniqueness the schema states. It is written from the
// schema, not copied from it, for the tests of what the showcase writes
// and of the reports it is tested with.
package wfctest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/defectshowcase/showcase/catalogue"
)

// Check lists where data breaks the published schema; none when it is
// valid.
func Check(data []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return []string{"not JSON: " + err.Error()}
	}
	c := &checker{}
	c.report(doc)
	return c.problems
}

type checker struct{ problems []string }

func (c *checker) fail(at, format string, args ...any) {
	c.problems = append(c.problems, at+": "+fmt.Sprintf(format, args...))
}

// object checks v is an object with the required keys, and returns it.
func (c *checker) object(at string, v any, required ...string) map[string]any {
	o, ok := v.(map[string]any)
	if !ok {
		c.fail(at, "not an object")
		return nil
	}
	for _, k := range required {
		if _, ok := o[k]; !ok {
			c.fail(at, "lacks the required %q", k)
		}
	}
	return o
}

// field checks an optional field, when present, with check.
func field(o map[string]any, key string, check func(v any)) {
	if v, ok := o[key]; ok {
		check(v)
	}
}

func (c *checker) str(at string, v any) {
	if _, ok := v.(string); !ok {
		c.fail(at, "not a string")
	}
}

// integer checks v is an integer of at least min; nullable admits null.
func (c *checker) integer(at string, v any, min, max float64, nullable bool) (int, bool) {
	if v == nil && nullable {
		return 0, false
	}
	n, ok := v.(json.Number)
	f, err := n.Float64()
	if !ok || err != nil || f != math.Trunc(f) {
		c.fail(at, "not an integer: %v", v)
		return 0, false
	}
	if f < min || f > max {
		c.fail(at, "%v is outside %v..%v", f, min, max)
	}
	return int(f), true
}

// array checks v is an array (or null, when nullable) whose items are
// unique when asked, and checks each with item.
func (c *checker) array(at string, v any, nullable, unique bool, item func(at string, v any)) {
	if v == nil && nullable {
		return
	}
	a, ok := v.([]any)
	if !ok {
		c.fail(at, "not an array")
		return
	}
	seen := map[string]bool{}
	for i, x := range a {
		itemAt := fmt.Sprintf("%s[%d]", at, i)
		if unique {
			k, _ := json.Marshal(x)
			if seen[string(k)] {
				c.fail(itemAt, "repeats an earlier item: the items must be unique")
			}
			seen[string(k)] = true
		}
		item(itemAt, x)
	}
}

const noMax = math.MaxFloat64

func (c *checker) report(doc any) {
	o := c.object("report", doc, "schemaVersion", "toolName", "toolVersion", "creationTime", "faults",
		"problemDetails", "totalTests", "testFilePaths", "testCases", "executionTimeInSeconds")
	if o == nil {
		return
	}
	field(o, "schemaVersion", func(v any) { c.str("schemaVersion", v) })
	field(o, "toolName", func(v any) { c.str("toolName", v) })
	field(o, "toolVersion", func(v any) { c.str("toolVersion", v) })
	field(o, "creationTime", func(v any) {
		s, ok := v.(string)
		if _, err := time.Parse(time.RFC3339, s); !ok || err != nil {
			c.fail("creationTime", "not a date-time (RFC 3339): %v", v)
		}
	})
	field(o, "faults", func(v any) {
		f := c.object("faults", v, "totalNumber", "foundFaults")
		if f == nil {
			return
		}
		field(f, "totalNumber", func(v any) { c.integer("faults.totalNumber", v, 0, noMax, false) })
		field(f, "foundFaults", func(v any) { c.array("faults.foundFaults", v, false, false, c.foundFault) })
	})
	field(o, "problemDetails", func(v any) {
		p := c.object("problemDetails", v)
		if p != nil {
			field(p, "rest", func(v any) { c.rest("problemDetails.rest", v) })
		}
	})
	field(o, "totalTests", func(v any) { c.integer("totalTests", v, 0, noMax, false) })
	field(o, "testFilePaths", func(v any) { c.array("testFilePaths", v, false, true, c.str) })
	field(o, "testCases", func(v any) { c.array("testCases", v, false, false, c.testCase) })
	field(o, "executionTimeInSeconds", func(v any) { c.integer("executionTimeInSeconds", v, 0, noMax, false) })
	field(o, "extra", func(v any) { c.array("extra", v, true, false, c.coverage) })
	field(o, "warnings", func(v any) { c.array("warnings", v, true, false, c.warning) })
}

func (c *checker) foundFault(at string, v any) {
	f := c.object(at, v, "endpointId", "testCaseId", "faultCategories")
	if f == nil {
		return
	}
	field(f, "operationId", func(v any) { c.str(at+".operationId", v) })
	field(f, "endpointId", func(v any) { c.str(at+".endpointId", v) })
	field(f, "testCaseId", func(v any) { c.str(at+".testCaseId", v) })
	field(f, "faultCategories", func(v any) {
		if a, ok := v.([]any); ok && len(a) == 0 {
			c.fail(at+".faultCategories", "empty: at least one is required")
		}
		c.array(at+".faultCategories", v, false, true, func(at string, v any) {
			fc := c.object(at, v, "code")
			if fc == nil {
				return
			}
			field(fc, "code", func(v any) {
				if code, ok := c.integer(at+".code", v, 100, 999, false); ok && !catalogue.WFCSchemaAllows(code) {
					c.fail(at+".code", "%d is outside the schema's ranges 100-104, 200-206, 900-999", code)
				}
			})
			field(fc, "context", func(v any) {
				if v != nil {
					c.str(at+".context", v)
				}
			})
		})
	})
}

func (c *checker) rest(at string, v any) {
	r := c.object(at, v, "outputHttpCalls", "evaluatedHttpCalls", "endpointIds", "coveredHttpStatus")
	if r == nil {
		return
	}
	field(r, "outputHttpCalls", func(v any) { c.integer(at+".outputHttpCalls", v, 0, noMax, false) })
	field(r, "evaluatedHttpCalls", func(v any) { c.integer(at+".evaluatedHttpCalls", v, 0, noMax, false) })
	field(r, "endpointIds", func(v any) { c.array(at+".endpointIds", v, false, true, c.str) })
	field(r, "coveredHttpStatus", func(v any) {
		c.array(at+".coveredHttpStatus", v, false, false, func(at string, v any) {
			e := c.object(at, v, "endpointId", "testCaseId", "httpStatus")
			if e == nil {
				return
			}
			field(e, "endpointId", func(v any) { c.str(at+".endpointId", v) })
			field(e, "testCaseId", func(v any) { c.str(at+".testCaseId", v) })
			field(e, "httpStatus", func(v any) {
				c.array(at+".httpStatus", v, true, true, func(at string, v any) { c.integer(at, v, 0, 599, true) })
			})
		})
	})
}

func (c *checker) testCase(at string, v any) {
	t := c.object(at, v)
	if t == nil {
		return
	}
	for _, k := range []string{"id", "filePath", "name"} {
		field(t, k, func(v any) { c.str(at+"."+k, v) })
	}
	for _, k := range []string{"startLine", "endLine"} {
		field(t, k, func(v any) { c.integer(at+"."+k, v, 0, noMax, false) })
	}
	field(t, "namedExamples", func(v any) { c.array(at+".namedExamples", v, true, false, c.str) })
}

func (c *checker) coverage(at string, v any) {
	o := c.object(at, v, "toolName", "criteria")
	if o == nil {
		return
	}
	field(o, "toolName", func(v any) { c.str(at+".toolName", v) })
	field(o, "criteria", func(v any) {
		c.array(at+".criteria", v, false, false, func(at string, v any) {
			k := c.object(at, v, "name", "covered")
			if k == nil {
				return
			}
			field(k, "name", func(v any) { c.str(at+".name", v) })
			field(k, "covered", func(v any) { c.integer(at+".covered", v, 0, noMax, false) })
			field(k, "total", func(v any) { c.integer(at+".total", v, 0, noMax, true) })
		})
	})
}

func (c *checker) warning(at string, v any) {
	w := c.object(at, v)
	if w == nil {
		return
	}
	field(w, "message", func(v any) { c.str(at+".message", v) })
	field(w, "category", func(v any) { c.str(at+".category", v) })
	field(w, "displayPriority", func(v any) { c.integer(at+".displayPriority", v, 0, noMax, false) })
}
