package textguard

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestWordTokenName(t *testing.T) {
	for _, tc := range []struct {
		s         string
		word, tok bool
		name      string
	}{
		{"invalid_grant", true, true, "invalid_grant"},
		{"", false, true, ""},
		{"a b", false, false, "a b"},
		{"x\n", false, false, "x\n"},
		{"café", false, false, "café"},
		{"abcdefghé", false, false, "abcdefghé"},
		{"ab.c-d", true, true, "ab.c-d"},
		{string(make([]byte, 65)), false, false, string(make([]byte, 40)) + "…"},
		{"ééééééééééééééééééééé", false, false, "éééééééééééééééééééé…"},
		{strings.Repeat("a", 39) + "é\xffz", false, false, strings.Repeat("a", 39) + "…"},
	} {
		if got := Word(tc.s); got != tc.word {
			t.Errorf("Word(%q): got %v, want %v", tc.s, got, tc.word)
		}
		if got := Token(tc.s, 20); got != (tc.tok && len(tc.s) <= 20) {
			t.Errorf("Token(%q, 20): got %v, want %v", tc.s, got, tc.tok)
		}
		if got := Name(tc.s); got != tc.name {
			t.Errorf("Name(%q): got %q, want %q", tc.s, got, tc.name)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"", 0, ""},
		{"", 1, ""},
		{"abc", 0, ""},
		{"abc", -1, ""},
		{"abc", 1, "a"},
		{"abc", 3, "abc"},
		{"abc", 9, "abc"},
		{"é", 1, ""},    // two bytes, cut after the first
		{"aé", 1, "a"},  // the cut falls before the character
		{"aé", 2, "a"},  // inside it
		{"aé", 3, "aé"}, // after it
		{"€x", 1, ""},   // three bytes
		{"€x", 2, ""},   // three bytes, cut after the second
		{"€x", 3, "€"},  // after it
		{"a😀", 1, "a"},  // four bytes
		{"a😀", 4, "a"},  // cut after the third of four
		{"a😀", 5, "a😀"}, // after it
		{"abcé", 4, "abc"},
		// Bytes that are not UTF-8 stay; only a character the cut splits goes.
		{"\xff\xfe\xfd", 1, "\xff"},
		{"\xff\xfe\xfd", 2, "\xff\xfe"},
		{"a\x80\x80\x80\x80\x80", 3, "a\x80\x80"},
		{"ab\xa9cd", 2, "ab"}, // a Latin-1 ©, kept for its charset's decoder
		{"ab\xa9cd", 3, "ab\xa9"},
		{"é\x80x", 2, "é"},
		{"é\x80x", 3, "é\x80"},
		{"\xe2\x82", 1, "\xe2"}, // a character cut short in s itself is no character
		{"\xe2\x82x", 2, "\xe2\x82"},
		{"\uFFFDx", 1, ""}, // U+FFFD written out is a character like any other
		{"\uFFFDx", 3, "\uFFFD"},
	} {
		if got := Truncate(tc.s, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d): got %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}

// TestTruncateProperties checks every cut of strings mixing one- to
// four-byte characters and stray bytes: the result is a prefix of at most
// n bytes; of valid UTF-8 it is valid and loses less than one character;
// made valid, it is what s[:n] made valid gives.
func TestTruncateProperties(t *testing.T) {
	inputs := []string{
		"plain ascii",
		"café crème brûlée",
		"€uro € and 😀 and ключ",
		"😀😀😀😀",
		"mixed \xff\xfe stray \x80 bytes é\x80 and \xe2\x82 cut",
		"\x80\x80\x80\x80\x80\x80",
	}
	for _, s := range inputs {
		for n := -1; n <= len(s)+1; n++ {
			got := Truncate(s, n)
			if !strings.HasPrefix(s, got) || len(got) > max(n, 0) {
				t.Fatalf("Truncate(%q, %d) = %q: not a prefix of at most %d bytes", s, n, got, n)
			}
			if n < 0 || n > len(s) {
				continue
			}
			if utf8.ValidString(s) {
				if !utf8.ValidString(got) || n-len(got) >= utf8.UTFMax {
					t.Fatalf("Truncate(%q, %d) = %q: not valid, or more than a character lost", s, n, got)
				}
			}
			if a, b := strings.ToValidUTF8(got, ""), strings.ToValidUTF8(s[:n], ""); a != b {
				t.Fatalf("Truncate(%q, %d) made valid = %q, s[:n] made valid = %q", s, n, a, b)
			}
		}
	}
}
