package catalogue

import (
	"strings"
	"time"
)

// Version is the version of the ground truth: its format and its facts. It
// grows whenever either changes, so a scorer can tell which catalogue a
// report is to be judged against. Version 3 added each operation's
// reached counts and the index of each first request; version 2 is the
// same without them. Version 4 added the requests of each operation that
// got no answer (Reached.NoAnswer: before it, they were counted as 4xx),
// and each defect's WFC and OWASP codes, which came under version 3.
// Version 5 added contract mutants (a setting mutants:SEED[:N], entries
// with an operator, a condition and a depth, and triggers with headers).
const Version = 5

// Truth is the ground truth of one instance: every planted defect, where it
// is, how it shows, what detects it, and whether this instance has it
// active. The gateway serves it as JSON on the admin port (/defects), with
// each defect's exposure in that instance; written as a file it has none.
type Truth struct {
	Version int    `json:"version"`
	Setting string `json:"setting"` // DEFECTS as the instance read it: all, none, a list, or mutants:SEED[:N]
	Active  []ID   `json:"active"`
	Off     []ID   `json:"off"`
	// ExposureSince is when the instance began counting exposure: its start
	// or its last reset. Absent from a file.
	ExposureSince *time.Time `json:"exposure_since,omitempty"`
	// Requests is how many requests the instance received since then, any
	// path; a first_request below is the index among them (1 is the
	// first). Absent from a file.
	Requests *uint64 `json:"requests,omitempty"`
	// Replicas are the replicas whose counts were merged into these, each
	// as its name and admin address: present only in a deployment's
	// ground truth (/defects?scope=deployment, MergeTruth).
	Replicas []string     `json:"replicas,omitempty"`
	Defects  []TruthEntry `json:"defects"`
}

// TruthEntry is one defect in the ground truth.
type TruthEntry struct {
	ID        ID        `json:"id"`
	Category  string    `json:"category"`
	Endpoint  string    `json:"endpoint"` // the operation's path
	Operation Operation `json:"operation"`
	// Operator, Condition and Depth are a contract mutant's: the operator
	// applied, the condition on the request and its depth (0: every
	// request, 1: a class of input, 2: a narrow one). Absent for the ten.
	Operator  string    `json:"operator,omitempty"`
	Condition string    `json:"condition,omitempty"`
	Depth     *int      `json:"depth,omitempty"`
	Title     string    `json:"title"`
	Symptom   string    `json:"symptom"`
	Triggers  []Request `json:"triggers"`
	// DetectedBy are the classes of check that detect it; Faces the
	// further findings that are the same defect.
	DetectedBy []Class `json:"detected_by"`
	Faces      []Class `json:"faces"`
	CWE        *int    `json:"cwe"` // null when no entry fits
	// WFC are its Web Fuzzing Commons fault codes, [] when WFC has none;
	// OWASP its OWASP API Top 10 (2023) category, null when none fits;
	// CodesNote why, where that is a judgement.
	WFC       []WFCCode `json:"wfc"`
	OWASP     *OWASP    `json:"owasp"`
	CodesNote string    `json:"codes_note,omitempty"`
	// TriggeredWhen says which requests count in its exposure.
	TriggeredWhen string `json:"triggered_when"`
	Active        bool   `json:"active"`
	// Exposure is what the instance saw of it; absent from a file.
	Exposure *Exposure `json:"exposure,omitempty"`
	// Reached is what the instance saw of the requests to its operation,
	// whatever they triggered; absent from a file.
	Reached *Reached `json:"reached,omitempty"`
}

// Reached counts the requests an instance received for one operation of
// the contract since ExposureSince: those with the operation's method by
// the class of their answer's status, and those to its path with another
// method (405, OPTIONS). It tells a run that tested an operation and found
// nothing to trigger from one that never got there.
type Reached struct {
	Count uint64 `json:"count"` // requests with the operation's method
	// ByStatus splits the requests of Count that were answered by status
	// class: "2xx", "3xx", "4xx", "5xx".
	ByStatus map[string]uint64 `json:"by_status"`
	// NoAnswer is the rest of Count: requests the client gave up on before
	// their answer (it left, or its deadline passed). They reached the
	// operation; no status was received.
	NoAnswer     uint64     `json:"no_answer"`
	OtherMethods uint64     `json:"other_methods"`
	First        *time.Time `json:"first"`         // the first request with its method; null while Count is 0
	FirstRequest *uint64    `json:"first_request"` // its index among the instance's requests; null while Count is 0
}

