package vault

import (
	"bytes"
	"errors"
	"testing"
)

// TestPurposeBinds: a string sealed for one purpose does not open as
// another with the same ids, and each purpose's additional data is the
// one the service wrote before Purpose existed (the id behind its old
// prefix), so that stored data still opens.
func TestPurposeBinds(t *testing.T) {
	v := newVault(t, newKey(t))
	purposes := []Purpose{Credentials, ItemContent, ItemMeta, TaskPayload, SyncState}
	for _, p := range purposes {
		sealed, err := v.Seal(AAD{Purpose: p, UserID: "u", Domain: "gmail", ID: "x"}, []byte("secret"))
		if err != nil {
			t.Fatal(err)
		}
		for _, q := range purposes {
			_, err := v.Open(AAD{Purpose: q, UserID: "u", Domain: "gmail", ID: "x"}, sealed)
			if p == q && err != nil {
				t.Errorf("%v opened as itself: got %v, want nil", p, err)
			}
			if p != q && !errors.Is(err, ErrCannotOpen) {
				t.Errorf("%v opened as %v: got %v, want ErrCannotOpen", p, q, err)
			}
		}
	}
	legacy := map[Purpose]string{Credentials: "x", ItemContent: "item:x", ItemMeta: "item-meta:x", TaskPayload: "task:x"}
	for p, id := range legacy {
		got := AAD{Purpose: p, UserID: "u", Domain: "d", ID: "x"}.bytes("h")
		want := AAD{Purpose: Credentials, UserID: "u", Domain: "d", ID: id}.bytes("h")
		if !bytes.Equal(got, want) {
			t.Errorf("%v: additional data %q, want %q", p, got, want)
		}
	}
}

func TestDeriveKey(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	v := newVault(t, k1, k2)
	a, b := v.DeriveKey("search index"), v.DeriveKey("search index")
	if len(a) != KeySize || !bytes.Equal(a, b) {
		t.Fatalf("DeriveKey: got %x and %x, want the same %d bytes twice", a, b, KeySize)
	}
	if bytes.Equal(a, v.DeriveKey("other purpose")) {
		t.Error("two purposes gave the same subkey")
	}
	if bytes.Equal(a, k1) {
		t.Error("the subkey is the key itself")
	}
	// After a rotation the old key's subkey is still there, second.
	rotated := newVault(t, k2, k1)
	keys := rotated.DerivedKeys("search index")
	if len(keys) != 2 {
		t.Fatalf("DerivedKeys: got %d keys, want 2", len(keys))
	}
	if keys[0].KeyID != KeyID(k2) || !bytes.Equal(keys[0].Key, v.DerivedKeys("search index")[1].Key) {
		t.Errorf("DerivedKeys[0]: got key id %s, want the current key's %s and its subkey", keys[0].KeyID, KeyID(k2))
	}
	if keys[1].KeyID != KeyID(k1) || !bytes.Equal(keys[1].Key, a) {
		t.Errorf("DerivedKeys[1]: got key id %s, want the previous key's %s and its subkey", keys[1].KeyID, KeyID(k1))
	}
}

func TestHolds(t *testing.T) {
	k1, k2 := newKey(t), newKey(t)
	sealed, err := newVault(t, k1).Seal(testAAD, []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		v    *Vault
		want bool
	}{
		{"same key", newVault(t, k1), true},
		{"as previous key", newVault(t, k2, k1), true},
		{"another key", newVault(t, k2), false},
	} {
		if got := tt.v.Holds(sealed); got != tt.want {
			t.Errorf("%s: Holds: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
