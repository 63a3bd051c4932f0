package mail

import (
	"strings"
	"testing"
)

// TestHTMLLinear: on input built to defeat them (a quote that never
// closes, a comment or a script that never ends, a tag without its '>'),
// the scans of htmlText read each byte a bounded number of times. The
// bound is on the bytes read, not on the time taken, so 64 KiB tell: a
// scan that started again at each of some 10,000 tags would read
// thousands of times the input.
func TestHTMLLinear(t *testing.T) {
	for _, unit := range []string{`<a x='`, `<a x="`, "<!--", "<script>", `<a x=`, `<a x='y'`, `<a x= "`, "<p>"} {
		s := strings.Repeat(unit, (64<<10)/len(unit))
		if _, read := htmlTextRead(s); read > 3*len(s) {
			t.Errorf("%q repeated to %d bytes: its scans read %d bytes, want at most 3 times the input", unit, len(s), read)
		}
	}
}
