package palette

import (
	"image/color"
	"math"
	"testing"
)

// The dichromacies, simulated as Machado, Oliveira and Fernandes (2009)
// do at full severity: a matrix on linear RGB.
var dichromacies = map[string][3][3]float64{
	"protanopia":   {{0.152286, 1.052583, -0.204868}, {0.114503, 0.786281, 0.099216}, {-0.003882, -0.048116, 1.051998}},
	"deuteranopia": {{0.367322, 0.860646, -0.227968}, {0.280085, 0.672501, 0.047413}, {-0.011820, 0.042940, 0.968881}},
	"tritanopia":   {{1.255528, -0.076749, -0.178779}, {-0.078411, 0.930809, 0.147602}, {0.004733, 0.691367, 0.303900}},
	"none":         {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}},
}

// seen is the colour as CIELAB (D65) through the matrix.
func seen(c color.Color, m [3][3]float64) [3]float64 {
	r, g, b, _ := c.RGBA()
	linear := func(v uint32) float64 {
		x := float64(v) / 0xffff
		if x <= 0.04045 {
			return x / 12.92
		}
		return math.Pow((x+0.055)/1.055, 2.4)
	}
	in := [3]float64{linear(r), linear(g), linear(b)}
	var rgb [3]float64
	for i := range 3 {
		rgb[i] = min(1, max(0, m[i][0]*in[0]+m[i][1]*in[1]+m[i][2]*in[2]))
	}
	x := (0.4124*rgb[0] + 0.3576*rgb[1] + 0.1805*rgb[2]) / 0.95047
	y := 0.2126*rgb[0] + 0.7152*rgb[1] + 0.0722*rgb[2]
	z := (0.0193*rgb[0] + 0.1192*rgb[1] + 0.9505*rgb[2]) / 1.08883
	f := func(t float64) float64 {
		if t > 0.008856 {
			return math.Cbrt(t)
		}
		return 7.787*t + 16.0/116
	}
	return [3]float64{116*f(y) - 16, 500 * (f(x) - f(y)), 200 * (f(y) - f(z))}
}

// closest is the smallest colour difference (CIE76 ΔE) between two of the
// colours, as the worst-served reader sees them.
func closest(colors []color.Color) (float64, string) {
	worst, who := math.Inf(1), ""
	for name, m := range dichromacies {
		for i := range colors {
			for j := i + 1; j < len(colors); j++ {
				a, b := seen(colors[i], m), seen(colors[j], m)
				if d := math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2])); d < worst {
					worst, who = d, name
				}
			}
		}
	}
	return worst, who
}

// The colours stay apart for readers with each dichromacy (ΔE of 15 or
// more between any two of the six, where 2.3 is just noticeable), which
// gonum's default first pair, red and green, does not for a deuteranope.
func TestColourBlindSafe(t *testing.T) {
	var ours []color.Color
	for i := range 6 {
		ours = append(ours, Color(i))
	}
	if d, who := closest(ours); d < 15 {
		t.Errorf("two of the six colours are %.1f apart for %s, want 15 or more", d, who)
	}
	// gonum's plotutil.SoftColors[0] and [1].
	redGreen := []color.Color{color.RGBA{R: 0xf1, G: 0x5a, B: 0x60, A: 0xff}, color.RGBA{R: 0x7a, G: 0xc3, B: 0x6a, A: 0xff}}
	if d, who := closest(redGreen); d >= 15 {
		t.Errorf("the check cannot fail: gonum's red and green are %.1f apart for %s", d, who)
	}
	if Color(6) != Color(0) {
		t.Error("the seventh colour is not the first again")
	}
}
