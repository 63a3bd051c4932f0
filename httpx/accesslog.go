package httpx

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Bounds on the access lines held back. At batchLines the timer is made to
// fire at once, so a busy server writes a batch every batchLines requests
// from the timer's goroutine; if that goroutine still falls behind (the
// log's destination blocks, say), the request that brings the count to
// maxWaitingLines writes the batch itself, so the lines never take more
// than a bounded amount of memory and are never dropped.
const (
	batchLines      = 256
	maxWaitingLines = 4 * batchLines
)

// timer is the part of *time.Timer that accessLog uses; tests replace it.
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// accessLog writes one line per request. With a delay it holds the lines
// back and has a timer write them, at most delay after the first: a line
// takes a few microseconds to format, code that has nothing to do with the
// answer, and formatting many at once from another goroutine costs the
// requests far less than formatting each in its request (the ratio of
// BenchmarkProfileOverHTTP). So an access line can appear after lines that
// a later request logged at once; its time= is the end of its request.
// Lines still waiting when the process dies without a shutdown are lost;
// no other line is ever held back.
type accessLog struct {
	h     slog.Handler
	delay time.Duration
	mode  AccessLogMode
	slow  time.Duration // AccessLogSummary: a request at least this long gets its line
	sum   *summary      // AccessLogSummary only
	// afterFunc is time.AfterFunc, or a test's stand-in.
	afterFunc func(d time.Duration, f func()) timer

	mu      sync.Mutex
	waiting []slog.Record
	spare   []slog.Record // the last batch's slice, for the next one
	timer   timer         // armed while lines wait

	out sync.Mutex // held while a batch is written, so batches keep their order
}

// request logs a finished request. The record is handed to the handler
// directly, as slog's documentation allows, rather than through
// Logger.LogAttrs, which would take a stack trace (runtime.Callers) for a
// source position the line never shows. Its time is end, the end of the
// request, which gives the duration as well.
func (l *accessLog) request(ctx context.Context, info *Info, end time.Time, method, pattern string, status int) {
	if l.mode == AccessLogOff || !l.h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	if l.mode == AccessLogSummary {
		l.sum.count(end, pattern, status)
		if status < 500 && end.Sub(info.Start) < l.slow {
			return
		}
	}
	rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", info.ID), slog.String("method", method), slog.String("pattern", pattern),
		slog.Int("status", status), slog.Float64("duration_ms", float64(end.Sub(info.Start))/float64(time.Millisecond)))
	if l.delay <= 0 || l.mode == AccessLogSummary {
		l.h.Handle(ctx, rec) // a handler that cannot write has nowhere to report it either
		return
	}
	l.mu.Lock()
	l.waiting = append(l.waiting, rec) // five attributes: the record holds them inline
	n := len(l.waiting)
	switch {
	case n == 1 && l.timer == nil:
		afterFunc := l.afterFunc
		if afterFunc == nil {
			afterFunc = func(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }
		}
		l.timer = afterFunc(l.delay, l.flush)
	case n == 1:
		l.timer.Reset(l.delay)
	case n == batchLines:
		l.timer.Reset(0)
	}
	l.mu.Unlock()
	if n >= maxWaitingLines {
		l.flush()
	}
}

// flush writes the waiting lines, in the order their requests ended, and
// the summary of the requests counted so far.
func (l *accessLog) flush() {
	if l.sum != nil {
		defer l.sum.write(l.sum.now(), true)
	}
	l.out.Lock()
	defer l.out.Unlock()
	l.mu.Lock()
	batch := l.waiting
	l.waiting, l.spare = l.spare, nil
	if l.timer != nil {
		l.timer.Stop()
	}
	l.mu.Unlock()
	for _, rec := range batch {
		l.h.Handle(context.Background(), rec)
	}
	clear(batch)
	l.mu.Lock()
	l.spare = batch[:0]
	l.mu.Unlock()
}
