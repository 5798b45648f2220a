// Writing plots to files: the formats, SVG text as outlines, and atomic
// writes.

package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"golang.org/x/image/font/sfnt"
	"golang.org/x/image/math/fixed"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgsvg"
)

// Drawer is anything Save renders: a *plot.Plot, or a Figure (a plot
// with its legend beside or below it).
type Drawer interface {
	Draw(c draw.Canvas)
}

// Save renders d at w×h into each of paths, the format chosen by the
// extension (.png, .svg, ...). An SVG draws its text as glyph outlines
// (outlineCanvas), so that it looks the same where the plot's font is not
// installed. Each file is written to a temporary file in its directory and
// renamed into place, so none is ever half-written.
func Save(d Drawer, w, h vg.Length, paths ...string) error {
	for _, path := range paths {
		format := strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
		var buf bytes.Buffer
		if err := render(d, w, h, format, &buf); err != nil {
			return fmt.Errorf("report: %s: %w", path, err)
		}
		if err := WriteFile(path, buf.Bytes()); err != nil {
			return err
		}
	}
	return nil
}

// render draws d at w×h in format to out.
func render(d Drawer, w, h vg.Length, format string, out io.Writer) error {
	if format == "svg" {
		c := vgsvg.New(w, h)
		d.Draw(draw.New(&outlineCanvas{Canvas: c, glyphs: map[glyphKey]vg.Path{}}))
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return err
		}
		_, err := out.Write(shareGlyphs(buf.Bytes()))
		return err
	}
	c, err := draw.NewFormattedCanvas(w, h, format)
	if err != nil {
		return err
	}
	d.Draw(draw.New(c))
	_, err = c.WriteTo(out)
	return err
}

// outlineCanvas is an SVG canvas that fills each glyph's outline instead
// of writing <text>. An SVG's text is set in whatever font the viewer has
// under the family's name: without Liberation Serif (the plots' font) a
// browser substitutes one with other widths, and labels that were laid out
// not to overlap or clip then do. Embedding the font instead would add the
// whole font file (about 400 kB) to every plot; outlines cost a few
// hundred bytes per glyph drawn. The PNG beside each SVG keeps nothing
// else from a reader: the text timeline carries the same words as text.
type outlineCanvas struct {
	*vgsvg.Canvas
	buf    sfnt.Buffer
	glyphs map[glyphKey]vg.Path // each glyph's outline at the origin, per font and size
}

// glyphKey names one glyph of one font at one size.
type glyphKey struct {
	font string
	size vg.Length
	idx  sfnt.GlyphIndex
}

// FillString fills the outlines of str's glyphs, set from pt on the
// baseline with the advances and kerning font.Face.Width measures (so
// the outlines take exactly the width the layout measured).
func (c *outlineCanvas) FillString(f font.Face, pt vg.Point, str string) {
	upem := fixed.Int26_6(f.Face.UnitsPerEm())
	scale := f.Font.Size / vg.Length(upem) // points per font unit
	x := vg.Length(0)
	var prev sfnt.GlyphIndex
	for i, r := range []rune(str) {
		idx, err := f.Face.GlyphIndex(&c.buf, r)
		if err != nil {
			continue
		}
		if i > 0 {
			if k, err := f.Face.Kern(&c.buf, prev, idx, upem, 0); err == nil {
				x += vg.Length(k) * scale
			}
		}
		if p := c.glyph(f, idx, upem, scale); len(p) > 0 {
			c.Push()
			c.Translate(vg.Point{X: pt.X + x, Y: pt.Y})
			c.Fill(p)
			c.Pop()
		}
		if adv, err := f.Face.GlyphAdvance(&c.buf, idx, upem, 0); err == nil {
			x += vg.Length(adv) * scale
		}
		prev = idx
	}
}

// glyph is idx's outline in f, in points from its origin on the baseline
// (y up, as the canvas has it; the font's y grows down).
func (c *outlineCanvas) glyph(f font.Face, idx sfnt.GlyphIndex, upem fixed.Int26_6, scale vg.Length) vg.Path {
	key := glyphKey{f.Name(), f.Font.Size, idx}
	if p, ok := c.glyphs[key]; ok {
		return p
	}
	segs, err := f.Face.LoadGlyph(&c.buf, idx, upem, nil)
	var p vg.Path
	if err == nil {
		pt := func(q fixed.Point26_6) vg.Point {
			return vg.Point{X: vg.Length(q.X) * scale, Y: -vg.Length(q.Y) * scale}
		}
		for _, s := range segs {
			switch s.Op {
			case sfnt.SegmentOpMoveTo:
				if len(p) > 0 {
					p.Close()
				}
				p.Move(pt(s.Args[0]))
			case sfnt.SegmentOpLineTo:
				p.Line(pt(s.Args[0]))
			case sfnt.SegmentOpQuadTo:
				p.QuadTo(pt(s.Args[0]), pt(s.Args[1]))
			case sfnt.SegmentOpCubeTo:
				p.CubeTo(pt(s.Args[0]), pt(s.Args[1]), pt(s.Args[2]))
			}
		}
		if len(p) > 0 {
			p.Close()
		}
	}
	c.glyphs[key] = p
	return p
}

