package score

import (
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/defectshowcase/showcase/catalogue"
)

// Formats are the scorecard's output formats.
var Formats = []string{"text", "markdown", "json", "svg", "junit", "sarif"}

// Write writes the scorecard in a format of Formats.
func (sc Scorecard) Write(w io.Writer, format string) error {
	return write(w, format, sc, sc.writeText, sc.writeMarkdown, sc.writeSVG, []Scorecard{sc})
}

// write writes v, a scorecard or a scoreboard, in a format of Formats: JSON
// is v itself, the others are its own renderers.
func write(w io.Writer, format string, v any, text, markdown, svg func(io.Writer) error, cards []Scorecard) error {
	switch format {
	case "junit":
		return writeJUnit(w, cards)
	case "sarif":
		return writeSARIF(w, cards)
	case "text":
		return text(w)
	case "markdown":
		return markdown(w)
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	case "svg":
		return svg(w)
	}
	return fmt.Errorf("format %q: want one of %s", format, strings.Join(Formats, ", "))
}

// Headline is the scorecard in one sentence.
func (sc Scorecard) Headline() string {
	if sc.NotRun != "" {
		return fmt.Sprintf("tested nothing: %s", sc.NotRun)
	}
	if sc.TestedNothing && sc.Reached == nil {
		return "tested nothing: its report says it made no test and no request"
	}
	if sc.TestedNothing {
		return fmt.Sprintf("tested nothing: its requests reached none of the %d operations", sc.Reached.Of)
	}
	s := fmt.Sprintf("%d of %d planted defects reported, %d unplanted", sc.Total.Reported, sc.Total.Active, len(sc.Unplanted))
	if sc.Reached != nil {
		s = fmt.Sprintf("reached %d of %d operations, ", sc.Reached.Operations, sc.Reached.Of) + s
	}
	if sc.Baseline != "" {
		s += ", " + plural(len(sc.FalsePositives), "false positive")
	}
	if sc.ToolErrors > 0 {
		s += ", " + plural(sc.ToolErrors, "tool error")
	}
	if sc.Truncated != "" {
		s += ", from a truncated report"
	}
	return s
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// Notes are what the reader must know besides the verdicts: what the run
// and its baseline never reached, the tool's own errors, and an exposure
// that contradicts the report.
func (sc Scorecard) Notes() []string {
	var notes []string
	switch {
	case sc.NotRun != "":
	case sc.TestedNothing && sc.Reached == nil:
		notes = append(notes, "The report says the run made no test and sent no request: it tested nothing, and its report is evidence of nothing.")
	case sc.TestedNothing:
		notes = append(notes, "The run reached none of the contract's operations (the instance counted no request to any): it tested nothing, and its report, with findings or without, is evidence of nothing.")
	case sc.Reached != nil && len(sc.Reached.Missed) > 0:
		notes = append(notes, fmt.Sprintf("The run never reached %s: a miss there says nothing of the tool's checks.", missedOperations(sc.Reached.Missed)))
	}
	switch {
	case sc.BaselineTestedNothing:
		notes = append(notes, "The baseline reached none of the contract's operations: it tested nothing and is no evidence of precision, so no false positive rate is given.")
	case sc.BaselineReached != nil && len(sc.BaselineReached.Missed) > 0:
		notes = append(notes, fmt.Sprintf("The baseline never reached %s: its false positive rate covers the rest.", missedOperations(sc.BaselineReached.Missed)))
	}
	if sc.Truncated != "" {
		notes = append(notes, "The report was cut short ("+sc.Truncated+"): the tool was stopped before it closed it, or the file was cut. What it found after the cut is not in it.")
	}
	if sc.ToolErrors > 0 {
		notes = append(notes, fmt.Sprintf("%d errors of the tool's own (requests it could not make, checks it could not run): not findings; part of the run tested nothing.", sc.ToolErrors))
	}
	if len(sc.Contradicted) > 0 {
		ids := make([]string, len(sc.Contradicted))
		for i, id := range sc.Contradicted {
			ids[i] = string(id)
		}
		if sc.OneRun == "" {
			notes = append(notes, fmt.Sprintf("The exposure contradicts the report: it names %s, which the instance never saw triggered. The report and the exposure are from different runs.", strings.Join(ids, ", ")))
		} else {
			notes = append(notes, fmt.Sprintf("%d spurious finding(s): the report names %s, which the instance never triggered in the run that wrote the report (%s). Every trigger is a function of the request, so no request of that run could have shown the defect: a false positive the ground truth proves (a slow answer on a busy machine, say), not a detection.", sc.Spurious, strings.Join(ids, ", "), sc.OneRun))
		}
	}
	return notes
}

// missedOperations names the defects' operations, with method and path.
func missedOperations(ids []catalogue.ID) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		e := catalogue.EndpointOf(id)
		parts[i] = fmt.Sprintf("%s's operation (%s %s)", id, e.Method, e.Path)
	}
	return strings.Join(parts, ", ")
}

