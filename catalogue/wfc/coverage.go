package wfc

import (
	"fmt"
	"time"

	"github.com/defectshowcase/showcase/catalogue/coverage"
)

// TargetToolName names, in a report's extra, the coverage the showcase
// measured itself: the target's count, not the tool's.
const TargetToolName = "defect-showcase (the target's own count)"

// CoverageOf is an instance's API coverage as WFC's extra coverage: each
// criterion with its covered and total targets, then the TCL reached (of
// 6) and the statuses answered undocumented (of none documented: no
// total), under TargetToolName with the time counting began.
func CoverageOf(r *coverage.Report) Coverage {
	c := Coverage{ToolName: fmt.Sprintf("%s since %s", TargetToolName, r.Since.UTC().Format(time.RFC3339))}
	for _, cr := range r.Criteria {
		total := cr.Total
		c.Criteria = append(c.Criteria, Criterion{Name: "API " + cr.Name, Covered: cr.Covered, Total: &total})
	}
	maxTCL := r.MaxTCL
	c.Criteria = append(c.Criteria, Criterion{Name: "API TCL", Covered: r.TCL, Total: &maxTCL},
		Criterion{Name: "API undocumented statuses answered", Covered: len(r.Undocumented())})
	return c
}
