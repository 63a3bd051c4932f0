package monitor

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Error is one sentence the service logged at error level, with how
// often and when. Repeats of a sentence are counted on one Error.
type Error struct {
	Message string    `json:"message"` // "search: search flush failed"
	Count   int64     `json:"count"`
	FirstAt time.Time `json:"firstAt"`
	LastAt  time.Time `json:"lastAt"`
}

// Errors keeps the last distinct error sentences of the service's log.
// A sentence is the line's message (a constant of the code, never a
// value), after its component, with the few attributes that name parts
// of the service (sentenceAttrs): never an error's text, a user id, an
// address or anything else a line carries beside. It is safe for
// concurrent use.
type Errors struct {
	mu    sync.Mutex
	last  []Error // oldest first, at most max
	max   int
	total int64
	now   func() time.Time
}

// maxMessage bounds a sentence, in bytes.
const maxMessage = 200

// NewErrors keeps the last max distinct sentences; now is the clock
// (time.Now if nil).
func NewErrors(max int, now func() time.Time) *Errors {
	if now == nil {
		now = time.Now
	}
	return &Errors{max: max, now: now}
}

// Last returns the sentences kept, the newest first, and how many error
// lines were logged since the start.
func (e *Errors) Last() ([]Error, int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := slices.Clone(e.last)
	slices.Reverse(out)
	if out == nil {
		out = []Error{}
	}
	return out, e.total
}

func (e *Errors) add(msg string) {
	now := e.now().UTC()
	e.mu.Lock()
	defer e.mu.Unlock()
	e.total++
	if i := slices.IndexFunc(e.last, func(x Error) bool { return x.Message == msg }); i >= 0 {
		x := e.last[i]
		x.Count++
		x.LastAt = now
		e.last = append(slices.Delete(e.last, i, i+1), x)
		return
	}
	if len(e.last) == e.max {
		e.last = slices.Delete(e.last, 0, 1)
	}
	e.last = append(e.last, Error{Message: msg, Count: 1, FirstAt: now, LastAt: now})
}

// Handler returns next with e noting every record at error level.
func (e *Errors) Handler(next slog.Handler) slog.Handler {
	return &errorHandler{next: next, errs: e}
}

// sentenceAttrs are the attributes a sentence keeps: each names a part of
// the service (an operation such as item.search, an HTTP status, an
// integration's domain, a configuration variable), never a person's data.
var sentenceAttrs = []string{"operation", "status", "integration", "variable"}

type errorHandler struct {
	next      slog.Handler
	errs      *Errors
	component string // from With("component", …)
	grouped   bool   // attributes after WithGroup are a group's, not the line's
}

func (h *errorHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelError || h.next.Enabled(ctx, l)
}

func (h *errorHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelError {
		h.errs.add(h.sentence(r))
	}
	if !h.next.Enabled(ctx, r.Level) {
		return nil
	}
	return h.next.Handle(ctx, r)
}

// sentence is "component: message (operation item.search, status 500)".
func (h *errorHandler) sentence(r slog.Record) string {
	var b strings.Builder
	if h.component != "" {
		b.WriteString(h.component + ": ")
	}
	b.WriteString(r.Message)
	var extra []string
	if !h.grouped {
		r.Attrs(func(a slog.Attr) bool {
			if slices.Contains(sentenceAttrs, a.Key) {
				extra = append(extra, a.Key+" "+fmt.Sprint(a.Value.Resolve().Any()))
			}
			return true
		})
	}
	if len(extra) > 0 {
		b.WriteString(" (" + strings.Join(extra, ", ") + ")")
	}
	s := strings.ToValidUTF8(b.String(), "")
	if len(s) > maxMessage {
		s = strings.ToValidUTF8(s[:maxMessage], "") + "…"
	}
	return s
}

func (h *errorHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.next = h.next.WithAttrs(as)
	if !h.grouped {
		for _, a := range as {
			if a.Key == "component" {
				c.component = a.Value.String()
			}
		}
	}
	return &c
}

func (h *errorHandler) WithGroup(name string) slog.Handler {
	c := *h
	c.next = h.next.WithGroup(name)
	c.grouped = c.grouped || name != ""
	return &c
}
