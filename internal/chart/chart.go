// Package chart draws the charts of mcpwire's HTML reports (`mcpwire load
// -html`, `make compare`) as inline SVG computed in Go, and writes them in
// one self-contained page.
//
// Guarantees:
//   - The page fetches nothing: no script, no external style sheet, font
//     or image; its Content-Security-Policy (default-src 'none') says so
//     to the browser as well.
//   - Every string (titles, labels, series names, table cells: target URLs,
//     tool names, row names) goes through html/template, so a server- or
//     user-provided string is text, never markup.
//   - Non-finite values (NaN, ±Inf) are dropped from line series and drawn
//     as zero-length bars, never written into the SVG.
package chart

import (
	"math"
	"strconv"
	"strings"
)

// Point is one point of a line series.
type Point struct{ X, Y float64 }

// Series is one named line.
type Series struct {
	Name   string
	Points []Point
}

// Tick is an axis tick at At with its label.
type Tick struct {
	At    float64
	Label string
}

// Line is a line chart. The Y axis starts at zero; the X axis spans the
// data unless XTicks is given (then it spans the ticks).
type Line struct {
	Title  string
	XLabel string
	YLabel string
	Series []Series
	XTicks []Tick // nil: round ticks over the data
	XZero  bool   // the X axis starts at 0 (time since a start)
}

// Bar is one bar of a Bars chart.
type Bar struct {
	Label string
	Value float64
	Text  string // written after the bar ("" = the value with 2 decimals)
}

// Bars is a horizontal bar chart, one bar per row, with an optional
// vertical reference line (a ratio chart's 1.0).
type Bars struct {
	Title    string
	XLabel   string
	Bars     []Bar
	Ref      float64 // 0: no reference line
	RefLabel string
}

// Chart is a Line or a Bars.
type Chart interface{ view() svgView }

// Drawing sizes (SVG user units; the page scales them to its width).
const (
	width       = 760
	lineHeight  = 300
	padLeft     = 70
	padRight    = 40
	padTop      = 34
	padBottom   = 46
	barRow      = 22
	barLabelW   = 300
	barTextW    = 90
	barLabelMax = 46 // runes of a bar's label that fit left of it (the whole label is its tooltip)
	barTop      = 50 // room for the title and, under it, the reference line's label
)

// palette of the series, in order (colour-blind safe, Okabe–Ito).
var palette = []string{"#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9"}

// svgView is what the page template draws: already placed shapes.
type svgView struct {
	Title  string
	W, H   int
	Texts  []svgText
	Lines  []svgLine
	Polys  []svgPoly
	Rects  []svgRect
	Legend []svgLegend
}

type svgText struct {
	X, Y   string
	Anchor string // start, middle, end
	Class  string
	Rotate bool // vertical (the Y axis label)
	Text   string
}

type svgLine struct {
	X1, Y1, X2, Y2 string
	Class          string
}

type svgPoly struct {
	Name   string
	Color  string
	Points string
}

type svgRect struct {
	X, Y, W, H string
	Color      string
	Title      string
}

type svgLegend struct {
	X, Y  string
	Color string
	Name  string
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) }

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

func (l Line) view() svgView {
	v := svgView{Title: l.Title, W: width, H: lineHeight}
	x0, x1 := math.Inf(1), math.Inf(-1)
	ymax := 0.0
	for _, s := range l.Series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			x0, x1 = min(x0, p.X), max(x1, p.X)
			ymax = max(ymax, p.Y)
		}
	}
	if len(l.XTicks) > 0 {
		for _, t := range l.XTicks {
			x0, x1 = min(x0, t.At), max(x1, t.At)
		}
	}
	if x0 > x1 { // no data
		x0, x1 = 0, 1
	}
	if l.XZero {
		x0 = min(x0, 0)
	}
	if x1 == x0 {
		x1 = x0 + 1
	}
	yticks := niceTicks(0, ymax, 5)
	ytop := yticks[len(yticks)-1]
	pw := float64(width - padLeft - padRight)
	ph := float64(lineHeight - padTop - padBottom)
	sx := func(x float64) float64 { return padLeft + (x-x0)/(x1-x0)*pw }
	sy := func(y float64) float64 { return padTop + ph - y/ytop*ph }

	// Axes, grid and ticks.
	for _, t := range yticks {
		y := sy(t)
		v.Lines = append(v.Lines, svgLine{num(padLeft), num(y), num(padLeft + pw), num(y), "grid"})
		v.Texts = append(v.Texts, svgText{X: num(padLeft - 6), Y: num(y + 4), Anchor: "end", Class: "tick", Text: FormatNum(t)})
	}
	xt := l.XTicks
	if len(xt) == 0 {
		for _, t := range niceTicks(x0, x1, 8) {
			if t >= x0-1e-9*(x1-x0) && t <= x1+1e-9*(x1-x0) {
				xt = append(xt, Tick{t, FormatNum(t)})
			}
		}
	}
	for _, t := range xt {
		x := sx(t.At)
		v.Lines = append(v.Lines, svgLine{num(x), num(padTop + ph), num(x), num(padTop + ph + 5), "axis"})
		v.Texts = append(v.Texts, svgText{X: num(x), Y: num(padTop + ph + 18), Anchor: "middle", Class: "tick", Text: t.Label})
	}
	v.Lines = append(v.Lines,
		svgLine{num(padLeft), num(padTop), num(padLeft), num(padTop + ph), "axis"},
		svgLine{num(padLeft), num(padTop + ph), num(padLeft + pw), num(padTop + ph), "axis"})
	v.Texts = append(v.Texts,
		svgText{X: num(padLeft + pw/2), Y: num(lineHeight - 8), Anchor: "middle", Class: "label", Text: l.XLabel},
		svgText{X: "14", Y: num(padTop + ph/2), Anchor: "middle", Class: "label", Rotate: true, Text: l.YLabel},
		svgText{X: num(padLeft), Y: "20", Anchor: "start", Class: "title", Text: l.Title})

	// Series and legend.
	lx := float64(width - padRight)
	for i := len(l.Series) - 1; i >= 0; i-- {
		s := l.Series[i]
		color := palette[i%len(palette)]
		var b strings.Builder
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(num(sx(p.X)))
			b.WriteByte(',')
			b.WriteString(num(sy(p.Y)))
		}
		v.Polys = append(v.Polys, svgPoly{Name: s.Name, Color: color, Points: b.String()})
		lx -= float64(14 + 7*len([]rune(s.Name)))
		v.Legend = append(v.Legend, svgLegend{X: num(lx), Y: "14", Color: color, Name: s.Name})
		lx -= 14
	}
	return v
}

