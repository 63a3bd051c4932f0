package httpx

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// maxWaitingLines bounds the access lines held back: the request that
// fills the batch writes it, so a burst can never grow it further.
const maxWaitingLines = 256

// accessLog writes one line per request. With a delay it holds the lines
// back and writes them together, from a timer, at most delay after the
// first: formatting a line is a few microseconds of code that has nothing
// to do with answering, and doing it for many lines at once, off the
// request's path, costs the requests far less than doing it in each (the
// ratio in BenchmarkProfileOverHTTP). Lines still waiting when the process
// dies without a shutdown are lost; errors are never held back, only
// these lines.
type accessLog struct {
	h     slog.Handler
	delay time.Duration

	mu      sync.Mutex
	waiting []slog.Record
	spare   []slog.Record // the last batch's slice, for the next one
	timer   *time.Timer   // armed while lines wait

	out sync.Mutex // held while a batch is written, so batches keep their order
}

// request logs a finished request. The record is handed to the handler
// directly, as slog's documentation allows, rather than through
// Logger.LogAttrs, which would take a stack trace (runtime.Callers) for a
// source position the line never shows. Its time is end, the end of the
// request, which gives the duration as well.
func (l *accessLog) request(ctx context.Context, info *Info, end time.Time, method, pattern string, status int) {
	if !l.h.Enabled(ctx, slog.LevelInfo) {
		return
	}
	rec := slog.NewRecord(end, slog.LevelInfo, "request", 0)
	rec.AddAttrs(slog.String("request_id", info.ID), slog.String("method", method), slog.String("pattern", pattern),
		slog.Int("status", status), slog.Float64("duration_ms", float64(end.Sub(info.Start))/float64(time.Millisecond)))
	if l.delay <= 0 {
		l.h.Handle(ctx, rec) // a handler that cannot write has nowhere to report it either
		return
	}
	l.mu.Lock()
	l.waiting = append(l.waiting, rec) // five attributes: the record holds them inline
	n := len(l.waiting)
	if n == 1 {
		if l.timer == nil {
			l.timer = time.AfterFunc(l.delay, l.flush)
		} else {
			l.timer.Reset(l.delay)
		}
	}
	l.mu.Unlock()
	if n >= maxWaitingLines {
		l.flush()
	}
}

// flush writes the waiting lines, in the order their requests ended.
func (l *accessLog) flush() {
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