// reportName is the report's file, with the schema version it was read
// as where the format has several.
func (sc Scorecard) reportName() string {
	if sc.FormatVersion == "" {
		return sc.Report
	}
	return fmt.Sprintf("%s (%s, schema %s)", sc.Report, strings.ToUpper(sc.Format), sc.FormatVersion)
}

func (sc Scorecard) title() string {
	return fmt.Sprintf("%s against the defect showcase (DEFECTS=%s)", sc.Tool, sc.Setting)
}

func checks(fs []Finding) string {
	var parts []string
	for _, f := range fs {
		parts = append(parts, fmt.Sprintf("%s ×%d", f.Check, f.Count))
	}
	return strings.Join(parts, ", ")
}

// count is a count the instance may not have kept: "—" then.
func count(n *uint64) string {
	if n == nil {
		return "—"
	}
	return fmt.Sprint(*n)
}

func rate(p *float64) string {
	if p == nil {
		return "—"
	}
	return fmt.Sprintf("%.2f", *p)
}

func findingLine(f Finding) string {
	class := string(f.Class)
	if class == "" {
		class = "no class"
	}
	s := fmt.Sprintf("%s  %s (%s) ×%d", f.Operation, f.Check, class, f.Count)
	if f.Sent != "" {
		s = fmt.Sprintf("%s (sent as %s)  %s (%s) ×%d", f.Operation, f.Sent, f.Check, class, f.Count)
	}
	if f.Detail != "" {
		s += ": " + f.Detail
	}
	return s
}

