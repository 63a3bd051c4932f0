package promtext

import (
	"strings"
	"testing"
	"time"
)

func TestWriteExact(t *testing.T) {
	h := NewDurationHistogram(0.1, 1)
	for _, d := range []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 500 * time.Millisecond, 3 * time.Second} {
		h.Observe(d)
	}
	fams := []Family{
		{Name: "x_requests_total", Help: "Requests.", Type: Counter, Samples: []Sample{
			{Labels: []Label{{"route", "GET /b"}, {"class", "2xx"}}, Value: 2},
			{Labels: []Label{{"class", "2xx"}, {"route", "GET /a"}}, Value: 1},
		}},
		{Name: "x_duration_seconds", Help: "Durations.", Type: Histogram, Samples: []Sample{{Hist: h.Snapshot()}}},
		{Name: "x_build_info", Help: "Build with \\ and\nnewline.", Type: Gauge, Samples: []Sample{
			{Labels: []Label{{"version", "1.2"}}, Value: 1},
		}},
		{Name: "x_ratio", Help: "A ratio.", Type: Gauge, Samples: []Sample{{Value: 0.25}}},
	}
	var b strings.Builder
	if err := Write(&b, fams); err != nil {
		t.Fatal(err)
	}
	want := `# HELP x_build_info Build with \\ and\nnewline.
# TYPE x_build_info gauge
x_build_info{version="1.2"} 1
# HELP x_duration_seconds Durations.
# TYPE x_duration_seconds histogram
x_duration_seconds_bucket{le="0.1"} 2
x_duration_seconds_bucket{le="1"} 3
x_duration_seconds_bucket{le="+Inf"} 4
x_duration_seconds_sum 3.65
x_duration_seconds_count 4
# HELP x_ratio A ratio.
# TYPE x_ratio gauge
x_ratio 0.25
# HELP x_requests_total Requests.
# TYPE x_requests_total counter
x_requests_total{class="2xx",route="GET /a"} 1
x_requests_total{class="2xx",route="GET /b"} 2
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestHistogramLabelsAndLe(t *testing.T) {
	h := NewDurationHistogram(0.5)
	h.Observe(time.Second)
	var b strings.Builder
	err := Write(&b, []Family{{Name: "h_seconds", Help: "H.", Type: Histogram,
		Samples: []Sample{{Labels: []Label{{"route", "r"}}, Hist: h.Snapshot()}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := `# HELP h_seconds H.
# TYPE h_seconds histogram
h_seconds_bucket{route="r",le="0.5"} 0
h_seconds_bucket{route="r",le="+Inf"} 1
h_seconds_sum{route="r"} 1
h_seconds_count{route="r"} 1
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLabelValueEscaping(t *testing.T) {
	var b strings.Builder
	err := Write(&b, []Family{{Name: "e", Help: `say "hi"`, Type: Gauge,
		Samples: []Sample{{Labels: []Label{{"v", "a\\b\"c\nd"}}, Value: 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	want := "# HELP e say \"hi\"\n# TYPE e gauge\ne{v=\"a\\\\b\\\"c\\nd\"} 1\n"
	if got := b.String(); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestWriteRefuses(t *testing.T) {
	one := []Sample{{Value: 1}}
	for name, fams := range map[string][]Family{
		"bad name":        {{Name: "9x", Type: Gauge, Samples: one}},
		"bad label":       {{Name: "x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"a-b", "v"}}}}}},
		"reserved label":  {{Name: "x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"__name__", "v"}}}}}},
		"le on histogram": {{Name: "x", Type: Histogram, Samples: []Sample{{Labels: []Label{{"le", "1"}}}}}},
		"bad type":        {{Name: "x", Type: "summary", Samples: one}},
		"twice":           {{Name: "x", Type: Gauge, Samples: one}, {Name: "x", Type: Gauge, Samples: one}},
		"series twice":    {{Name: "x", Type: Gauge, Samples: []Sample{{Value: 1}, {Value: 2}}}},
		"label twice":     {{Name: "x", Type: Gauge, Samples: []Sample{{Labels: []Label{{"a", "1"}, {"a", "2"}}}}}},
	} {
		if err := Write(&strings.Builder{}, fams); err == nil {
			t.Errorf("%s: got no error", name)
		}
	}
}

func TestFormatFloat(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 1e6: "1000000", 1 << 53: "9007199254740992", 1e20: "1e+20", 0.005: "0.005", -2: "-2"} {
		if got := formatFloat(v); got != want {
			t.Errorf("formatFloat(%v): got %q, want %q", v, got, want)
		}
	}
}

func TestObserveAllocatesNothing(t *testing.T) {
	h := NewDurationHistogram(0.01, 0.1, 1)
	if n := testing.AllocsPerRun(100, func() { h.Observe(42 * time.Millisecond) }); n != 0 {
		t.Errorf("Observe: got %v allocations, want 0", n)
	}
}

func TestBadBoundsPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("descending bounds: got no panic")
		}
	}()
	NewDurationHistogram(1, 0.5)
}

// FuzzLabelValue checks that any label value and help text, once
// written, reads back as it was: an unescaping reader of one sample line
// recovers the value, and no value breaks the line.
func FuzzLabelValue(f *testing.F) {
	for _, s := range []string{"", `a\b`, `"`, "\n", `\n`, "é\x00\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		var b strings.Builder
		if err := Write(&b, []Family{{Name: "f", Help: v, Type: Gauge, Samples: []Sample{{Labels: []Label{{"v", v}}, Value: 1}}}}); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(b.String(), "\n")
		if len(lines) != 4 || lines[3] != "" {
			t.Fatalf("got %d lines for %q: %q", len(lines), v, b.String())
		}
		if help := unescape(t, strings.TrimPrefix(lines[0], "# HELP f "), false); help != v {
			t.Errorf("help: got %q, want %q", help, v)
		}
		line := lines[2]
		if !strings.HasPrefix(line, `f{v="`) || !strings.HasSuffix(line, `"} 1`) {
			t.Fatalf("line %q", line)
		}
		if got := unescape(t, line[len(`f{v="`):len(line)-len(`"} 1`)], true); got != v {
			t.Errorf("label value: got %q, want %q", got, v)
		}
	})
}

// unescape reads text the way the format's parsers do; a lone quote in a
// label value would end it early.
func unescape(t *testing.T, s string, quoted bool) string {
	t.Helper()
	var out []byte
	for i := 0; i < len(s); i++ {
		c := s[i]
		if quoted && c == '"' {
			t.Fatalf("unescaped quote in %q", s)
		}
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i++; i == len(s) {
			t.Fatalf("trailing backslash in %q", s)
		}
		switch s[i] {
		case '\\':
			out = append(out, '\\')
		case 'n':
			out = append(out, '\n')
		case '"':
			out = append(out, '"')
		default:
			t.Fatalf("bad escape in %q", s)
		}
	}
	return string(out)
}
