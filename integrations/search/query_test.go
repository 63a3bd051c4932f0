package search

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// format writes a query tree compactly: words are their terms, phrases
// quoted, fields named, and groups as (AND …) and (OR …).
func format(n Node) string {
	field := func(f Field) string {
		switch f {
		case FieldTitle:
			return "subject:"
		case FieldFrom:
			return "from:"
		case FieldTo:
			return "to:"
		case FieldText:
			return "text:"
		case FieldAny:
			return ""
		}
		return fmt.Sprintf("field%d:", f)
	}
	list := func(op string, kids []Node) string {
		parts := []string{op}
		for _, k := range kids {
			parts = append(parts, format(k))
		}
		return "(" + strings.Join(parts, " ") + ")"
	}
	switch x := n.(type) {
	case nil:
		return "<nil>"
	case And:
		return list("AND", x.Children)
	case Or:
		return list("OR", x.Children)
	case Not:
		return "-" + format(x.Child)
	case Term:
		s := field(x.Field) + x.Text
		if x.Prefix {
			s += "*"
		}
		return s
	case Phrase:
		return field(x.Field) + `"` + strings.Join(x.Terms, " ") + `"`
	case Kind:
		return "kind:" + x.Kind
	case Integration:
		return "integration:" + x.Integration
	case DateRange:
		d := func(t time.Time) string {
			if t.IsZero() {
				return ""
			}
			return t.Format(time.DateOnly)
		}
		return "date:[" + d(x.After) + "," + d(x.Before) + ")"
	}
	return fmt.Sprintf("%T?", n)
}

func TestParse(t *testing.T) {
	tests := []struct{ q, want string }{
		// One row per form of the query language.
		{"quarterly report", "(AND quarter report)"},
		{`"quarterly report"`, `"quarter report"`},
		{"quart*", "quart*"},
		{"-draft", "(AND -draft)"},
		{`-"out of office"`, `(AND -"out of offic")`},
		{"invoice OR receipt", "(OR invoic receipt)"},
		{"from:alice", "from:alic"},
		{"from:alice@example.org", "from:alice@example.org"},
		{"to:bob", "to:bob"},
		{"subject:budget", "subject:budget"},
		{`subject:"q3 budget"`, `subject:"q3 budget"`},
		{"kind:email", "kind:email"},
		{"integration:slack", "integration:slack"},
		{"after:2026-01-31", "date:[2026-01-31,)"},
		{"before:2026-03-01", "date:[,2026-03-01)"},

		// Precedence and grouping.
		{"a b OR c", "(OR (AND a b) c)"},
		{"a OR b c", "(OR a (AND b c))"},
		{"a (b OR c)", "(AND a (OR b c))"},
		{"(a OR b) OR c", "(OR a b c)"},
		{"(a b) c", "(AND a b c)"},
		{"a AND b", "(AND a b)"},
		{"x or y", "(AND x or y)"},
		{"cats -(dogs OR mice)", "(AND cat -(OR dog mice))"},
		{"-draft -spam", "(AND -draft -spam)"},
		{"a OR -b", "(OR a (AND -b))"},
		{"report -kind:file", "(AND report -kind:file)"},
		{"-from:bob budget", "(AND -from:bob budget)"},
		{`From:alice To:"Bob Jones"`, `(AND from:alic to:"bob jone")`},
		{"budget after:2026-01-31 before:2026-03-01", "(AND budget date:[2026-01-31,2026-03-01))"},
		{"after:2026-01-01 after:2026-02-01", "date:[2026-02-01,)"},

		// Words analyzed as the items' text is.
		{"Café", "cafe"},
		{"REPORTS running", "(AND report run)"},
		{`"Reports RUNNING late"`, `"report run late"`},
		{"e-mail", `(OR email "e mail")`},
		{"report_v2.pdf", `"report v2 pdf"`},
		{"U.S.A.", `(OR usa "u s a")`},
		{"東京都", `"東京 京都"`},
		{"日", "日*"},
		{"1,000", "1000"},
		{"3.14", "3.14"},
		{"C++", "c++"},
		{"don't", "dont"},
		{`"mail from alice@example.org"`, `"mail from alic exampl org"`},
		{"from:Alice.Smith@Example.org", "from:alice.smith@example.org"},
		{`from:"Alice Smith"`, `from:"alic smith"`},
		{"to:example.org", `to:"exampl org"`},
		{"from:ali*", "from:ali*"},
		{"Repor*", "repor*"},
		{"running*", "running*"},
		{"report_v2*", `(AND report v2*)`},
		{"KIND:Email", "kind:email"},
		{"Re: budget", "(AND re budget)"},
		{"https://example.org/a-b", `"https exampl org a b"`},
		{"HTTPS://Example.org x", `(AND "https exampl org" x)`},
		{"10:30", `"10 30"`},
		{"a - b", "(AND a b)"},
		{"--a", "a"},
		{"a !!! b", "(AND a b)"},
		{`""  x`, "x"},
		{"“quarterly report”", `"quarter report"`},
		{"„Bericht Zahlen“ x", `(AND "bericht zahlen" x)`},
		{"-“out of office”", `(AND -"out of offic")`},
		{"subject:“q3 budget”", `subject:"q3 budget"`},
		{`kind:"email"`, "kind:email"},
		{`"quart*"`, "quart"},
		{"a\u00a0b", "(AND a b)"},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			n, err := Parse(tt.q)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tt.q, err)
			}
			if got := format(n); got != tt.want {
				t.Errorf("Parse(%q) = %s, want %s", tt.q, got, tt.want)
			}
		})
	}
}