func (sc Scorecard) writeText(w io.Writer) error {
	fmt.Fprintf(w, "%s\n%s.\nreport: %s\n", sc.title(), sc.Headline(), sc.reportName())
	if sc.Baseline != "" {
		fmt.Fprintf(w, "baseline (DEFECTS=none): %s\n", sc.Baseline)
	}
	for _, n := range sc.Notes() {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "DEFECT\tOPERATION\tVERDICT\tREACHED\tTRIGGERED\tFINDINGS\tFACES")
	for _, d := range sc.Defects {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.ID, d.Operation, d.Verdict(), count(d.Reached), count(d.Triggered), orDash(checks(d.Findings)), orDash(checks(d.Faces)))
	}
	tw.Flush()
	fmt.Fprintf(w, "\nunplanted findings: %d\n", len(sc.Unplanted))
	for _, f := range sc.Unplanted {
		fmt.Fprintf(w, "  %s\n", findingLine(f))
	}
	if sc.Baseline != "" {
		fmt.Fprintf(w, "false positives (the baseline's findings): %d\n", len(sc.FalsePositives))
		for _, f := range sc.FalsePositives {
			fmt.Fprintf(w, "  %s\n", findingLine(f))
		}
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CATEGORY\tACTIVE\tREPORTED\tUNPLANTED\tTPR\tFPR\tYOUDEN J")
	for _, c := range append(sc.Categories, sc.Total) {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%s\n", c.Name, c.Active, c.Reported, c.Unplanted, rate(c.TPR), rate(c.FPR), rate(c.J))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if lines := sc.Coverage.lines(); len(lines) > 0 {
		fmt.Fprintln(w)
		for _, l := range lines {
			fmt.Fprintln(w, l)
		}
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func md(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

func (sc Scorecard) writeMarkdown(w io.Writer) error {
	fmt.Fprintf(w, "**%s**: %s.\n\n", md(sc.title()), md(sc.Headline()))
	if sc.FormatVersion != "" {
		fmt.Fprintf(w, "Report: %s.\n\n", md(sc.reportName()))
	}
	for _, n := range sc.Notes() {
		fmt.Fprintf(w, "> %s\n\n", md(n))
	}
	fmt.Fprintln(w, "| defect | operation | verdict | reached | triggered | findings | faces |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, d := range sc.Defects {
		fmt.Fprintf(w, "| %s | `%s` | %s | %s | %s | %s | %s |\n", d.ID, d.Operation, d.Verdict(), count(d.Reached), count(d.Triggered), md(orDash(checks(d.Findings))), md(orDash(checks(d.Faces))))
	}
	list := func(title string, fs []Finding) {
		fmt.Fprintf(w, "\n%s: %d\n", title, len(fs))
		if len(fs) > 0 {
			fmt.Fprintln(w)
		}
		for _, f := range fs {
			fmt.Fprintf(w, "- %s\n", md(findingLine(f)))
		}
	}
	list("Unplanted findings", sc.Unplanted)
	if sc.Baseline != "" {
		list("False positives (the baseline's findings)", sc.FalsePositives)
	}
	fmt.Fprintln(w, "\n| category | active | reported | unplanted | TPR | FPR | Youden's J |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|")
	for _, c := range append(sc.Categories, sc.Total) {
		fmt.Fprintf(w, "| %s | %d | %d | %d | %s | %s | %s |\n", c.Name, c.Active, c.Reported, c.Unplanted, rate(c.TPR), rate(c.FPR), rate(c.J))
	}
	_, err := io.WriteString(w, sc.Coverage.markdown())
	return err
}

func esc(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Verdict colours, chosen to stay apart for the colour-blind: blue, orange,
// a dark red and grey.
var verdictColour = map[string]string{
	"reported":                  "#1f77b4",
	"reported, never triggered": "#1f77b4",
	"spurious, never triggered": "#9e9ac8",
	"missed, triggered":         "#ff7f0e",
	"missed, reached":           "#d6604d",
	"missed, not triggered":     "#b2182b",
	"missed":                    "#b2182b",
	"missed, never reached":     "#67001f",
	"off":                       "#bdbdbd",
}

// usedVerdicts are the verdicts the scorecards give, in Verdicts' order
// (a legend's entries).
func usedVerdicts(cards ...Scorecard) []string {
	used := map[string]bool{}
	for _, sc := range cards {
		for _, d := range sc.Defects {
			used[d.Verdict()] = true
		}
	}
	var l []string
	for _, v := range Verdicts {
		if used[v] {
			l = append(l, v)
		}
	}
	return l
}

// writeSVG draws the scorecard for a slide (16:9): the ten defects as tiles
// coloured by verdict, and per category the true and false positive rates as
// bars with Youden's J.
func (sc Scorecard) writeSVG(w io.Writer) error {
	const width, height = 960, 540
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="40" y="52" font-size="26" font-weight="bold" fill="#222">%s</text>`+"\n", esc(sc.Tool))
	fmt.Fprintf(&b, `<text x="40" y="84" font-size="17" fill="#444">%s</text>`+"\n", esc(sc.Headline()+" · DEFECTS="+sc.Setting))
	if notes := sc.Notes(); len(notes) > 0 {
		note := notes[0]
		if len(note) > 150 {
			note = note[:strings.LastIndex(note[:150], " ")] + " …"
		}
		fmt.Fprintf(&b, `<text x="40" y="104" font-size="12" fill="#b2182b"><title>%s</title>%s</text>`+"\n", esc(strings.Join(notes, " ")), esc(note))
	}
	// The ten tiles.
	tileW, gap := 82.0, 6.0
	for i, d := range sc.Defects {
		x := 40 + float64(i)*(tileW+gap)
		colour := verdictColour[d.Verdict()]
		fmt.Fprintf(&b, `<g><title>%s</title><rect x="%.0f" y="112" width="%.0f" height="86" rx="6" fill="%s"/>`, esc(fmt.Sprintf("%s %s: %s", d.ID, d.Title, d.Verdict())), x, tileW, colour)
		fmt.Fprintf(&b, `<text x="%.0f" y="148" font-size="16" font-weight="bold" fill="#fff" text-anchor="middle">%s</text>`, x+tileW/2, esc(string(d.ID)))
		label := d.Verdict()
		if d.Triggered != nil {
			label = fmt.Sprintf("hit %d×", *d.Triggered)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="174" font-size="12" fill="#fff" text-anchor="middle">%s</text></g>`+"\n", x+tileW/2, esc(label))
	}
	for i, l := range usedVerdicts(sc) {
		x := 40 + float64(i)*175
		fmt.Fprintf(&b, `<rect x="%.0f" y="212" width="14" height="14" fill="%s"/><text x="%.0f" y="224" font-size="13" fill="#444">%s</text>`+"\n", x, verdictColour[l], x+20, esc(l))
	}
	// The category bars.
	top, rowH, barX, barW := 262.0, 52.0, 250.0, 480.0
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="13" fill="#444">true positive rate</text>`, barX, top-6)
	if sc.Baseline != "" {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="13" fill="#b2182b">false positive rate</text><text x="%.0f" y="%.0f" font-size="13" fill="#444" text-anchor="end">Youden's J</text>`, barX+150, top-6, width-40.0, top-6)
	}
	b.WriteString("\n")
	for i, c := range append(sc.Categories, sc.Total) {
		y := top + float64(i)*rowH
		fmt.Fprintf(&b, `<text x="40" y="%.0f" font-size="16" fill="#222"%s>%s</text>`, y+24, map[bool]string{true: ` font-weight="bold"`}[c.Name == "all"], esc(categoryTitle(c.Name)))
		fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="16" fill="#eeeeee"/>`, barX, y+4, barW)
		if c.TPR != nil {
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.1f" height="16" fill="#1f77b4"/>`, barX, y+4, barW**c.TPR)
		}
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="13" fill="#222">%s (%d/%d)</text>`, barX+barW+10, y+17, rate(c.TPR), c.Reported, c.Active)
		if c.FPR != nil {
			fmt.Fprintf(&b, `<rect x="%.0f" y="%.0f" width="%.0f" height="12" fill="#eeeeee"/><rect x="%.0f" y="%.0f" width="%.1f" height="12" fill="#b2182b"/>`, barX, y+24, barW, barX, y+24, barW**c.FPR)
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="12" fill="#b2182b">%s</text>`, barX+barW+10, y+35, rate(c.FPR))
			fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="18" font-weight="bold" fill="#222" text-anchor="end">%s</text>`, width-40.0, y+26, rate(c.J))
		}
		b.WriteString("\n")
	}
	if l := sc.Coverage.svgLine(); l != "" {
		fmt.Fprintf(&b, `<text x="40" y="%d" font-size="13" fill="#444">%s</text>`+"\n", height-12, esc(l))
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func categoryTitle(name string) string {
	if name == "all" {
		return "All ten"
	}
	if c, ok := catalogue.CategoryNamed(name); ok {
		return c.Title
	}
	return name
}