func (c Bars) view() svgView {
	h := barTop + padBottom + barRow*max(1, len(c.Bars))
	v := svgView{Title: c.Title, W: width, H: h}
	top := 0.0
	for _, b := range c.Bars {
		if finite(b.Value) {
			top = max(top, b.Value)
		}
	}
	top = max(top, c.Ref)
	ticks := niceTicks(0, top, 5)
	xtop := ticks[len(ticks)-1]
	pw := float64(width - barLabelW - barTextW)
	sx := func(x float64) float64 { return barLabelW + x/xtop*pw }
	bottom := float64(barTop + barRow*len(c.Bars))
	for _, t := range ticks {
		x := sx(t)
		v.Lines = append(v.Lines, svgLine{num(x), num(barTop - 4), num(x), num(bottom), "grid"})
		v.Texts = append(v.Texts, svgText{X: num(x), Y: num(bottom + 16), Anchor: "middle", Class: "tick", Text: FormatNum(t)})
	}
	for i, b := range c.Bars {
		y := float64(barTop + barRow*i)
		val := b.Value
		if !finite(val) || val < 0 {
			val = 0
		}
		text := b.Text
		if text == "" {
			text = strconv.FormatFloat(b.Value, 'f', 2, 64)
		}
		v.Rects = append(v.Rects, svgRect{X: num(barLabelW), Y: num(y + 3), W: num(sx(val) - barLabelW), H: num(barRow - 6),
			Color: palette[0], Title: b.Label + ": " + text})
		v.Texts = append(v.Texts,
			svgText{X: num(barLabelW - 8), Y: num(y + barRow/2 + 4), Anchor: "end", Class: "tick", Text: cut(b.Label, barLabelMax)},
			svgText{X: num(sx(val) + 6), Y: num(y + barRow/2 + 4), Anchor: "start", Class: "tick", Text: text})
	}
	v.Lines = append(v.Lines, svgLine{num(barLabelW), num(barTop - 4), num(barLabelW), num(bottom), "axis"})
	if c.Ref > 0 {
		x := sx(c.Ref)
		v.Lines = append(v.Lines, svgLine{num(x), num(barTop - 8), num(x), num(bottom), "ref"})
		v.Texts = append(v.Texts, svgText{X: num(x), Y: num(barTop - 12), Anchor: "middle", Class: "tick", Text: c.RefLabel})
	}
	v.Texts = append(v.Texts,
		svgText{X: num(barLabelW + pw/2), Y: num(float64(h) - 8), Anchor: "middle", Class: "label", Text: c.XLabel},
		svgText{X: "10", Y: "18", Anchor: "start", Class: "title", Text: c.Title})
	return v
}

// niceTicks returns about n round tick values from lo to at least hi
// (steps of 1, 2 or 5 × 10^k); the last one is ≥ hi and > lo.
func niceTicks(lo, hi float64, n int) []float64 {
	if !finite(lo) || !finite(hi) || hi <= lo {
		hi = lo + 1
	}
	raw := (hi - lo) / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	step := mag
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			step = m * mag
			break
		}
	}
	start := math.Floor(lo/step) * step
	var out []float64
	for t := start; ; t += step {
		t = math.Round(t/step) * step // no drift from repeated addition
		out = append(out, t)
		if t >= hi || len(out) > 2*n+2 {
			break
		}
	}
	return out
}

// FormatNum writes a tick value briefly: 1.5k, 2M, 0.25, 120.
func FormatNum(f float64) string {
	a := math.Abs(f)
	switch {
	case a >= 1e6:
		return trim(strconv.FormatFloat(f/1e6, 'f', 2, 64)) + "M"
	case a >= 1e4:
		return trim(strconv.FormatFloat(f/1e3, 'f', 1, 64)) + "k"
	case a >= 100 || a == 0:
		return strconv.FormatFloat(f, 'f', 0, 64)
	case a >= 1:
		return trim(strconv.FormatFloat(f, 'f', 2, 64))
	}
	return trim(strconv.FormatFloat(f, 'g', 2, 64))
}

// cut shortens s to n runes, the last one an ellipsis.
func cut(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func trim(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// Palette returns the series colours in order (#rrggbb).
func Palette() []string { return append([]string(nil), palette...) }
