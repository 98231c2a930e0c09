package trials

import (
	"image/color"

	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// toolColors tell the tools apart in the charts: the Okabe-Ito palette
// (Okabe and Ito 2008, "Color Universal Design"), in the order that keeps
// every pair of the first six furthest apart as readers with each kind of
// dichromacy see them (palette_test.go). gonum's default drew the first
// two tools red and green.
var toolColors = []color.NRGBA{
	{R: 0, G: 114, B: 178, A: 255},   // blue
	{R: 213, G: 94, B: 0, A: 255},    // vermillion
	{R: 0, G: 0, B: 0, A: 255},       // black
	{R: 86, G: 180, B: 233, A: 255},  // sky blue
	{R: 204, G: 121, B: 167, A: 255}, // reddish purple
	{R: 230, G: 159, B: 0, A: 255},   // orange
}

// toolColor is the i-th tool's colour.
func toolColor(i int) color.NRGBA { return toolColors[i%len(toolColors)] }

// toolDashes is the i-th tool's line style, so that the lines are told
// apart without colour too (a grey print, a projector): solid, then
// gonum's dash patterns.
func toolDashes(i int) []vg.Length { return plotutil.Dashes(i) }
