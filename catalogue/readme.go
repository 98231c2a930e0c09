package catalogue

import (
	"fmt"
	"strings"
)

// The README's tables of the endpoints and their defects are generated from
// the catalogue, between these markers; a test fails when they differ, and
// `go test ./catalogue -update` rewrites them.
const (
	DefectTableBegin = "<!-- begin: defect table, generated from catalogue/catalogue.go (go test ./catalogue -update) -->"
	DefectTableEnd   = "<!-- end: defect table -->"
	SwitchTableBegin = "<!-- begin: switched-off table, generated from catalogue/catalogue.go (go test ./catalogue -update) -->"
	SwitchTableEnd   = "<!-- end: switched-off table -->"
)

// DefectTable is the README's table of the ten endpoints and their defects,
// in Markdown.
func DefectTable() string {
	var b strings.Builder
	b.WriteString("| # | Endpoint | Category | ID | Defect | How to trigger it | Detected by | CWE · WFC · OWASP |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, e := range Endpoints {
		d := DefectOf(e.Defect)
		c, _ := CategoryNamed(e.Category)
		var triggers, classes []string
		for _, t := range d.Triggers {
			triggers = append(triggers, t.request()+" → "+t.Shows)
		}
		for _, cl := range d.Classes {
			classes = append(classes, "`"+string(cl)+"`")
		}
		detected := strings.Join(classes, ", ")
		if len(d.Faces) > 0 {
			var faces []string
			for _, cl := range d.Faces {
				faces = append(faces, "`"+string(cl)+"`")
			}
			detected += "; also shows as " + strings.Join(faces, ", ")
		}
		cwe := "—"
		if d.CWE != 0 {
			cwe = fmt.Sprintf("[CWE-%d](https://cwe.mitre.org/data/definitions/%d.html)", d.CWE, d.CWE)
		}
		wfc, owasp, _ := d.Codes()
		var labels []string
		for _, c := range wfc {
			labels = append(labels, c.Label)
		}
		if len(labels) == 0 {
			labels = []string{"—"}
		}
		cwe += " · " + strings.Join(labels, ", ") + " · "
		if owasp != nil {
			cwe += owasp.ID
		} else {
			cwe += "—"
		}
		fmt.Fprintf(&b, "| %d | `%s %s` | %s | %s | %s | %s | %s | %s |\n", e.N, e.Method, e.Path, strings.ToLower(c.Title), d.ID,
			cell(d.Symptom), cell(strings.Join(triggers, "; ")), detected, cwe)
	}
	return b.String()
}

// SwitchTable is the README's table of what each defect's endpoint does
// when it is switched off, and what the served contract gains.
func SwitchTable() string {
	var b strings.Builder
	b.WriteString("| ID | With the defect switched off, the endpoint… | Correction to the served contract |\n")
	b.WriteString("|---|---|---|\n")
	for _, d := range Defects {
		correction := d.Correction
		if correction == "" {
			correction = "none needed"
		}
		fmt.Fprintf(&b, "| %s | %s | %s |\n", d.ID, cell(d.Off), cell(correction))
	}
	return b.String()
}

// request is how the README writes a trigger: its query or body, or "no
// parameters" when it has neither.
func (t Trigger) request() string {
	switch {
	case t.Body != "":
		return "`" + t.Body + "`"
	case t.Query != "":
		return "`" + t.Query + "`"
	}
	return "no parameters"
}

// cell keeps a table cell on its row.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