func TestParseDates(t *testing.T) {
	n, err := Parse("after:2026-01-31 before:2026-03-01")
	if err != nil {
		t.Fatal(err)
	}
	want := DateRange{
		After:  time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC),
		Before: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
	}
	if got, ok := n.(DateRange); !ok || !got.After.Equal(want.After) || !got.Before.Equal(want.Before) ||
		got.After.Location() != time.UTC || got.Before.Location() != time.UTC {
		t.Errorf("got %#v, want %#v", n, want)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ q, want string }{
		{"", "empty query at 0"},
		{"   \t ", "empty query at 0"},
		{"!!! ...", "nothing to search for at 0"},
		{"()", "empty parentheses at 0"},
		{`budget "q3 plan`, "unclosed quote at 7"},
		{`subject:"q3`, "unclosed quote at 8"},
		{"a “q3 plan", "unclosed quote at 2"},
		{`kind:"email`, "unclosed quote at 5"},
		{"a OR", "OR needs a term on both sides at 2"},
		{"OR a", "OR needs a term on both sides at 0"},
		{"a OR OR b", "OR needs a term on both sides at 2"},
		{"(OR a)", "OR needs a term on both sides at 1"},
		{"a (OR) b", "OR needs a term on both sides at 3"},
		{"a AND", "AND needs a term on both sides at 2"},
		{"AND a", "AND needs a term on both sides at 0"},
		{"(a b", "unclosed parenthesis at 0"},
		{"a (b (c)", "unclosed parenthesis at 2"},
		{"a b)", "unmatched ) at 3"},
		{"foo:bar", `unknown field "foo:" at 0`},
		{"x Foo:bar", `unknown field "Foo:" at 2`},
		{"from: alice", "from: needs a value at 0"},
		{"a kind:", "kind: needs a value at 2"},
		{"from:!!!", `from: needs a word or a "phrase" at 0`},
		{"kind:mail", `unknown kind "mail" in kind: (email, message, file or entry) at 0`},
		{"integration:sl@ck", `bad integration "sl@ck" in integration: at 0`},
		{"x after:2026-13-01", `bad date "2026-13-01" in after: (want YYYY-MM-DD) at 2`},
		{"before:2026-02-30", `bad date "2026-02-30" in before: (want YYYY-MM-DD) at 0`},
		{"after:2026-1-5", `bad date "2026-1-5" in after: (want YYYY-MM-DD) at 0`},
		{"after:yesterday", `bad date "yesterday" in after: (want YYYY-MM-DD) at 0`},
		{"q*", "a prefix needs at least 2 characters before * at 0"},
		{"a *", "a prefix needs at least 2 characters before * at 2"},
		{"e-m*", "a prefix needs at least 2 characters before * at 0"},
		{strings.Repeat("(", 21) + "a" + strings.Repeat(")", 21), "too deeply nested (at most 20 levels) at 20"},
		{strings.Repeat("w ", 101), "too many terms (at most 100) at 200"},
		{`"` + strings.Repeat("東", 102) + `"`, "too many terms (at most 100) at 0"},
		{strings.Repeat("a", 1001), "query longer than 1000 bytes at 1000"},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			n, err := Parse(tt.q)
			var qe *QueryError
			if !errors.As(err, &qe) {
				t.Fatalf("Parse(%q) = %s, %v; want a *QueryError", tt.q, format(n), err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Parse(%q) error = %q, want %q", tt.q, got, tt.want)
			}
		})
	}
}

