package trials

import (
	"image/color"

	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/defectshowcase/showcase/platform/palette"
)

// toolColor is the i-th tool's colour: the project's colour-blind-safe
// palette (platform/palette).
func toolColor(i int) color.NRGBA { return palette.Color(i) }

// toolDashes is the i-th tool's line style, so that the lines are told
// apart without colour too (a grey print, a projector): solid, then
// gonum's dash patterns.
func toolDashes(i int) []vg.Length { return plotutil.Dashes(i) }
