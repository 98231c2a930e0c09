package score

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/defectshowcase/showcase/catalogue"
)

// Scoreboard is several tools' scorecards side by side.
type Scoreboard struct {
	Tools []Scorecard `json:"tools"`
}

// verdictMarks are the scoreboard's one-character verdicts.
var verdictMarks = []struct{ verdict, mark, meaning string }{
	{"reported", "✔", "reported"},
	{"reported, never triggered", "✔!", "reported, but the exposure says never triggered"},
	{"missed, triggered", "◐", "missed, though its traffic triggered it"},
	{"missed, reached", "◔", "missed; its operation reached, the defect never triggered"},
	{"missed, not triggered", "○", "missed, never triggered (the instance did not count what was reached)"},
	{"missed, never reached", "⊘", "missed; its operation never reached"},
	{"missed", "✗", "missed (no exposure given)"},
	{"off", "·", "switched off"},
}

func mark(d DefectScore, notRun bool) string {
	if notRun && d.Active {
		return "—"
	}
	for _, m := range verdictMarks {
		if m.verdict == d.Verdict() {
			return m.mark
		}
	}
	return "?"
}

// legend lists the marks the board uses.
func (b Scoreboard) legend() []string {
	used := map[string]bool{}
	for _, sc := range b.Tools {
		for _, d := range sc.Defects {
			used[mark(d, sc.NotRun != "")] = true
		}
	}
	var l []string
	for _, m := range verdictMarks {
		if used[m.mark] {
			l = append(l, m.mark+" "+m.meaning)
		}
	}
	if used["—"] {
		l = append(l, "— the tool did not run")
	}
	return l
}

// Write writes the scoreboard in a format of Formats.
func (b Scoreboard) Write(w io.Writer, format string) error {
	return write(w, format, b, b.writeText, b.writeMarkdown, b.writeSVG, b.Tools)
}

// boardCounts are a tool's counts after its verdicts.
func boardCounts(sc Scorecard) (reported, unplanted, falsePositives, errors string) {
	if sc.NotRun != "" {
		return "—", "—", "—", "—"
	}
	fp := "—"
	if sc.Baseline != "" {
		fp = fmt.Sprint(len(sc.FalsePositives))
	}
	return fmt.Sprintf("%d/%d", sc.Total.Reported, sc.Total.Active), fmt.Sprint(len(sc.Unplanted)), fp, fmt.Sprint(sc.ToolErrors)
}

// reachCell is how many operations a run reached, "—" when not counted.
func reachCell(sc Scorecard) string {
	switch {
	case sc.NotRun != "":
		return "0"
	case sc.Reached == nil:
		return "—"
	}
	return fmt.Sprintf("%d/%d", sc.Reached.Operations, sc.Reached.Of)
}

// rates3 is a category's TPR, FPR and J in one cell; a tool that did not
// run has none.
func rates3(sc Scorecard, c CategoryScore) string {
	if sc.NotRun != "" {
		return "—"
	}
	return fmt.Sprintf("%s / %s / %s", rate(c.TPR), rate(c.FPR), rate(c.J))
}

func (b Scoreboard) notes() []string {
	var notes []string
	for _, sc := range b.Tools {
		if sc.NotRun != "" {
			notes = append(notes, fmt.Sprintf("%s tested nothing: %s (%s).", sc.Tool, sc.NotRun, sc.Report))
		}
		for _, n := range sc.Notes() {
			notes = append(notes, sc.Tool+": "+n)
		}
		for _, l := range sc.Coverage.lines() {
			notes = append(notes, sc.Tool+": "+l+".")
		}
	}
	return notes
}

// table is a table of the board: a header and rows of cells; align marks
// each column for markdown ("---", ":-:", "--:").
type table struct {
	header, align []string
	rows          [][]string
}

// verdicts is the table of each run's verdicts and counts.
func (b Scoreboard) verdicts(markdown bool) table {
	t := table{header: []string{"tool", "DEFECTS"}, align: []string{"---", "---"}}
	if markdown {
		t.header[1] = "`DEFECTS`"
	}
	for _, d := range catalogue.Defects {
		t.header, t.align = append(t.header, string(d.ID)), append(t.align, ":-:")
	}
	t.header = append(t.header, "reached", "reported", "unplanted", "false positives", "tool errors")
	t.align = append(t.align, "--:", "--:", "--:", "--:", "--:")
	for _, sc := range b.Tools {
		tool := sc.Tool
		if markdown {
			tool = md(tool)
		}
		row := []string{tool, sc.Setting}
		// The ten's columns; a mutant set's mutants are in its counts.
		for _, d := range sc.Defects[:len(catalogue.Defects)] {
			row = append(row, mark(d, sc.NotRun != ""))
		}
		r, u, fp, e := boardCounts(sc)
		t.rows = append(t.rows, append(row, reachCell(sc), r, u, fp, e))
	}
	return t
}

// rateTable is the table of each run's rates per category.
func (b Scoreboard) rateTable(markdown bool) table {
	t := table{header: []string{"TPR / FPR / Youden's J"}, align: []string{"---"}}
	for _, c := range catalogue.Categories {
		t.header, t.align = append(t.header, c.Name), append(t.align, ":-:")
	}
	t.header, t.align = append(t.header, "all"), append(t.align, ":-:")
	for _, sc := range b.Tools {
		tool := sc.Tool
		if markdown {
			tool = md(tool)
		}
		row := []string{tool}
		for _, c := range append(sc.Categories, sc.Total) {
			row = append(row, rates3(sc, c))
		}
		t.rows = append(t.rows, row)
	}
	return t
}

