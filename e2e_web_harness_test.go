package main

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// What TestBrowser's steps share: running a step, and checking what the
// page shows.

// cardJS is a JavaScript expression for the card of the connection whose
// service's name starts with name.
func cardJS(name string) string {
	n, _ := json.Marshal(name)
	return `[...document.querySelectorAll('li[data-record]')].find(li => li.querySelector('h3').textContent.startsWith(` + string(n) + `))`
}

// webTest is what TestBrowser's steps share: the browser, the server's
// address, and where screenshots go.
type webTest struct {
	t     *testing.T
	b     *browser
	base  string
	shots string // WEB_SHOTS: keep a screenshot of each step here
}

// step runs one step of the test, fails it on any error, exception,
// console complaint or CSP violation, and keeps its screenshot.
func (w *webTest) step(name string, fn func() error) {
	w.t.Helper()
	start := time.Now()
	if err := fn(); err != nil {
		w.t.Fatalf("step %q: %v", name, err)
	}
	w.t.Logf("step %q: done in %v", name, time.Since(start).Round(time.Millisecond))
	var violations []string
	if err := w.b.eval("window.__violations || []", &violations); err != nil {
		w.t.Fatalf("step %q: read violations: %v", name, err)
	}
	if p := w.b.takeProblems(); len(p) > 0 || len(violations) > 0 {
		w.t.Fatalf("step %q: the page reported problems: %q; CSP violations: %q", name, p, violations)
	}
	if w.shots != "" {
		if raw, err := w.b.screenshot(); err == nil {
			if small, err := fewColours(raw); err == nil {
				raw = small
			}
			os.WriteFile(filepath.Join(w.shots, strings.ReplaceAll(name, " ", "-")+".png"), raw, 0o644)
		}
	}
}

// fewColours re-encodes a screenshot with its 256 most used colours, each
// other pixel taking the nearest of them: a page of text looks the same
// (only the edges of letters have rarer shades) in a third of the bytes.
func fewColours(raw []byte) ([]byte, error) {
	img, err := png.Decode(bytes.NewReader(raw))
	if err != nil {
		return nil, err
	}
	r := img.Bounds()
	rgba := image.NewRGBA(r)
	draw.Draw(rgba, r, img, r.Min, draw.Src)
	pixel := func(i int) uint32 { return binary.BigEndian.Uint32(rgba.Pix[i : i+4]) }
	count := map[uint32]int{}
	for i := 0; i < len(rgba.Pix); i += 4 {
		count[pixel(i)]++
	}
	used := slices.SortedFunc(maps.Keys(count), func(a, b uint32) int {
		if n := count[b] - count[a]; n != 0 {
			return n
		}
		return cmp.Compare(a, b)
	})
	pal := make(color.Palette, 0, 256)
	for _, c := range used[:min(256, len(used))] {
		pal = append(pal, color.RGBA{uint8(c >> 24), uint8(c >> 16), uint8(c >> 8), uint8(c)})
	}
	out := image.NewPaletted(r, pal)
	index := map[uint32]uint8{}
	for i := 0; i < len(rgba.Pix); i += 4 {
		c := pixel(i)
		k, ok := index[c]
		if !ok {
			k = uint8(pal.Index(color.RGBA{uint8(c >> 24), uint8(c >> 16), uint8(c >> 8), uint8(c)}))
			index[c] = k
		}
		out.Pix[i/4] = k
	}
	var b bytes.Buffer
	if err := (&png.Encoder{CompressionLevel: png.BestCompression}).Encode(&b, out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// eq checks that the JavaScript expression expr is the string want.
func (w *webTest) eq(what, expr, want string) error {
	var got string
	if err := w.b.eval(expr, &got); err != nil {
		return err
	}
	if got != want {
		return fmt.Errorf("%s: got %q, want %q", what, got, want)
	}
	return nil
}

// clickIn clicks the element matching selector inside the element the
// JavaScript expression parent names, whose text is text.
func (w *webTest) clickIn(parent, selector, text string) error {
	sel, _ := json.Marshal(selector)
	txt, _ := json.Marshal(text)
	return w.b.eval(fmt.Sprintf(`(() => { const el = [...(%s).querySelectorAll(%s)].find(e => e.textContent === %s);
		if (!el) throw new Error('nothing to click: ' + %s + ' ' + %s);
		el.click(); })()`, parent, sel, txt, sel, txt), nil)
}

// waitValue polls the JavaScript expression expr until its value is want
// (a string, or a list of strings); the error says what it was last.
func (w *webTest) waitValue(what, expr string, want any) error {
	var wantV any
	raw, _ := json.Marshal(want)
	json.Unmarshal(raw, &wantV)
	deadline := time.Now().Add(20 * time.Second)
	for {
		var got any
		err := w.b.eval(expr, &got)
		if err == nil && reflect.DeepEqual(got, wantV) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: got %q (err %v), want %q", what, got, err, want)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// viewport sets the page's size in CSS pixels, as a phone or not.
func (w *webTest) viewport(width, height int, mobile bool) {
	w.b.must(w.b.session, "Emulation.setDeviceMetricsOverride", map[string]any{
		"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile}, nil)
}

// picture runs the step whose screenshot is the README's picture: with
// WEB_SHOTS, in a smaller window without scroll bars, so that it stays
// small.
func (w *webTest) picture(name string, fn func() error) {
	if w.shots == "" {
		w.step(name, fn)
		return
	}
	w.viewport(960, 700, false)
	w.b.must(w.b.session, "Emulation.setScrollbarsHidden", map[string]any{"hidden": true}, nil)
	w.step(name, fn)
	w.b.must(w.b.session, "Emulation.setScrollbarsHidden", map[string]any{"hidden": false}, nil)
	w.viewport(1100, 760, false)
}

// darkPhoneShots keeps, with WEB_SHOTS, screenshots of the pages on a
// phone in the dark theme, for a person to look at.
func (w *webTest) darkPhoneShots() {
	if w.shots == "" {
		return
	}
	w.viewport(390, 844, true)
	w.b.must(w.b.session, "Emulation.setEmulatedMedia", map[string]any{
		"features": []map[string]string{{"name": "prefers-color-scheme", "value": "dark"}}}, nil)
	for _, p := range []struct{ name, path, ready string }{
		{"search on a dark phone", "/search?q=regatta", `document.querySelector('.result mark')`},
		{"connections on a dark phone", "/integrations", `document.querySelector('li[data-record]')`},
		{"sessions on a dark phone", "/sessions", `document.querySelector('li[data-session]')`},
		{"administration on a dark phone", "/admin", `document.querySelector('.metrics dl')`},
	} {
		w.step(p.name, func() error {
			if err := w.b.navigate(w.base + p.path); err != nil {
				return err
			}
			return w.b.waitFor("the page", p.ready)
		})
	}
	w.b.must(w.b.session, "Emulation.setEmulatedMedia", map[string]any{"features": []map[string]string{}}, nil)
	w.viewport(1100, 760, false)
}
