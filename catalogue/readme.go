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
		fmt.Fprintf(&b, "| %d | `%s %s` | %s | %s | %s | %s | %s | %s |\n", e.N, e.Method, e.Path, strings.ToLower(c.Title), d.ID,
			cell(d.Symptom), cell(strings.Join(triggers, "; ")), detected, d.codesCell())
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

// docs/mutants.md's tables of the operators and of each operation's
// conditions are generated from the catalogue too.
const (
	OperatorTableBegin  = "<!-- begin: operator table, generated from catalogue/mutants.go (go test ./catalogue -update) -->"
	OperatorTableEnd    = "<!-- end: operator table -->"
	ConditionTableBegin = "<!-- begin: condition table, generated from catalogue/mutants_ops.go (go test ./catalogue -update) -->"
	ConditionTableEnd   = "<!-- end: condition table -->"
)

// OperatorTable is the table of the mutation operators: what each does,
// what detects it, its codes, and on how many operations it can be
// planted.
func OperatorTable() string {
	var b strings.Builder
	b.WriteString("| Operator | What it does to an answer | Detected by | CWE · WFC · OWASP | Mutants (operations) |\n")
	b.WriteString("|---|---|---|---|---|\n")
	for _, o := range Operators {
		var classes []string
		for _, c := range o.Classes {
			classes = append(classes, "`"+string(c)+"`")
		}
		d := Defect{CWE: o.CWE, WFC: o.WFC, OWASP: o.OWASP}
		n, ops := 0, map[int]bool{}
		for _, m := range allMutants() {
			if m.Operator.Name == o.Name {
				n++
				ops[m.op.n] = true
			}
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %d (%d) |\n", o.Name, cell(o.Summary), strings.Join(classes, ", "), d.codesCell(), n, len(ops))
	}
	return b.String()
}

// ConditionTable is the table of each operation's conditions, by depth,
// with a request that meets each.
func ConditionTable() string {
	var b strings.Builder
	b.WriteString("| # | Operation | Condition | Depth | Meets it when… | For example |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	for _, op := range mutantOps {
		e := op.endpoint()
		for _, c := range op.conditions {
			ex := c.examples[0]
			req := Trigger{Query: ex.query, Body: ex.body}.request()
			if ex.header != "" {
				req = "`" + ex.header + "`" + strings.TrimPrefix(" "+req, " no parameters")
			}
			req = shortRuns(req)
			fmt.Fprintf(&b, "| %d | `%s %s` | `%s` | %d | %s | %s |\n", e.N, e.Method, e.Path, c.name, c.depth, cell(strings.TrimPrefix(strings.TrimPrefix(c.says, "when "), "on ")), cell(req))
		}
	}
	return b.String()
}

// shortRuns writes a run of 20 or more of one character as c×N.
func shortRuns(s string) string {
	var b strings.Builder
	rs := []rune(s)
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j] == rs[i] {
			j++
		}
		if j-i >= 20 {
			fmt.Fprintf(&b, "%c×%d", rs[i], j-i)
		} else {
			b.WriteString(string(rs[i:j]))
		}
		i = j
	}
	return b.String()
}

// codesCell is the CWE, WFC and OWASP cell of a table.
func (d Defect) codesCell() string {
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
		return cwe + owasp.ID
	}
	return cwe + "—"
}
