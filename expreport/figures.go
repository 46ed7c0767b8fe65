package expreport

import (
	"bytes"
	"fmt"
	"image/color"
	"math"
	"slices"
	"sort"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"mlerl/experiment"
	"mlerl/runrecord"
)

// Figure is one figure: panels tiled in Cols columns under a title and a shared legend.
type Figure struct {
	Name    string // file name stem and HTML id suffix: fig7-programs, ...
	Title   string
	Caption string
	// Skip, when set, says why the figure is not drawn.
	Skip   string
	Cols   int
	Panels []Panel
}

// Panel is one plot of a figure.
type Panel struct {
	Title, XLabel, YLabel string
	Series                []Series
	// YMin and YMax, when set, fix an end of the y axis (0 for seconds, 0..1 for a rate).
	YMin, YMax *float64
}

// Series is one arm's line: the mean over seeds at X, with the band Lo..Hi (min..max over
// seeds); Step draws it as a step function (the value holds until the next X).
type Series struct {
	Label string
	Color int // index into the palette: the arm's place in the spec, so arms keep their colour
	Step  bool
	X     []float64
	Mean  []float64
	Lo    []float64
	Hi    []float64
	// N is how many seeds have a value at each X.
	N []int
}

// palette is colour-blind-friendly (Okabe-Ito), then a few more.
var palette = []color.NRGBA{
	{0x00, 0x72, 0xB2, 0xff}, {0xD5, 0x5E, 0x00, 0xff}, {0x00, 0x9E, 0x73, 0xff}, {0xCC, 0x79, 0xA7, 0xff},
	{0xE6, 0x9F, 0x00, 0xff}, {0x56, 0xB4, 0xE9, 0xff}, {0x00, 0x00, 0x00, 0xff}, {0x88, 0x88, 0x88, 0xff},
	{0x99, 0x44, 0x00, 0xff}, {0x44, 0x44, 0xAA, 0xff},
}

func colour(i int) color.NRGBA { return palette[i%len(palette)] }

// aggregate turns per-seed values at points x into a series (points no seed has are left out).
func aggregate(label string, colourIdx int, step bool, at map[float64][]float64) Series {
	s := Series{Label: label, Color: colourIdx, Step: step}
	var xs []float64
	for x := range at {
		xs = append(xs, x)
	}
	sort.Float64s(xs)
	for _, x := range xs {
		vs := at[x]
		if len(vs) == 0 {
			continue
		}
		st := Summarize(vs)
		s.X = append(s.X, x)
		s.Mean = append(s.Mean, st.Mean)
		s.Lo = append(s.Lo, slices.Min(vs))
		s.Hi = append(s.Hi, slices.Max(vs))
		s.N = append(s.N, len(vs))
	}
	return s
}

// stepPoint is one point of a best-so-far curve.
type stepPoint struct {
	x float64
	y *float64
}

// StepMean evaluates each seed's step function (a curve's value holds from its x until the
// seed's next point; before its first point it has none, nor where its program had no valid
// test score) on the union of the seeds' x, and aggregates over the seeds that have a value.
func stepMean(label string, colourIdx int, curves [][]stepPoint) Series {
	grid := map[float64]bool{}
	for _, c := range curves {
		sort.SliceStable(c, func(i, j int) bool { return c[i].x < c[j].x })
		for _, p := range c {
			grid[p.x] = true
		}
	}
	at := map[float64][]float64{}
	for x := range grid {
		for _, c := range curves {
			var v *float64
			for _, p := range c {
				if p.x > x {
					break
				}
				v = p.y
			}
			if v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				at[x] = append(at[x], *v)
			}
		}
	}
	return aggregate(label, colourIdx, true, at)
}

// doneCells are a task's and arm's done cells.
func (ix *index) doneCells(task, arm string) []experiment.CellRecord {
	var out []experiment.CellRecord
	for _, c := range ix.cells[key{task, arm}] {
		if c.Status == experiment.StatusDone {
			out = append(out, c)
		}
	}
	return out
}

func (ix *index) colourOf(arm string) int { return slices.Index(ix.arms, arm) }

func scoreLabel(what string, d Direction) string { return what + " (" + d.Word() + " is better)" }

const bandNote = "lines: mean over seeds; shaded: min to max over seeds"

