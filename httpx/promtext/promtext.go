// Package promtext writes metrics in the Prometheus text exposition format
// (version 0.0.4), which GET /metrics on METRICS_ADDR serves: counters,
// gauges and histograms, each family with its HELP and TYPE lines, sorted,
// label values escaped. It also holds Histogram, durations counted into
// fixed buckets with atomic counters, cheap enough for every request.
//
// It lives under httpx because it is a response format, like the JSON
// envelope, and like httpx it imports only the standard library; it knows
// nothing of the service's metrics, which package main gathers
// (docs/operations.md, "Health and metrics").
package promtext

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Type is a metric family's type, as its TYPE line names it.
type Type string

// The types a family may have.
const (
	Counter   Type = "counter"
	Gauge     Type = "gauge"
	Histogram Type = "histogram"
)

// Label is one label of a sample. Its value may hold any text: the writer
// escapes it.
type Label struct {
	Name, Value string
}

// Sample is one series of a family: its labels and its value, or for a
// histogram family the snapshot of its buckets.
type Sample struct {
	Labels []Label
	Value  float64
	Hist   HistogramSnapshot // for a Histogram family; Value is unused
}

// Family is a metric family: its name, its help text (one line; a newline
// or backslash in it is escaped), its type and its samples.
type Family struct {
	Name    string
	Help    string
	Type    Type
	Samples []Sample
}

// Write writes fams to w in the text exposition format: families sorted
// by name, each family's samples sorted by their labels, each sample's
// labels sorted by name. It checks names and types, and refuses a family
// name given twice, so that what it writes always parses. fams and their
// samples are sorted in place.
func Write(w io.Writer, fams []Family) error {
	slices.SortFunc(fams, func(a, b Family) int { return strings.Compare(a.Name, b.Name) })
	for i := range fams {
		f := &fams[i]
		if !validName(f.Name, true) {
			return fmt.Errorf("promtext: bad metric name %q", f.Name)
		}
		if i > 0 && fams[i-1].Name == f.Name {
			return fmt.Errorf("promtext: metric %s given twice", f.Name)
		}
		switch f.Type {
		case Counter, Gauge, Histogram:
		default:
			return fmt.Errorf("promtext: metric %s: bad type %q", f.Name, f.Type)
		}
		for j := range f.Samples {
			ls := f.Samples[j].Labels
			slices.SortFunc(ls, func(a, b Label) int { return strings.Compare(a.Name, b.Name) })
			for k, l := range ls {
				if !validName(l.Name, false) || (f.Type == Histogram && l.Name == "le") {
					return fmt.Errorf("promtext: metric %s: bad label name %q", f.Name, l.Name)
				}
				if k > 0 && ls[k-1].Name == l.Name {
					return fmt.Errorf("promtext: metric %s: label %s given twice", f.Name, l.Name)
				}
			}
		}
		slices.SortStableFunc(f.Samples, func(a, b Sample) int { return compareLabels(a.Labels, b.Labels) })
		for j := 1; j < len(f.Samples); j++ {
			if compareLabels(f.Samples[j-1].Labels, f.Samples[j].Labels) == 0 {
				return fmt.Errorf("promtext: metric %s: a series given twice", f.Name)
			}
		}
	}
	bw := bufio.NewWriter(w)
	var b []byte
	for _, f := range fams {
		b = append(b[:0], "# HELP "...)
		b = append(b, f.Name...)
		b = append(b, ' ')
		b = appendEscaped(b, f.Help, false)
		b = append(b, "\n# TYPE "...)
		b = append(b, f.Name...)
		b = append(b, ' ')
		b = append(b, f.Type...)
		b = append(b, '\n')
		for _, s := range f.Samples {
			if f.Type != Histogram {
				b = appendLine(b, f.Name, "", s.Labels, "", s.Value)
				continue
			}
			h := s.Hist
			if len(h.Counts) != len(h.Bounds) {
				return fmt.Errorf("promtext: metric %s: %d bucket counts for %d bounds", f.Name, len(h.Counts), len(h.Bounds))
			}
			for k, le := range h.Bounds {
				b = appendLine(b, f.Name, "_bucket", s.Labels, formatFloat(le), float64(h.Counts[k]))
			}
			b = appendLine(b, f.Name, "_bucket", s.Labels, "+Inf", float64(h.Count))
			b = appendLine(b, f.Name, "_sum", s.Labels, "", h.Sum)
			b = appendLine(b, f.Name, "_count", s.Labels, "", float64(h.Count))
		}
		if _, err := bw.Write(b); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// appendLine appends one sample line: name and suffix, the labels (and le,
// when not empty, last), the value.
func appendLine(b []byte, name, suffix string, ls []Label, le string, v float64) []byte {
	b = append(b, name...)
	b = append(b, suffix...)
	if len(ls) > 0 || le != "" {
		b = append(b, '{')
		for i, l := range ls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, l.Name...)
			b = append(b, `="`...)
			b = appendEscaped(b, l.Value, true)
			b = append(b, '"')
		}
		if le != "" {
			if len(ls) > 0 {
				b = append(b, ',')
			}
			b = append(b, `le="`...)
			b = append(b, le...)
			b = append(b, '"')
		}
		b = append(b, '}')
	}
	b = append(b, ' ')
	b = append(b, formatFloat(v)...)
	return append(b, '\n')
}

// appendEscaped appends s with backslash and newline escaped as \\ and
// \n, and in a label value (quote) the double quote as \" too: the
// format's escapes for HELP text and label values.
func appendEscaped(b []byte, s string, quote bool) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\':
			b = append(b, `\\`...)
		case c == '\n':
			b = append(b, `\n`...)
		case c == '"' && quote:
			b = append(b, `\"`...)
		default:
			b = append(b, c)
		}
	}
	return b
}

// formatFloat writes v as the format reads it: integers without exponent
// up to 2^53, other values in Go's shortest form, and +Inf, -Inf, NaN.
func formatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	case math.IsNaN(v):
		return "NaN"
	case v == math.Trunc(v) && math.Abs(v) <= 1<<53:
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// validName reports whether s is a metric name (metric: colons allowed)
// or a label name: a letter or underscore, then letters, digits and
// underscores. Label names starting with __ are reserved.
func validName(s string, metric bool) bool {
	if s == "" || (!metric && strings.HasPrefix(s, "__")) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		ok := c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (metric && c == ':') ||
			(i > 0 && c >= '0' && c <= '9')
		if !ok {
			return false
		}
	}
	return true
}

// compareLabels orders two sorted label sets.
func compareLabels(a, b []Label) int {
	for i := 0; i < len(a) && i < len(b); i++ {
		if c := strings.Compare(a[i].Name, b[i].Name); c != 0 {
			return c
		}
		if c := strings.Compare(a[i].Value, b[i].Value); c != 0 {
			return c
		}
	}
	return len(a) - len(b)
}

// errBounds is NewDurationHistogram's complaint.
var errBounds = errors.New("promtext: histogram bounds must be positive, finite and ascending")
