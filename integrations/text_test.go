package integrations

import "testing"

func TestWordTokenClip(t *testing.T) {
	for _, tc := range []struct {
		s          string
		word, tok  bool
		clip, name string
	}{
		{"invalid_grant", true, true, "invalid_g", "invalid_grant"},
		{"", false, true, "", ""},
		{"a b", false, false, "a b", "a b"},
		{"x\n", false, false, "x\n", "x\n"},
		{"café", false, false, "café", "café"},
		{"abcdefghé", false, false, "abcdefgh", "abcdefghé"},
		{"ab.c-d", true, true, "ab.c-d", "ab.c-d"},
		{string(make([]byte, 65)), false, false, string(make([]byte, 9)), string(make([]byte, 40)) + "…"},
		{"ééééééééééééééééééééé", false, false, "éééé", "éééééééééééééééééééé…"},
	} {
		if got := Word(tc.s); got != tc.word {
			t.Errorf("Word(%q): got %v, want %v", tc.s, got, tc.word)
		}
		if got := Token(tc.s, 20); got != (tc.tok && len(tc.s) <= 20) {
			t.Errorf("Token(%q, 20): got %v, want %v", tc.s, got, tc.tok)
		}
		if got := Clip(tc.s, 9); got != tc.clip {
			t.Errorf("Clip(%q, 9): got %q, want %q", tc.s, got, tc.clip)
		}
		if got := ClipName(tc.s); got != tc.name {
			t.Errorf("ClipName(%q): got %q, want %q", tc.s, got, tc.name)
		}
	}
}
