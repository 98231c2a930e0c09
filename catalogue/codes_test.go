package catalogue

import (
	"slices"
	"testing"
)

// Each defect's WFC codes and OWASP category, pinned: a change to either
// is a change of the ground truth (Version).
func TestCodes(t *testing.T) {
	want := map[ID]struct {
		wfc   []int
		owasp string
	}{
		SEC01:  {[]int{207}, "API2:2023"},
		ERR01:  {[]int{100}, ""},
		ERR02:  {[]int{100, 209}, "API8:2023"},
		ERR03:  {[]int{100}, ""},
		CONF01: {[]int{101}, ""},
		CONF02: {[]int{101}, ""},
		CONF03: {[]int{101}, ""},
		CONF04: {[]int{101}, ""},
		PERF01: {nil, "API4:2023"},
		PERF02: {nil, "API4:2023"},
	}
	for _, d := range Defects {
		w := want[d.ID]
		if !slices.Equal(d.WFC, w.wfc) || d.OWASP != w.owasp {
			t.Errorf("%s: WFC %v, OWASP %q; want %v, %q", d.ID, d.WFC, d.OWASP, w.wfc, w.owasp)
		}
		if d.OWASP != "" {
			if _, ok := OWASPRiskOf(d.OWASP); !ok {
				t.Errorf("%s: %q is no category of the OWASP API Top 10 (2023)", d.ID, d.OWASP)
			}
		}
	}
	// The judgements say why.
	for _, id := range []ID{SEC01, ERR02, CONF02, CONF04, PERF01, PERF02} {
		if DefectOf(id).CodesNote == "" {
			t.Errorf("%s's codes are a judgement, and its CodesNote is empty", id)
		}
	}
}

// A defect's WFC code is the one its detection reads as: through the
// scorer's mapping (WFCClass, with the context the showcase writes), each
// code lands on one of the defect's classes, or on its CWE.
func TestCodesMapToClasses(t *testing.T) {
	for _, d := range Defects {
		for _, code := range d.WFC {
			f, ok := WFCFaultOf(code)
			if !ok {
				t.Fatalf("%s: F%d is not in WFC's catalogue", d.ID, code)
			}
			landed := f.CWE != 0 && f.CWE == d.CWE
			for _, c := range d.Classes {
				if WFCClass(code, WFCContext(c)) == c {
					landed = true
				}
			}
			if !landed {
				t.Errorf("%s: %s maps to none of %v and is not CWE-%d", d.ID, f.ID(), d.Classes, d.CWE)
			}
		}
	}
}

// F101's context decides its class, as tools word it; the other codes do
// not read it.
func TestWFCClass(t *testing.T) {
	for _, c := range []struct {
		code    int
		context string
		want    Class
	}{
		{100, "", ServerError},
		{100, "content type", ServerError},
		{101, "", InvalidBody},
		{101, "Missing required property 'age'", InvalidBody},
		{101, "undocumented status code", UndocumentedStatus},
		{101, "Status 404 not declared", UndocumentedStatus},
		{101, "undocumented content type", WrongContentType},
		{101, "Content-Type text/plain", WrongContentType},
		{101, "media type text/plain is not in the schema", WrongContentType},
		{102, "", AcceptedInvalid},
		{207, "", AuthBypass},
		{209, "", ""},
		{103, "", ""},
		{999, "", ""},
	} {
		if got := WFCClass(c.code, c.context); got != c.want {
			t.Errorf("WFCClass(%d, %q) = %q, want %q", c.code, c.context, got, c.want)
		}
	}
	for _, code := range []int{100, 104, 200, 206, 900, 999} {
		if !WFCSchemaAllows(code) {
			t.Errorf("the published schema allows %d", code)
		}
	}
	for _, code := range []int{99, 105, 199, 207, 209, 210, 899, 1000} {
		if WFCSchemaAllows(code) {
			t.Errorf("the published schema does not allow %d", code)
		}
	}
}

// WFCCodeOf is WFCClass's inverse: each class WFC can say goes there and
// back, with the context the showcase writes.
func TestWFCCodeOf(t *testing.T) {
	for _, c := range []Class{UndocumentedStatus, WrongContentType, InvalidBody, ServerError, AcceptedInvalid, RejectedValid, AuthBypass, SlowResponse} {
		code, ok := WFCCodeOf(c)
		if ok != (c != RejectedValid && c != SlowResponse) {
			t.Errorf("%s: ok %v", c, ok)
		}
		if ok && WFCClass(code, WFCContext(c)) != c {
			t.Errorf("%s: F%d and back is %s", c, code, WFCClass(code, WFCContext(c)))
		}
	}
}
