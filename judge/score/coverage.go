package score

import (
	"fmt"
	"strings"

	"github.com/defectshowcase/showcase/catalogue/coverage"
	"github.com/defectshowcase/showcase/catalogue/wfc"
	"github.com/defectshowcase/showcase/judge/codecov"
)

// Coverage is what the instance measured of the run's traffic, beside the
// defects: its API coverage (catalogue/coverage) and, in a build with it,
// its code coverage (judge/codecov); and what the tool's report says it
// covered (a WFC report's extra), shown as "the tool says, the target saw",
// never scored.
type Coverage struct {
	API      *coverage.Report `json:"api,omitempty"`
	Code     *codecov.Report  `json:"code,omitempty"`
	ToolSaid []wfc.Coverage   `json:"tool_said,omitempty"`
}

// APILine is the API coverage in a line: the TCL and each criterion.
func (c *Coverage) APILine() string {
	if c == nil || c.API == nil {
		return ""
	}
	var parts []string
	for _, cr := range c.API.Criteria {
		parts = append(parts, fmt.Sprintf("%s %d/%d", coverage.Title(cr.Name), cr.Covered, cr.Total))
	}
	return fmt.Sprintf("TCL %d of %d: %s", c.API.TCL, c.API.MaxTCL, strings.Join(parts, ", "))
}

// CodeLine is the code coverage in a line, or what could not be computed.
func (c *Coverage) CodeLine() string {
	if c == nil || c.Code == nil {
		return ""
	}
	if c.Code.Statements.Total == 0 {
		return "not computed: " + c.Code.Missing
	}
	executed := 0
	for _, d := range c.Code.Defects {
		if d.Executed {
			executed++
		}
	}
	s := fmt.Sprintf("statements %s; planted code executed for %d of %d defects", c.Code.Statements, executed, len(c.Code.Defects))
	if c.Code.Missing != "" {
		s += "; not computed: " + c.Code.Missing
	}
	return s
}

// ToolLines are what the tool says it covered, a line per tool it names.
func (c *Coverage) ToolLines() []string {
	if c == nil {
		return nil
	}
	var out []string
	for _, tc := range c.ToolSaid {
		var parts []string
		for _, cr := range tc.Criteria {
			total := "?"
			if cr.Total != nil {
				total = fmt.Sprint(*cr.Total)
			}
			parts = append(parts, fmt.Sprintf("%s %d/%s", cr.Name, cr.Covered, total))
		}
		out = append(out, fmt.Sprintf("%s: %s", orDash(tc.ToolName), orDash(strings.Join(parts, ", "))))
	}
	return out
}

// lines are the coverage for a person, a line each: the target's API and
// code coverage, what it answered undocumented, and what the tool says.
func (c *Coverage) lines() []string {
	if c == nil {
		return nil
	}
	var out []string
	if l := c.APILine(); l != "" {
		out = append(out, "API coverage, as the instance measured it: "+l)
		if u := c.API.Undocumented(); len(u) > 0 {
			out = append(out, "answered with a status the contract does not document: "+strings.Join(u, ", "))
		}
		if c.API.Undeclared.Paths+c.API.Undeclared.Methods > 0 {
			out = append(out, fmt.Sprintf("outside the contract: %d requests to undeclared paths, %d with an undeclared method", c.API.Undeclared.Paths, c.API.Undeclared.Methods))
		}
	}
	if l := c.CodeLine(); l != "" {
		out = append(out, "code coverage, as the instance measured it: "+l)
	}
	for _, l := range c.ToolLines() {
		out = append(out, "the tool says it covered: "+l)
	}
	return out
}

// properties are the coverage as name and value pairs (JUnit's and
// SARIF's property lists).
func (c *Coverage) properties() [][2]string {
	if c == nil {
		return nil
	}
	var out [][2]string
	if c.API != nil {
		out = append(out, [2]string{"coverage.api.tcl", fmt.Sprintf("%d of %d", c.API.TCL, c.API.MaxTCL)})
		for _, cr := range c.API.Criteria {
			out = append(out, [2]string{"coverage.api." + cr.Name, fmt.Sprintf("%d/%d", cr.Covered, cr.Total)})
		}
		out = append(out, [2]string{"coverage.api.undocumented_statuses", strings.Join(c.API.Undocumented(), ", ")})
	}
	if l := c.CodeLine(); l != "" {
		out = append(out, [2]string{"coverage.code", l})
	}
	for _, l := range c.ToolLines() {
		out = append(out, [2]string{"coverage.tool_says", l})
	}
	return out
}

// markdown is the coverage's section of a markdown scorecard.
func (c *Coverage) markdown() string {
	if c == nil || c.API == nil && c.Code == nil && len(c.ToolSaid) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\nCoverage, as the instance measured it")
	if c.API != nil {
		fmt.Fprintf(&b, " (TCL %d of %d):\n\n| criterion | TCL | covered | of |\n|---|--:|--:|--:|\n", c.API.TCL, c.API.MaxTCL)
		for _, cr := range c.API.Criteria {
			fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", coverage.Title(cr.Name), cr.Level, cr.Covered, cr.Total)
		}
		if u := c.API.Undocumented(); len(u) > 0 {
			fmt.Fprintf(&b, "\nAnswered with a status the contract does not document: %s.\n", md(strings.Join(u, ", ")))
		}
	} else {
		b.WriteString(":\n")
	}
	if l := c.CodeLine(); l != "" {
		fmt.Fprintf(&b, "\nCode: %s.\n", md(l))
	}
	if tl := c.ToolLines(); len(tl) > 0 {
		b.WriteString("\nThe tool says it covered (its report's own coverage, not scored):\n\n")
		for _, l := range tl {
			fmt.Fprintf(&b, "- %s\n", md(l))
		}
	}
	return b.String()
}

// svgLine is the coverage in a line under a scorecard's picture.
func (c *Coverage) svgLine() string {
	if c == nil {
		return ""
	}
	var parts []string
	if c.API != nil {
		ops, _ := c.API.Criterion(coverage.Operations)
		codes, _ := c.API.Criterion(coverage.StatusCodes)
		parts = append(parts, fmt.Sprintf("API coverage TCL %d of %d · operations %d/%d · status codes %d/%d", c.API.TCL, c.API.MaxTCL, ops.Covered, ops.Total, codes.Covered, codes.Total))
	}
	if c.Code != nil && c.Code.Statements.Total > 0 {
		parts = append(parts, fmt.Sprintf("statements %.1f%%", c.Code.Statements.Percent()))
	}
	return strings.Join(parts, " · ")
}
