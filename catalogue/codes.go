package catalogue

import (
	"fmt"
	"slices"
	"strings"
)

// The field's two vocabularies for what a defect is: the fault classes of
// Web Fuzzing Commons (WFC, github.com/WebFuzzing/Commons, v0.6.0), which
// EvoMaster writes and other fuzzers take part in, and the OWASP API
// Security Top 10 (2023). Each defect states its codes in both, or that it
// has none (Defect.WFC, Defect.OWASP), with a note where that is a
// judgement (Defect.CodesNote).

// WFCSchemaVersion is the version of the WFC report schema the showcase
// writes, and the newest it was checked against.
const WFCSchemaVersion = "0.6.0"

// WFCFault is a fault class of WFC's catalogue.
type WFCFault struct {
	Code int    // 100, …: written F100
	Name string // as WFC's catalogue names it, shortened
	// CWE is the weakness the class is, 0 when it is not one weakness: a
	// WFC finding of the class counts for a defect of that CWE, as a SARIF
	// finding naming the CWE does. Only classes that are plainly one
	// weakness have one (F102, success on invalid input, is the face of
	// several defects, not the detection of CWE-20's).
	CWE int
}

// ID is the code as WFC labels it: "F100".
func (f WFCFault) ID() string { return fmt.Sprintf("F%d", f.Code) }

// The WFC fault codes the defects and the scorer name.
const (
	WFCServerError      = 100 // F100: HTTP status 500
	WFCSchemaMismatch   = 101 // F101: a response not matching its schema
	WFCSuccessOnInvalid = 102 // F102: success on invalid input
	WFCNoAuthAccess     = 207 // F207: a protected resource accessible without authentication
	WFCLeakedStackTrace = 209 // F209: leaked stack trace
)

// WFCFaults is WFC v0.6.0's catalogue of fault classes, F100-F104 and
// F200-F210, by code.
var WFCFaults = []WFCFault{
	{100, "HTTP status 500", 0},
	{101, "response not matching its schema", 0},
	{102, "success response on invalid input", 0},
	{103, "resource still accessible after being deleted", 0},
	{104, "failed creation has side effects", 0},
	{200, "SQL injection", 89},
	{201, "cross-site scripting", 79},
	{202, "server-side request forgery", 918},
	{203, "mass assignment", 915},
	{204, "existence of a protected resource leaked", 204},
	{205, "wrongly not recognised as authenticated", 0},
	{206, "modification of a resource that should be protected", 0},
	{207, "protected resource accessible without authentication", 0},
	{208, "anonymous modification", 0},
	{209, "leaked stack trace", 209},
	{210, "hidden endpoint accessible", 0},
}

// WFCFaultOf returns WFC's fault class of that code; ok is false for a
// code WFC v0.6.0 does not define.
func WFCFaultOf(code int) (f WFCFault, ok bool) {
	i := slices.IndexFunc(WFCFaults, func(f WFCFault) bool { return f.Code == code })
	if i < 0 {
		return WFCFault{}, false
	}
	return WFCFaults[i], true
}

// WFCSchemaAllows says whether the published v0.6.0 report schema admits
// the code: its FaultCategoryId allows 100-104, 200-206 and 900-999, and
// so leaves out F207-F210, which the catalogue beside it defines.
func WFCSchemaAllows(code int) bool {
	return (code >= 100 && code <= 104) || (code >= 200 && code <= 206) || (code >= 900 && code <= 999)
}

// OWASPRisk is a category of the OWASP API Security Top 10 (2023).
type OWASPRisk struct {
	ID   string // "API4:2023"
	Name string
}

// OWASPTop10 is the OWASP API Security Top 10, 2023 edition.
var OWASPTop10 = []OWASPRisk{
	{"API1:2023", "Broken Object Level Authorization"},
	{"API2:2023", "Broken Authentication"},
	{"API3:2023", "Broken Object Property Level Authorization"},
	{"API4:2023", "Unrestricted Resource Consumption"},
	{"API5:2023", "Broken Function Level Authorization"},
	{"API6:2023", "Unrestricted Access to Sensitive Business Flows"},
	{"API7:2023", "Server Side Request Forgery"},
	{"API8:2023", "Security Misconfiguration"},
	{"API9:2023", "Improper Inventory Management"},
	{"API10:2023", "Unsafe Consumption of APIs"},
}

// OWASPRiskOf returns the category of that ID; ok is false for none.
func OWASPRiskOf(id string) (r OWASPRisk, ok bool) {
	i := slices.IndexFunc(OWASPTop10, func(r OWASPRisk) bool { return r.ID == id })
	if i < 0 {
		return OWASPRisk{}, false
	}
	return OWASPTop10[i], true
}

// WFCClass is the class of check a WFC fault of that code is, given its
// context: F100 a server error, F102 an accepted invalid request, F207 an
// authentication bypass, and F101, a response not matching its schema, an
// undocumented status, a wrong content type or an invalid body as its
// context says. "" for every other code: such a finding is the tool's own
// (its CWE may still place it, WFCFault.CWE).
func WFCClass(code int, context string) Class {
	switch code {
	case WFCServerError:
		return ServerError
	case WFCSuccessOnInvalid:
		return AcceptedInvalid
	case WFCNoAuthAccess:
		return AuthBypass
	case WFCSchemaMismatch:
		return schemaMismatchClass(context)
	}
	return ""
}

// schemaMismatchClass reads an F101's context: WFC has one class for every
// way a response can fail its schema, and the context is where a tool can
// say which: a status, a content type, or else the body.
func schemaMismatchClass(context string) Class {
	c := strings.ToLower(context)
	switch {
	case strings.Contains(c, "content type") || strings.Contains(c, "content-type") || strings.Contains(c, "contenttype") ||
		strings.Contains(c, "media type") || strings.Contains(c, "mediatype"):
		return WrongContentType
	case strings.Contains(c, "status"):
		return UndocumentedStatus
	}
	return InvalidBody
}

// WFCContext is the context the showcase writes with a defect's WFC code,
// for the class of check it stands for: what makes an F101 an undocumented
// status or a wrong content type is said there, in the words WFCClass
// reads.
func WFCContext(c Class) string {
	switch c {
	case UndocumentedStatus:
		return "undocumented status code"
	case WrongContentType:
		return "undocumented content type"
	case InvalidBody:
		return "body not matching the response schema"
	case ServerError:
		return "status 500"
	case AcceptedInvalid:
		return "invalid request accepted"
	case AuthBypass:
		return "accessible without authentication"
	}
	return string(c)
}

// WFCCodeOf is the WFC fault code a tool writes a finding of the class
// under, the inverse of WFCClass (F101 with WFCContext's words); ok is
// false for a slow response and a rejected valid request, which WFC has no
// class for.
func WFCCodeOf(c Class) (code int, ok bool) {
	switch c {
	case ServerError:
		return WFCServerError, true
	case UndocumentedStatus, WrongContentType, InvalidBody:
		return WFCSchemaMismatch, true
	case AcceptedInvalid:
		return WFCSuccessOnInvalid, true
	case AuthBypass:
		return WFCNoAuthAccess, true
	}
	return 0, false
}