func (ix *index) fig7(name, axis string) Figure {
	xl, title := "executed training programs", "Figure 7: best training program so far, graded on test, vs programs executed"
	if axis == "wall" {
		xl, title = "wall seconds of training", "Figure 7: best training program so far, graded on test, vs wall time"
	}
	f := Figure{Name: name, Title: title, Cols: 3}
	for _, task := range ix.tasks {
		d := ix.dir[task]
		p := Panel{Title: task, XLabel: xl, YLabel: scoreLabel("test score", d)}
		for _, a := range ix.arms {
			var curves [][]stepPoint
			for _, c := range ix.doneCells(task, a) {
				var pts []stepPoint
				for _, cp := range c.Curve {
					x := float64(cp.Programs)
					if axis == "wall" {
						x = cp.WallSeconds
					}
					pts = append(pts, stepPoint{x, cp.Test})
				}
				if len(pts) > 0 {
					curves = append(curves, pts)
				}
			}
			if s := stepMean(a, ix.colourOf(a), curves); len(s.X) > 0 {
				p.Series = append(p.Series, s)
			}
		}
		if len(p.Series) > 0 {
			f.Panels = append(f.Panels, p)
		}
	}
	if len(f.Panels) == 0 {
		f.Skip = "no done cell has curve points with a test score (the ledger's curve field is empty)"
	}
	f.Caption = fmt.Sprintf("Per task with data, each arm's best-so-far training program (by validation score) graded on "+
		"test, against %s: each seed's step function evaluated on the union of the seeds' points; %s.", xl, bandNote)
	return f
}

// iterSeries aggregates get over the done cells of task and arm, per iteration.
func (ix *index) iterSeries(task, arm string, get func(runrecord.IterationMetrics) *float64) Series {
	at := map[float64][]float64{}
	for _, c := range ix.doneCells(task, arm) {
		for _, m := range ix.metrics[c.Run] {
			if v := get(m); v != nil && !math.IsNaN(*v) && !math.IsInf(*v, 0) {
				at[float64(m.Iteration)] = append(at[float64(m.Iteration)], *v)
			}
		}
	}
	return aggregate(arm, ix.colourOf(arm), false, at)
}

func meanScore(m runrecord.IterationMetrics) *float64 { return m.MeanScore }
func meanDuration(m runrecord.IterationMetrics) *float64 {
	if m.Samples == 0 && m.MeanDuration == 0 {
		return nil
	}
	v := m.MeanDuration
	return &v
}
func validRate(m runrecord.IterationMetrics) *float64 {
	if m.Samples == 0 && m.ValidRate == 0 {
		return nil
	}
	v := m.ValidRate
	return &v
}

func (ix *index) fig10() Figure {
	f := Figure{Name: "fig10-training", Title: "Figure 10: mean score of valid programs during training", Cols: 3}
	for _, task := range ix.tasks {
		d := ix.dir[task]
		p := Panel{Title: task, XLabel: "training iteration", YLabel: scoreLabel("mean score (selection split)", d)}
		for _, a := range ix.arms {
			if s := ix.iterSeries(task, a, meanScore); len(s.X) > 0 {
				p.Series = append(p.Series, s)
			}
		}
		if len(p.Series) > 0 {
			f.Panels = append(f.Panels, p)
		}
	}
	if len(f.Panels) == 0 {
		f.Skip = "no done cell's metrics.jsonl has mean_score (runs without metrics, or written before the field existed)"
	}
	f.Caption = "Per task, each arm's mean score of the iteration's valid programs on the selection split " +
		"(metrics.jsonl's mean_score), per training iteration; " + bandNote + "."
	return f
}

// pairFigure draws rl against an ablation arm on the tasks where both have metrics, with one
// panel per measure.
func (ix *index) pairFigure(f Figure, ablation string, measures []measure) Figure {
	f.Cols = len(measures)
	for _, task := range ix.tasks {
		var row []Panel
		for _, m := range measures {
			p := Panel{Title: task, XLabel: "training iteration", YLabel: m.label(ix.dir[task]), YMin: m.yMin, YMax: m.yMax}
			for _, a := range []string{"rl", ablation} {
				if s := ix.iterSeries(task, a, m.get); len(s.X) > 0 {
					p.Series = append(p.Series, s)
				}
			}
			row = append(row, p)
		}
		if len(row[0].Series) == 2 || len(row[len(row)-1].Series) == 2 {
			f.Panels = append(f.Panels, row...)
		}
	}
	if len(f.Panels) == 0 {
		switch {
		case !ix.has("rl") || !ix.has(ablation):
			f.Skip = fmt.Sprintf("the spec does not have both the rl and %s arms", ablation)
		default:
			f.Skip = fmt.Sprintf("no task has training metrics from done cells of both rl and %s", ablation)
		}
	}
	return f
}

