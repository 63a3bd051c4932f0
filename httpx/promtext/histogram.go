package promtext

import (
	"math"
	"sync/atomic"
	"time"
)

// DurationHistogram counts durations into fixed buckets. Observe takes no
// lock and allocates nothing: one atomic add for the bucket, one for the
// sum. The zero value is not usable; make one with NewDurationHistogram.
type DurationHistogram struct {
	bounds []float64       // upper bounds in seconds, ascending
	limits []time.Duration // the same bounds as durations
	counts []atomic.Uint64 // per bucket (not cumulative); the last is above every bound
	nanos  atomic.Int64    // the sum of the durations observed
}

// NewDurationHistogram returns a histogram whose buckets end at bounds, in
// seconds. Bounds must be positive, finite and ascending (the buckets are
// fixed by the code that makes them); otherwise it panics.
func NewDurationHistogram(bounds ...float64) *DurationHistogram {
	h := &DurationHistogram{bounds: bounds, limits: make([]time.Duration, len(bounds)),
		counts: make([]atomic.Uint64, len(bounds)+1)}
	for i, b := range bounds {
		if b <= 0 || math.IsInf(b, 0) || math.IsNaN(b) || (i > 0 && b <= bounds[i-1]) {
			panic(errBounds)
		}
		h.limits[i] = time.Duration(b * float64(time.Second))
	}
	return h
}

// Observe counts d: in the first bucket whose bound it does not exceed.
func (h *DurationHistogram) Observe(d time.Duration) {
	i := 0
	for i < len(h.limits) && d > h.limits[i] {
		i++
	}
	h.counts[i].Add(1)
	h.nanos.Add(int64(d))
}

// HistogramSnapshot is a histogram as Write writes it: the cumulative
// count at each bound, the count of everything (the +Inf bucket) and the
// sum of what was observed.
type HistogramSnapshot struct {
	Bounds []float64 // upper bounds, ascending
	Counts []uint64  // cumulative: Counts[i] observations at or below Bounds[i]
	Count  uint64
	Sum    float64
}

// Snapshot reads the histogram. Observations that race with it land in
// the snapshot or the next; its buckets and count always agree.
func (h *DurationHistogram) Snapshot() HistogramSnapshot {
	s := HistogramSnapshot{Bounds: h.bounds, Counts: make([]uint64, len(h.bounds))}
	for i := range h.counts {
		s.Count += h.counts[i].Load()
		if i < len(s.Counts) {
			s.Counts[i] = s.Count
		}
	}
	s.Sum = time.Duration(h.nanos.Load()).Seconds()
	return s
}