func TestParseLimitsAccepted(t *testing.T) {
	for _, q := range []string{
		strings.Repeat("(", 20) + "a" + strings.Repeat(")", 20),
		strings.Repeat("w ", 100),
		"x" + strings.Repeat(" ", 999),
	} {
		if _, err := Parse(q); err != nil {
			t.Errorf("Parse(%.30q…): %v, want no error", q, err)
		}
	}
}

// checkTree fails unless n is a tree Parse may return: bounded in depth
// and terms, with no empty groups and no empty terms.
func checkTree(t *testing.T, q string, n Node, depth int, terms *int) {
	t.Helper()
	if depth > 2*MaxDepth+4 {
		t.Fatalf("Parse(%q): tree deeper than %d", q, 2*MaxDepth+4)
	}
	switch x := n.(type) {
	case And:
		if len(x.Children) == 0 {
			t.Fatalf("Parse(%q): empty And", q)
		}
		for _, k := range x.Children {
			checkTree(t, q, k, depth+1, terms)
		}
	case Or:
		if len(x.Children) < 2 {
			t.Fatalf("Parse(%q): Or of %d", q, len(x.Children))
		}
		for _, k := range x.Children {
			checkTree(t, q, k, depth+1, terms)
		}
	case Not:
		checkTree(t, q, x.Child, depth+1, terms)
	case Term:
		*terms++
		if x.Text == "" || len(x.Text) > MaxTermBytes {
			t.Fatalf("Parse(%q): term %q empty or too long", q, x.Text)
		}
	case Phrase:
		*terms += len(x.Terms)
		if len(x.Terms) < 2 {
			t.Fatalf("Parse(%q): phrase of %d terms", q, len(x.Terms))
		}
		for _, s := range x.Terms {
			if s == "" || len(s) > MaxTermBytes {
				t.Fatalf("Parse(%q): phrase term %q empty or too long", q, s)
			}
		}
	case Kind, Integration, DateRange:
		*terms++
	default:
		t.Fatalf("Parse(%q): node %T", q, n)
	}
	if *terms > 2*MaxTerms {
		t.Fatalf("Parse(%q): more than %d terms", q, 2*MaxTerms)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"quarterly report", `"quarterly report"`, "quart*", `-draft -"out of office"`,
		"invoice OR receipt", "(a OR b) c", "from:alice@example.org", "to:bob",
		`subject:"q3 budget"`, "kind:email integration:slack", "after:2026-01-31 before:2026-03-01",
		"e-mail report_v2 東京都", "a AND b", "((((", "))", `"`, "OR", "-", "-(a)", "x:y",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, q string) {
		n, err := Parse(q)
		if err != nil {
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Pos < 0 || qe.Pos > len(q) || qe.Msg == "" {
				t.Fatalf("Parse(%q): error %#v, want a *QueryError within the query", q, err)
			}
			if n != nil {
				t.Fatalf("Parse(%q): a tree and an error", q)
			}
			return
		}
		if len(q) > MaxQueryBytes {
			t.Fatalf("Parse of %d bytes: no error", len(q))
		}
		terms := 0
		checkTree(t, q, n, 0, &terms)
	})
}
