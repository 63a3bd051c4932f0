package monitor

import (
	"testing"
	"time"
)

func TestGrowth(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 0, 0, 0, 0, time.UTC)
	var g Growth
	if _, _, ok := g.Rate(); ok {
		t.Fatal("no samples: a rate, want not enough history")
	}
	g.Add(Sample{At: t0, Bytes: 1000})
	g.Add(Sample{At: t0.Add(30 * time.Minute), Bytes: 2000})
	if _, span, ok := g.Rate(); ok || span != 30*time.Minute {
		t.Fatalf("30 minutes: got span %v ok %v, want 30m and not enough history", span, ok)
	}
	g.Add(Sample{At: t0.Add(time.Hour), Bytes: 3000})
	if rate, span, ok := g.Rate(); !ok || span != time.Hour || rate != 2000*24 {
		t.Fatalf("an hour: got %v a day over %v (%v), want 48000 over 1h", rate, span, ok)
	}
	// Past the window the oldest samples go: the rate is the last 24 hours'.
	g.Add(Sample{At: t0.Add(25 * time.Hour), Bytes: 3500})
	if rate, span, ok := g.Rate(); !ok || span != 24*time.Hour || rate != 500 {
		t.Fatalf("25 hours: got %v a day over %v (%v), want 500 over 24h", rate, span, ok)
	}
	if s, ok := g.Latest(); !ok || s.Bytes != 3500 {
		t.Errorf("latest: got %v %v", s, ok)
	}
	// Shrinking is a negative rate.
	g.Add(Sample{At: t0.Add(49 * time.Hour), Bytes: 2500})
	if rate, _, ok := g.Rate(); !ok || rate != -1000 {
		t.Errorf("shrinking: got %v (%v), want -1000", rate, ok)
	}
	// The clock set back starts the history again.
	g.Add(Sample{At: time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC), Bytes: 14000})
	if _, span, ok := g.Rate(); ok || span != 0 {
		t.Errorf("after the clock went back: got span %v ok %v, want not enough history", span, ok)
	}
}
