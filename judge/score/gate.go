package score

import (
	"fmt"
	"strings"

	"github.com/defectshowcase/showcase/catalogue"
)

// Gate is what a tool's own CI demands of its scorecard: the defects it
// must report, and how many unplanted findings it may make (a negative
// MaxUnplanted: any number).
type Gate struct {
	Require      catalogue.Set
	MaxUnplanted int
}

// GateVerdict is a scorecard held against a gate.
type GateVerdict struct {
	// Untestable says why the scorecard proves nothing either way (the
	// run tested nothing; a required defect is off in the instance): the
	// gate cannot pass, nor fail the tool.
	Untestable string
	// Missed are the required defects not reported, each with its title
	// and verdict; Unplanted the unplanted findings, when there are more
	// than the gate allows.
	Missed    []string
	Unplanted []string
}

// Passed says the scorecard met the gate.
func (v GateVerdict) Passed() bool {
	return v.Untestable == "" && len(v.Missed) == 0 && len(v.Unplanted) == 0
}

// Check holds sc against the gate.
func (g Gate) Check(sc Scorecard) GateVerdict {
	var v GateVerdict
	switch {
	case sc.NotRun != "":
		v.Untestable = "the tool tested nothing: " + sc.NotRun
		return v
	case sc.TestedNothing:
		v.Untestable = strings.TrimPrefix(sc.Headline(), "tested nothing: ")
		v.Untestable = "the run tested nothing: " + v.Untestable
		return v
	}
	var off []string
	for _, d := range sc.Defects {
		if !g.Require.Active(d.ID) {
			continue
		}
		switch {
		case !d.Active:
			off = append(off, string(d.ID))
		case !d.Reported:
			v.Missed = append(v.Missed, fmt.Sprintf("%s (%s) on %s: %s", d.ID, d.Title, d.Operation, d.Verdict()))
		}
	}
	if len(off) > 0 {
		v.Untestable = fmt.Sprintf("required %s, off in the instance (DEFECTS=%s): a tool cannot report a defect that is not there", strings.Join(off, ", "), sc.Setting)
		v.Missed = nil
		return v
	}
	if g.MaxUnplanted >= 0 && len(sc.Unplanted) > g.MaxUnplanted {
		for _, f := range sc.Unplanted {
			v.Unplanted = append(v.Unplanted, findingLine(f))
		}
	}
	return v
}
