// Package palette is the colours that tell series apart in every chart the
// project draws (the trials' charts, report.html, the dashboard's picture)
// and on its pages: the Okabe-Ito palette (Okabe and Ito 2008, "Color
// Universal Design"), in the order that keeps every pair of the first six
// furthest apart as readers with each kind of dichromacy see them
// (palette_test.go). gonum's default drew the first two series red and
// green.
package palette

import "image/color"

// Colors are the palette, in order.
var Colors = []color.NRGBA{
	{R: 0, G: 114, B: 178, A: 255},   // blue
	{R: 213, G: 94, B: 0, A: 255},    // vermillion
	{R: 0, G: 0, B: 0, A: 255},       // black
	{R: 86, G: 180, B: 233, A: 255},  // sky blue
	{R: 204, G: 121, B: 167, A: 255}, // reddish purple
	{R: 230, G: 159, B: 0, A: 255},   // orange
}

// Color is the i-th series' colour (after the sixth, the first again: a
// chart tells its series apart by dashes too).
func Color(i int) color.NRGBA { return Colors[i%len(Colors)] }
