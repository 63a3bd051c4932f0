package seal

import (
	"bytes"
	"errors"
	"testing"
)

func TestBox(t *testing.T) {
	old, cur := bytes.Repeat([]byte{1}, 32), bytes.Repeat([]byte{2}, 32)
	oldBox, _ := NewBox("users", old)
	box, err := NewBox("users", cur, old)
	if err != nil {
		t.Fatal(err)
	}
	s := box.Seal([]byte("ada@example.com"), []byte("u1"))
	if bytes.Contains(s, []byte("ada")) {
		t.Fatal("sealed value holds the plaintext")
	}
	pt, current, err := box.Open(s, []byte("u1"))
	if err != nil || string(pt) != "ada@example.com" || !current {
		t.Fatalf("Open: got %q, %v, %v", pt, current, err)
	}
	if _, _, err := box.Open(s, []byte("u2")); !errors.Is(err, ErrOpen) {
		t.Errorf("Open bound to another record: got %v, want ErrOpen", err)
	}
	if pt, current, err := box.Open(oldBox.Seal([]byte("x"), nil), nil); err != nil || string(pt) != "x" || current {
		t.Errorf("Open of an old key's value: got %q, %v, %v; want x, not current", pt, current, err)
	}
	other, _ := NewBox("sessions", cur)
	if _, _, err := other.Open(s, []byte("u1")); !errors.Is(err, ErrOpen) {
		t.Errorf("another purpose's key opened it: %v", err)
	}
	s[len(s)-1] ^= 1
	if _, _, err := box.Open(s, []byte("u1")); !errors.Is(err, ErrOpen) {
		t.Errorf("a damaged value opened: %v", err)
	}
}

func TestIndex(t *testing.T) {
	a, b := NewIndex("email", []byte("k1")), NewIndex("email", []byte("k2"))
	if a.Sum("x@y") != a.Sum("x@y") || a.Sum("x@y") == a.Sum("x@z") || a.Sum("x@y") == b.Sum("x@y") {
		t.Fatal("an index must be stable per key and value, and differ across keys and values")
	}
	if NewIndex("other", []byte("k1")).Sum("x@y") == a.Sum("x@y") {
		t.Fatal("purposes share a key")
	}
}