func (t table) writeText(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.ToUpper(strings.Join(t.header, "\t")))
	for _, r := range t.rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
}

func (t table) writeMarkdown(w io.Writer) {
	fmt.Fprintf(w, "| %s |\n|%s|\n", strings.Join(t.header, " | "), strings.Join(t.align, "|"))
	for _, r := range t.rows {
		fmt.Fprintf(w, "| %s |\n", strings.Join(r, " | "))
	}
}

func (b Scoreboard) writeText(w io.Writer) error {
	fmt.Fprintf(w, "Scoreboard: %d runs against the defect showcase\n\n", len(b.Tools))
	b.verdicts(false).writeText(w)
	fmt.Fprintf(w, "\n%s\n\nTPR / FPR / Youden's J per category (FPR and J need a baseline run against DEFECTS=none)\n\n", strings.Join(b.legend(), "   "))
	b.rateTable(false).writeText(w)
	if notes := b.notes(); len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "note: %s\n", n)
		}
	}
	return nil
}

func (b Scoreboard) writeMarkdown(w io.Writer) error {
	b.verdicts(true).writeMarkdown(w)
	fmt.Fprintf(w, "\n%s\n\n", strings.Join(b.legend(), " · "))
	b.rateTable(true).writeMarkdown(w)
	if notes := b.notes(); len(notes) > 0 {
		fmt.Fprintln(w)
		for _, n := range notes {
			fmt.Fprintf(w, "- %s\n", md(n))
		}
	}
	return nil
}

// writeSVG draws the board: a row per run, a tile per defect coloured by
// its verdict, and the run's Youden's J (or true positive rate, without a
// baseline) at the end.
func (b Scoreboard) writeSVG(w io.Writer) error {
	const width, left, tileW, tileH, gap, top = 960, 310.0, 48.0, 40.0, 4.0, 110.0
	height := int(top + float64(len(b.Tools))*(tileH+gap) + 70)
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Helvetica, Arial, sans-serif">`+"\n", width, height, width, height)
	fmt.Fprintf(&s, `<rect width="%d" height="%d" fill="#ffffff"/>`+"\n", width, height)
	fmt.Fprintf(&s, `<text x="24" y="40" font-size="24" font-weight="bold" fill="#222">%s</text>`+"\n", esc(fmt.Sprintf("%d runs against the defect showcase", len(b.Tools))))
	for i, d := range catalogue.Defects {
		x := left + float64(i)*(tileW+gap)
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" font-size="11" fill="#444" text-anchor="middle">%s</text>`, x+tileW/2, top-10, esc(string(d.ID)))
	}
	jx := left + 10*(tileW+gap) + 60
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" font-size="11" fill="#444" text-anchor="middle">J (TPR)</text>`+"\n", jx, top-10)
	for r, sc := range b.Tools {
		y := top + float64(r)*(tileH+gap)
		fmt.Fprintf(&s, `<text x="24" y="%.0f" font-size="14" fill="#222">%s</text>`, y+18, esc(sc.Tool))
		fmt.Fprintf(&s, `<text x="24" y="%.0f" font-size="11" fill="#666">%s</text>`, y+33, esc("DEFECTS="+sc.Setting+boardNote(sc)))
		for i, d := range sc.Defects[:len(catalogue.Defects)] {
			x := left + float64(i)*(tileW+gap)
			colour := verdictColour[d.Verdict()]
			if sc.NotRun != "" && d.Active {
				colour = "#ffffff"
			}
			fmt.Fprintf(&s, `<g><title>%s</title><rect x="%.0f" y="%.0f" width="%.0f" height="%.0f" rx="4" fill="%s" stroke="#bdbdbd"/>`, esc(fmt.Sprintf("%s %s: %s", sc.Tool, d.ID, d.Verdict())), x, y, tileW, tileH, colour)
			fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" font-size="16" fill="#fff" text-anchor="middle">%s</text></g>`, x+tileW/2, y+26, esc(mark(d, sc.NotRun != "")))
		}
		score := "—"
		switch {
		case sc.NotRun != "":
		case sc.Total.J != nil:
			score = rate(sc.Total.J)
		case sc.Total.TPR != nil:
			score = "(" + rate(sc.Total.TPR) + ")"
		}
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" font-size="18" font-weight="bold" fill="#222" text-anchor="middle">%s</text>`+"\n", jx, y+27, esc(score))
	}
	ly := float64(height) - 30
	x := 24.0
	for _, m := range usedVerdicts(b.Tools...) {
		fmt.Fprintf(&s, `<rect x="%.0f" y="%.0f" width="14" height="14" fill="%s"/><text x="%.0f" y="%.0f" font-size="13" fill="#444">%s</text>`, x, ly, verdictColour[m], x+20, ly+12, esc(m))
		x += 165
	}
	s.WriteString("\n</svg>\n")
	_, err := io.WriteString(w, s.String())
	return err
}

// boardNote is what a row says after its setting: that the tool did not
// run, or how much it reported.
func boardNote(sc Scorecard) string {
	if sc.TestedNothing {
		return " · tested nothing"
	}
	r, u, fp, _ := boardCounts(sc)
	s := " · " + r + " · " + u + " unplanted"
	if sc.Reached != nil {
		s = " · reached " + reachCell(sc) + s
	}
	if fp != "—" {
		s += " · " + fp + " false pos."
	}
	return s
}