// StatusClasses are the keys of Reached.ByStatus, every one always present.
var StatusClasses = []string{"2xx", "3xx", "4xx", "5xx"}

// Exposure is how often an instance's planted defect was triggered (its
// planted code ran and produced its symptom) since ExposureSince, when first
// and last, and the first request that did.
type Exposure struct {
	Count   uint64     `json:"count"`
	First   *time.Time `json:"first"`   // null while the count is 0
	Last    *time.Time `json:"last"`    // null while the count is 0
	Example *Example   `json:"example"` // null while the count is 0
	// FirstRequest is the index of the first request that triggered it
	// among the instance's requests (Truth.Requests); null while the count
	// is 0, or when the request did not come through the gateway.
	FirstRequest *uint64 `json:"first_request"`
}

// Example is a request that triggered a defect.
type Example struct {
	Method    string `json:"method"`
	Target    string `json:"target"` // path and query, cut at 512 bytes
	RequestID string `json:"request_id"`
}

// WFCCode is a WFC fault class in the ground truth.
type WFCCode struct {
	Code  int    `json:"code"`  // 100
	Label string `json:"label"` // "F100"
	Name  string `json:"name"`
}

// OWASP is an OWASP API Top 10 category in the ground truth.
type OWASP struct {
	ID   string `json:"id"` // "API4:2023"
	Name string `json:"name"`
}

// Operation is an operation of the contract.
type Operation struct {
	Method string `json:"method"`
	Path   string `json:"path"`
}

// Request is a trigger as a request to send and the answers it gets.
type Request struct {
	Method      string `json:"method"`
	Target      string `json:"target"` // path and query
	ContentType string `json:"content_type,omitempty"`
	// Headers are further headers to send (a key, an Accept).
	Headers   map[string]string `json:"headers,omitempty"`
	Body      string            `json:"body,omitempty"`
	Status    int               `json:"status"` // with the defect active
	Shows     string            `json:"shows"`
	OffStatus int               `json:"off_status"` // with it switched off
	OffShows  string            `json:"off_shows"`
}

// GroundTruth is the ground truth of an instance with the given defects
// active.
func GroundTruth(active Set) Truth {
	t := Truth{Version: Version, Setting: active.String(), Active: active.ActiveIDs(), Off: []ID{}}
	for _, d := range active.Defects() {
		e := Endpoints[d.Endpoint-1]
		on := d.IsMutant() || active.Active(d.ID)
		if !on {
			t.Off = append(t.Off, d.ID)
		}
		entry := TruthEntry{ID: d.ID, Category: e.Category, Endpoint: e.Path, Operation: Operation{e.Method, e.Path},
			Title: d.Title, Symptom: d.Symptom, DetectedBy: d.Classes, Faces: d.Faces, TriggeredWhen: d.TriggeredWhen, Active: on,
			Operator: d.Operator, Condition: d.Condition}
		if d.IsMutant() {
			depth := d.Depth
			entry.Depth = &depth
		}
		if entry.Faces == nil {
			entry.Faces = []Class{}
		}
		if d.CWE != 0 {
			cwe := d.CWE
			entry.CWE = &cwe
		}
		entry.WFC, entry.OWASP, entry.CodesNote = d.Codes()
		for _, tr := range d.Triggers {
			r := Request{Method: e.Method, Target: d.Target(tr), Body: tr.Body,
				Status: tr.Status, Shows: tr.Shows, OffStatus: tr.OffStatus, OffShows: tr.OffShows}
			if tr.Body != "" {
				r.ContentType = "application/json"
			}
			if name, value, ok := strings.Cut(tr.Header, ":"); ok {
				r.Headers = map[string]string{name: strings.TrimSpace(value)}
			}
			entry.Triggers = append(entry.Triggers, r)
		}
		t.Defects = append(t.Defects, entry)
	}
	return t
}

// Codes are the defect's WFC codes and OWASP category as the ground truth
// writes them, and the note on them.
func (d Defect) Codes() ([]WFCCode, *OWASP, string) {
	codes := []WFCCode{}
	for _, c := range d.WFC {
		f, _ := WFCFaultOf(c)
		codes = append(codes, WFCCode{Code: c, Label: f.ID(), Name: f.Name})
	}
	var owasp *OWASP
	if r, ok := OWASPRiskOf(d.OWASP); ok {
		owasp = &OWASP{ID: r.ID, Name: r.Name}
	}
	return codes, owasp, d.CodesNote
}