type measure struct {
	get        func(runrecord.IterationMetrics) *float64
	label      func(Direction) string
	yMin, yMax *float64
}

func (ix *index) fig8() Figure {
	f := Figure{Name: "fig8-duration", Title: "Figure 8: mean execution time per iteration, rl vs no-duration-weight"}
	f = ix.pairFigure(f, "no-duration-weight", []measure{
		{meanDuration, func(Direction) string { return "mean execution seconds per program" }, ptr(0), nil}})
	if f.Cols == 1 && len(f.Panels) > 1 {
		f.Cols = 2
	}
	f.Caption = "Per ablation task, the mean execution time of the iteration's programs (metrics.jsonl's mean_duration_s) " +
		"with the duration-aware gradient weight (rl) and without it (no-duration-weight); " + bandNote + "."
	return f
}

func (ix *index) fig9() Figure {
	f := Figure{Name: "fig9-instrumentation", Title: "Figure 9: mean score and valid rate per iteration, rl vs no-instrumentation"}
	f = ix.pairFigure(f, "no-instrumentation", []measure{
		{meanScore, func(d Direction) string { return scoreLabel("mean score (selection split)", d) }, nil, nil},
		{validRate, func(Direction) string { return "valid-program rate (higher is better)" }, ptr(0), ptr(1)}})
	f.Caption = "Per ablation task (one row each), the mean score of valid programs (left) and the valid-program rate " +
		"(right) per iteration, with the instrumenter's partial credit (rl) and without it (no-instrumentation); " + bandNote + "."
	return f
}

// Figure geometry, in the PNG.
const (
	panelW  = 4.6 * vg.Inch
	panelH  = 3.3 * vg.Inch
	titleH  = 0.5 * vg.Inch
	legendL = 0.28 * vg.Inch // one line of the legend
	dpi     = 96
)

type legendEntry struct {
	label string
	col   int
}

// PNG draws the figure.
func (f Figure) PNG() ([]byte, error) {
	if f.Skip != "" || len(f.Panels) == 0 {
		return nil, fmt.Errorf("figure %s is skipped: %s", f.Name, f.Skip)
	}
	cols := max(1, min(f.Cols, len(f.Panels)))
	rows := (len(f.Panels) + cols - 1) / cols
	w := vg.Length(cols) * panelW
	var entries []legendEntry
	for _, p := range f.Panels {
		for _, s := range p.Series {
			if !slices.ContainsFunc(entries, func(e legendEntry) bool { return e.label == s.Label }) {
				entries = append(entries, legendEntry{s.Label, s.Color})
			}
		}
	}
	legStyle := textStyle(11, draw.XLeft)
	lines := legendLines(entries, legStyle, w)
	legH := vg.Length(len(lines)+1) * legendL
	h := titleH + legH + vg.Length(rows)*panelH
	img := vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(dpi))
	dc := draw.New(img)

	dc.FillText(textStyle(15, draw.XCenter), vg.Point{X: w / 2, Y: h - 0.32*vg.Inch}, f.Title)
	y := h - titleH
	for _, line := range lines {
		drawLegendLine(dc, line, legStyle, y-legendL/2, w)
		y -= legendL
	}
	note := legStyle
	note.Color = color.Gray{Y: 0x55}
	note.XAlign = draw.XCenter
	note.YAlign = draw.YCenter
	dc.FillText(note, vg.Point{X: w / 2, Y: y - legendL/2}, bandNote)

	plots := make([][]*plot.Plot, rows)
	for r := range plots {
		plots[r] = make([]*plot.Plot, cols)
	}
	for i, p := range f.Panels {
		pl, err := p.plot()
		if err != nil {
			return nil, fmt.Errorf("figure %s, panel %s: %w", f.Name, p.Title, err)
		}
		plots[i/cols][i%cols] = pl
	}
	area := draw.Crop(dc, 0, 0, 0, -(titleH + legH))
	tiles := draw.Tiles{Rows: rows, Cols: cols, PadX: 0.25 * vg.Inch, PadY: 0.2 * vg.Inch,
		PadTop: 0.05 * vg.Inch, PadBottom: 0.1 * vg.Inch, PadLeft: 0.1 * vg.Inch, PadRight: 0.2 * vg.Inch}
	canvases := plot.Align(plots, tiles, area)
	for r := range plots {
		for c := range plots[r] {
			if plots[r][c] != nil {
				plots[r][c].Draw(canvases[r][c])
			}
		}
	}
	var buf bytes.Buffer
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(&buf); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func textStyle(size vg.Length, align text.XAlignment) text.Style {
	return text.Style{Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler, XAlign: align,
		YAlign: draw.YCenter, Color: color.Black}
}

