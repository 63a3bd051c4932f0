package httpx

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"testing"
)

func TestParseFilter(t *testing.T) {
	many := func(n int) string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("id%d", i)
		}
		return strings.Join(ids, ",")
	}
	tests := []struct {
		name     string
		query    string
		match    []string
		noMatch  []string
		badField string
	}{
		{"none", "", []string{"a", "b"}, nil, ""},
		{"in", "inIds=a,b", []string{"a", "b"}, []string{"c"}, ""},
		{"nin", "ninIds=a", []string{"b"}, []string{"a"}, ""},
		{"both", "inIds=a,b&ninIds=b", []string{"a"}, []string{"b", "c"}, ""},
		{"spaces and empties", "inIds=+a+,,b,", []string{"a", "b"}, []string{""}, ""},
		{"repeated parameter", "inIds=a&inIds=b", []string{"a", "b"}, []string{"c"}, ""},
		{"100 is fine", "inIds=" + many(100), []string{"id99"}, []string{"id100"}, ""},
		{"101 is not", "inIds=" + many(101), nil, nil, "inIds"},
		{"101 excluded is not", "ninIds=" + many(101), nil, nil, "ninIds"},
		{"duplicates count once", "inIds=" + many(100) + ",id0,id1", []string{"id0"}, nil, ""},
		{"id too long", "ninIds=" + strings.Repeat("x", 129), nil, nil, "ninIds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q, err := url.ParseQuery(tt.query)
			if err != nil {
				t.Fatal(err)
			}
			f, err := ParseFilter(q)
			if tt.badField != "" {
				var e *Error
				if !errors.As(err, &e) || e.Status != 400 || e.Message != "validation failed" ||
					len(e.Details) != 1 || e.Details[0].Field != tt.badField {
					t.Fatalf("got %v, want 400 validation failed naming %s", err, tt.badField)
				}
				return
			}
			if err != nil {
				t.Fatalf("got %v, want success", err)
			}
			for _, id := range tt.match {
				if !f.Match(id) {
					t.Errorf("Match(%q) = false, want true", id)
				}
			}
			for _, id := range tt.noMatch {
				if f.Match(id) {
					t.Errorf("Match(%q) = true, want false", id)
				}
			}
		})
	}
}

func FuzzParseFilter(f *testing.F) {
	f.Add("a,b,c", "d")
	f.Add(",,,", "")
	f.Add(strings.Repeat("x,", 200), "y")
	f.Fuzz(func(t *testing.T, in, nin string) {
		fl, err := ParseFilter(url.Values{"inIds": {in}, "ninIds": {nin}})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Status != 400 {
				t.Fatalf("error %v is not a 400", err)
			}
			return
		}
		if len(fl.in) > MaxFilterIDs || len(fl.nin) > MaxFilterIDs {
			t.Fatalf("accepted %d/%d ids", len(fl.in), len(fl.nin))
		}
		for id := range fl.nin {
			if fl.Match(id) {
				t.Fatalf("excluded id %q matches", id)
			}
		}
	})
}
