package monitor

import (
	"sync"
	"time"
)

// Growth keeps samples of the bytes the service's data take, over the
// last Window, to tell how fast they grow: "today's growth". It is safe
// for concurrent use.
type Growth struct {
	mu      sync.Mutex
	samples []Sample // oldest first, within Window of the newest
}

// Sample is the bytes the data took at a time.
type Sample struct {
	At    time.Time
	Bytes int64
}

// Window is how far back growth is measured, and MinSpan how long the
// samples must span before a rate is given: less than an hour of
// history says more about the sync under way than about the days ahead.
const (
	Window  = 24 * time.Hour
	MinSpan = time.Hour
)

// Add notes a sample, dropping those older than Window before it. A
// sample older than the newest (the clock was set back, as a Pi's is
// when it boots in 1970 and NTP corrects it) starts the history again.
func (g *Growth) Add(s Sample) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n := len(g.samples); n > 0 && s.At.Before(g.samples[n-1].At) {
		g.samples = g.samples[:0]
	}
	g.samples = append(g.samples, s)
	i := 0
	for i < len(g.samples) && s.At.Sub(g.samples[i].At) > Window {
		i++
	}
	g.samples = append(g.samples[:0], g.samples[i:]...)
}

// Rate is the growth between the oldest sample and the newest, in bytes
// a day (negative when the data shrank), and the time they span. ok is
// false while they span less than MinSpan: not enough history yet.
func (g *Growth) Rate() (perDay float64, span time.Duration, ok bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.samples) < 2 {
		return 0, 0, false
	}
	first, last := g.samples[0], g.samples[len(g.samples)-1]
	span = last.At.Sub(first.At)
	if span < MinSpan {
		return 0, span, false
	}
	return float64(last.Bytes-first.Bytes) / span.Seconds() * 86400, span, true
}

// Latest is the newest sample, if any.
func (g *Growth) Latest() (Sample, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.samples) == 0 {
		return Sample{}, false
	}
	return g.samples[len(g.samples)-1], true
}
