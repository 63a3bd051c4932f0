package qr

import (
	"bytes"
	"strconv"
)

// quietZone is the light margin around a symbol, in modules, that the
// standard asks for.
const quietZone = 4

// SVG returns the code as an SVG image scaled to fit its box: a white
// square with the quiet zone and one path of the dark modules, each row's
// runs drawn as rectangles, so that it stays sharp at any size.
func (c *Code) SVG() []byte {
	n := strconv.Itoa(c.Size + 2*quietZone)
	var b bytes.Buffer
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ` + n + ` ` + n +
		`" shape-rendering="crispEdges"><rect width="` + n + `" height="` + n + `" fill="#fff"/><path fill="#000" d="`)
	for y := 0; y < c.Size; y++ {
		for x := 0; x < c.Size; {
			if !c.Dark(x, y) {
				x++
				continue
			}
			run := 1
			for x+run < c.Size && c.Dark(x+run, y) {
				run++
			}
			b.WriteString("M" + strconv.Itoa(x+quietZone) + " " + strconv.Itoa(y+quietZone) +
				"h" + strconv.Itoa(run) + "v1h-" + strconv.Itoa(run) + "z")
			x += run
		}
	}
	b.WriteString(`"/></svg>`)
	return b.Bytes()
}
