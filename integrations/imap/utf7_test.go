package imap

import (
	"testing"
	"unicode/utf8"
)

func TestDisplayName(t *testing.T) {
	tests := []struct{ name, want string }{
		{"INBOX", "INBOX"},
		{"Caf&AOk-", "Café"},
		{"&-amp&-", "&amp&"},
		{"~peter/mail/&U,BTFw-/&ZeVnLIqe-", "~peter/mail/台北/日本語"},
		{"&2D3eAA-", "\U0001F600"},
		{"Café", "Café"},         // raw UTF-8, as some servers send
		{"Caf&AOk", "Caf&AOk"},   // unterminated: shown as sent
		{"&AGE-", "&AGE-"},       // "a" encoded: not valid
		{"&2D0-", "&2D0-"},       // an unpaired surrogate
		{"bad\xff", "bad\uFFFD"}, // not UTF-8
	}
	for _, tt := range tests {
		if got := (Mailbox{Name: tt.name}).DisplayName(); got != tt.want {
			t.Errorf("DisplayName(%q): got %q, want %q", tt.name, got, tt.want)
		}
	}
}

func FuzzDisplayName(f *testing.F) {
	for _, s := range []string{"INBOX", "Caf&AOk-", "&-", "&2D3eAA-", "&", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		if got := (Mailbox{Name: name}).DisplayName(); !utf8.ValidString(got) {
			t.Fatalf("DisplayName(%q) = %q, not UTF-8", name, got)
		}
	})
}