const (
	thumbW   = 22 * vg.Millimeter / 4
	entryGap = 0.25 * vg.Inch
)

func entryWidth(e legendEntry, sty text.Style) vg.Length {
	return 4*thumbW/2 + sty.Width(e.label) + entryGap
}

// legendLines wraps the entries into lines that fit width w.
func legendLines(entries []legendEntry, sty text.Style, w vg.Length) [][]legendEntry {
	var lines [][]legendEntry
	var cur []legendEntry
	var used vg.Length
	for _, e := range entries {
		ew := entryWidth(e, sty)
		if len(cur) > 0 && used+ew > w-0.4*vg.Inch {
			lines = append(lines, cur)
			cur, used = nil, 0
		}
		cur = append(cur, e)
		used += ew
	}
	if len(cur) > 0 {
		lines = append(lines, cur)
	}
	return lines
}

// drawLegendLine draws one centred line of legend entries: a coloured line, then the label.
func drawLegendLine(dc draw.Canvas, line []legendEntry, sty text.Style, y, w vg.Length) {
	var total vg.Length
	for _, e := range line {
		total += entryWidth(e, sty)
	}
	x := (w-total)/2 + entryGap/2
	for _, e := range line {
		ls := draw.LineStyle{Color: colour(e.col), Width: vg.Points(2.5)}
		dc.StrokeLine2(ls, x, y, x+2*thumbW, y)
		dc.FillText(sty, vg.Point{X: x + 2*thumbW + thumbW/2, Y: y}, e.label)
		x += entryWidth(e, sty)
	}
}

// plot makes the panel's plot: bands first, then lines and points.
func (p Panel) plot() (*plot.Plot, error) {
	pl := plot.New()
	pl.Title.Text = p.Title
	pl.Title.TextStyle.Font.Size = 12
	pl.X.Label.Text = p.XLabel
	pl.Y.Label.Text = p.YLabel
	pl.X.Label.TextStyle.Font.Size = 10
	pl.Y.Label.TextStyle.Font.Size = 10
	pl.X.Tick.Label.Font.Size = 9
	pl.Y.Tick.Label.Font.Size = 9
	pl.Add(plotter.NewGrid())
	if p.YMin != nil {
		pl.Y.Min = *p.YMin
	}
	if p.YMax != nil {
		pl.Y.Max = *p.YMax
	}
	for _, s := range p.Series {
		if band := s.band(); band != nil {
			poly, err := plotter.NewPolygon(band)
			if err != nil {
				return nil, err
			}
			c := colour(s.Color)
			c.A = 0x38
			poly.Color = c
			poly.LineStyle.Width = 0
			pl.Add(poly)
		}
	}
	for _, s := range p.Series {
		xys := make(plotter.XYs, len(s.X))
		for i := range s.X {
			xys[i] = plotter.XY{X: s.X[i], Y: s.Mean[i]}
		}
		line, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, err
		}
		line.Color = colour(s.Color)
		line.Width = vg.Points(2)
		if s.Step {
			line.StepStyle = plotter.PostStep
		}
		pts.Color = colour(s.Color)
		pts.Shape = draw.CircleGlyph{}
		pts.Radius = vg.Points(2)
		pl.Add(line, pts)
	}
	return pl, nil
}

// band is the polygon of Lo..Hi (following the steps for a step series), or nil when flat.
func (s Series) band() plotter.XYs {
	if len(s.X) < 2 || slices.Equal(s.Lo, s.Hi) {
		return nil
	}
	var upper, lower plotter.XYs
	for i := range s.X {
		if s.Step && i > 0 {
			upper = append(upper, plotter.XY{X: s.X[i], Y: s.Hi[i-1]})
			lower = append(lower, plotter.XY{X: s.X[i], Y: s.Lo[i-1]})
		}
		upper = append(upper, plotter.XY{X: s.X[i], Y: s.Hi[i]})
		lower = append(lower, plotter.XY{X: s.X[i], Y: s.Lo[i]})
	}
	slices.Reverse(lower)
	return append(upper, lower...)
}

// String is a one-line description of a series, for tests and debugging.
func (s Series) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s:", s.Label)
	for i := range s.X {
		fmt.Fprintf(&b, " %.6g=%.6g[%.6g,%.6g]", s.X[i], s.Mean[i], s.Lo[i], s.Hi[i])
	}
	return b.String()
}

func ptr(v float64) *float64 { return &v }
