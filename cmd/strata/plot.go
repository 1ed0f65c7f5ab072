package main

import (
	"fmt"
	"image/color"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

// Plotting helpers shared by pool-sweep and bench sweep.

func plotColor(i int) color.Color {
	palette := []color.Color{
		color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff},
		color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff},
		color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff},
		color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff},
		// More for plots with many lines (a size sweep of every engine and
		// several R values and page sizes).
		color.RGBA{R: 0x8c, G: 0x56, B: 0x4b, A: 0xff},
		color.RGBA{R: 0xe3, G: 0x77, B: 0xc2, A: 0xff},
		color.RGBA{R: 0x7f, G: 0x7f, B: 0x7f, A: 0xff},
		color.RGBA{R: 0xbc, G: 0xbd, B: 0x22, A: 0xff},
		color.RGBA{R: 0x17, G: 0xbe, B: 0xcf, A: 0xff},
	}
	return palette[i%len(palette)]
}

// addLinePoints draws xys as a line with markers in the i-th color.
func addLinePoints(p *plot.Plot, xys plotter.XYs, i int, label string) error {
	line, pts, err := plotter.NewLinePoints(xys)
	if err != nil {
		return fmt.Errorf("plot %s: %w", label, err)
	}
	line.Color, pts.Color = plotColor(i), plotColor(i)
	p.Add(line, pts)
	p.Legend.Add(label, line, pts)
	return nil
}

// addLevel draws a dashed horizontal line at y from x0 to x1: a reference
// that is not a function of the x axis (automatic tuning's result).
func addLevel(p *plot.Plot, y, x0, x1 float64, i int, label string) error {
	l, err := plotter.NewLine(plotter.XYs{{X: x0, Y: y}, {X: x1, Y: y}})
	if err != nil {
		return fmt.Errorf("plot %s: %w", label, err)
	}
	l.Color = plotColor(i)
	l.Dashes = []vg.Length{vg.Points(6), vg.Points(3)}
	p.Add(l)
	p.Legend.Add(label, l)
	return nil
}

// saveStacked writes plots one above the other, their x axes aligned, as a
// PNG of the given size.
func saveStacked(path string, width, height vg.Length, plots ...*plot.Plot) error {
	img := vgimg.New(width, height)
	dc := draw.New(img)
	rows := make([][]*plot.Plot, len(plots))
	for i, p := range plots {
		rows[i] = []*plot.Plot{p}
	}
	tiles := draw.Tiles{Rows: len(plots), Cols: 1, PadX: vg.Millimeter * 4, PadY: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align(rows, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