// shareGlyphs writes each distinct path drawn under a translation once,
// in the SVG's <defs>, and each drawing of it as a <use> with that
// translation and style: a glyph's outline is then written once, not once
// per letter, which makes an outlined plot about a third of the size. The
// rewrite draws the same picture: a <use> draws its path in its own
// coordinates, transformed and styled as the group and the path were.
//
// Such a drawing is how vgsvg writes a path filled under a translation
// (outlineCanvas's glyphs): a group with the translation, the path (its
// style, if not the default black fill, after it), the group's end
// (translated). They are found by a scan, left to right, each where the
// last ended: a regular expression took a sixth of the time of writing a
// run's files.
func shareGlyphs(svg []byte) []byte {
	ids := map[string]int{}
	var defs, body bytes.Buffer
	last := 0 // svg[:last] is in body, rewritten
	for i := 0; ; {
		k := bytes.Index(svg[i:], []byte(groupOpen))
		if k < 0 {
			break
		}
		at := i + k
		g, ok := translated(svg[at:])
		if !ok {
			i = at + 1
			continue
		}
		id, seen := ids[string(g.d)]
		if !seen {
			id = len(ids)
			ids[string(g.d)] = id
			fmt.Fprintf(&defs, "<path id=\"g%d\" d=\"%s\"/>\n", id, g.d)
		}
		body.Write(svg[last:at])
		fmt.Fprintf(&body, "<use xlink:href=\"#g%d\" transform=\"%s\"%s/>\n", id, g.transform, bytes.TrimRight(g.style, " "))
		last = at + g.n
		i = last
	}
	if len(ids) == 0 {
		return svg
	}
	body.Write(svg[last:])
	b := body.Bytes()
	// The defs go after the <svg> element's opening tag.
	i := bytes.Index(b, []byte(">\n<g "))
	if i < 0 {
		return svg // not the shape gonum writes: leave it whole
	}
	end := i + 2
	return slices.Concat(b[:end], []byte("<defs>\n"), defs.Bytes(), []byte("</defs>\n"), b[end:])
}

// groupOpen begins a translated path (translated).
const groupOpen = `<g transform="`

// translatedGroup is a translated path: its translation, its path data
// and the attributes after the data (its style), and its length in bytes.
type translatedGroup struct {
	transform, d, style []byte
	n                   int
}

// translated reads the translated path s begins with, if it does:
// `<g transform="T">` newline `<path d="D"S/>` newline `</g>` newline,
// where T and D hold no double quote and S no '>'.
func translated(s []byte) (g translatedGroup, ok bool) {
	rest := s[len(groupOpen):]
	q := bytes.IndexByte(rest, '"')
	if q < 0 {
		return g, false
	}
	g.transform, rest = rest[:q], rest[q:]
	const pathOpen = "\">\n<path d=\""
	if !bytes.HasPrefix(rest, []byte(pathOpen)) {
		return g, false
	}
	rest = rest[len(pathOpen):]
	if q = bytes.IndexByte(rest, '"'); q < 0 {
		return g, false
	}
	g.d, rest = rest[:q], rest[q+1:]
	gt := bytes.IndexByte(rest, '>')
	if gt < 1 || rest[gt-1] != '/' {
		return g, false
	}
	g.style, rest = rest[:gt-1], rest[gt+1:]
	const groupClose = "\n</g>\n"
	if !bytes.HasPrefix(rest, []byte(groupClose)) {
		return g, false
	}
	g.n = len(s) - len(rest) + len(groupClose)
	return g, true
}

// temps gates the making of temporary files and directories (TempFile,
// TempDir): once StopTemps has closed it, none is made, so that a caller
// that then removes those there are (a second Ctrl-C, before the process
// exits) leaves none behind. Without it a writer could make one between
// the removal and the exit: a hidden file left in the user's directory.
var temps struct {
	mu      sync.Mutex
	stopped bool
}

// ErrTempsStopped is what TempFile and TempDir return after StopTemps.
var ErrTempsStopped = errors.New("report: no more temporary files: the process is stopping")

// StopTemps makes every later TempFile and TempDir fail with
// ErrTempsStopped; it returns once no call is making one.
func StopTemps() {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	temps.stopped = true
}

// TempFile is os.CreateTemp, unless StopTemps was called.
func TempFile(dir, pattern string) (*os.File, error) { return gated(dir, pattern, os.CreateTemp) }

// TempDir is os.MkdirTemp, unless StopTemps was called.
func TempDir(dir, pattern string) (string, error) { return gated(dir, pattern, os.MkdirTemp) }

// gated makes a temporary through mk while the gate is open, holding it
// so that StopTemps waits for the making under way.
func gated[T any](dir, pattern string, mk func(dir, pattern string) (T, error)) (T, error) {
	temps.mu.Lock()
	defer temps.mu.Unlock()
	if temps.stopped {
		var none T
		return none, ErrTempsStopped
	}
	return mk(dir, pattern)
}

// WriteFile writes data to path through a temporary file in the same
// directory and a rename, creating the directory if needed: a reader (or
// a crash) never sees a half-written file.
func WriteFile(path string, data []byte) error {
	return writeVia(path, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// writeVia is WriteFile with the contents written by fill, as they come:
// fill may stream them, the file appears whole or not at all.
func writeVia(path string, fill func(w io.Writer) error) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := TempFile(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
		}
	}()
	if err := f.Chmod(0o644); err != nil {
		return err
	}
	if err := fill(f); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
