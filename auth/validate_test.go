package auth

import (
	"strings"
	"testing"
)

func TestCheckEmail(t *testing.T) {
	long := strings.Repeat("a", 243) + "@example.com" // 255 bytes
	for _, tc := range []struct {
		email, want string
	}{
		{"ada@example.com", ""},
		{"a.b+tag@sub.example.co", ""},
		{"", "is required"},
		{"ada", "must be a valid email address"},
		{"ada@localhost", "must be a valid email address"},
		{"@example.com", "must be a valid email address"},
		{"ada@@example.com", "must be a valid email address"},
		{"a@b@example.com", "must be a valid email address"},
		{"ada@example..com", "must be a valid email address"},
		{"ada@.example.com", "must be a valid email address"},
		{"ada@example.com.", "must be a valid email address"},
		{"ad a@example.com", "must be a valid email address"},
		{"ada@exa\x00mple.com", "must be a valid email address"},
		{long, "must be at most 254 bytes"},
		{long[1:], ""},
	} {
		var v validator
		checkEmail(&v, tc.email)
		got := ""
		if len(v.fields) > 0 {
			got = v.fields[0].Message
		}
		if got != tc.want {
			t.Errorf("checkEmail(%.40q): got %q, want %q", tc.email, got, tc.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"Ada Lovelace", ""},
		{"", "is required"},
		{strings.Repeat("é", 200), ""},
		{strings.Repeat("é", 201), "must be at most 200 characters"},
		{"Ada\nLovelace", "must not contain control characters"},
	} {
		var v validator
		checkName(&v, tc.name)
		got := ""
		if len(v.fields) > 0 {
			got = v.fields[0].Message
		}
		if got != tc.want {
			t.Errorf("checkName(%.20q): got %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestCheckPassword(t *testing.T) {
	const email, name = "ada@example.com", "Ada Lovelace Byron"
	for _, tc := range []struct{ pw, want string }{
		{"correct horse battery", ""},
		{"", "is required"},
		{"short", "must be at least 10 characters"},
		{strings.Repeat("é", 10), ""}, // characters, not bytes
		{strings.Repeat("é", 9), "must be at least 10 characters"},
		{strings.Repeat("x", 1024), ""},
		{strings.Repeat("xy", 512), ""},
		{strings.Repeat("xy", 512) + "z", "must be at most 1024 characters"},
		{"ADA@EXAMPLE.COM", "must not be the email address"},
		{"ada lovelace byron", "must not be the name"},
		{"password123", "is too common"},
		{"Password123", "is too common"},
		{"QWERTYUIOP", "is too common"},
		{"1234567890", "is too common"},
	} {
		var v validator
		checkPassword(&v, "password", tc.pw, email, name)
		got := ""
		if len(v.fields) > 0 {
			got = v.fields[0].Message
		}
		if got != tc.want {
			t.Errorf("checkPassword(%.20q): got %q, want %q", tc.pw, got, tc.want)
		}
	}
}

func TestCommonPasswordList(t *testing.T) {
	set := commonPasswords()
	if len(set) < 300 {
		t.Fatalf("got %d common passwords, want a few hundred", len(set))
	}
	for p := range set {
		if p != strings.ToLower(p) || len(p) < minPasswordLen || len(p) > 64 {
			t.Errorf("list entry %q: want lower case, 10 to 64 bytes", p)
		}
	}
}
