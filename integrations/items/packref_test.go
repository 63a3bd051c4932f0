package items

import (
	"encoding/json"
	"testing"
	"time"

	"searchsvc/storage"
)

// TestPackedRefRoundTrip: a position in the log reads back from an
// entry's 12 bytes as it was, up to an offset of 1 TiB and a length of
// 16 MiB, the zero (whole) position too; past those it does not pack.
func TestPackedRefRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		off     int64
		n, crc  uint32
		packs   bool
		because string
	}{
		{0, 0, 0, true, "whole"},
		{0, 1, 0xffffffff, true, "first byte"},
		{1234567, 812, 0xdeadbeef, true, "usual"},
		{refMaxOff, refMaxLen, 7, true, "largest"},
		{refMaxOff + 1, 812, 7, false, "offset past 1 TiB"},
		{1234567, refMaxLen + 1, 7, false, "length past 16 MiB"},
		{-1, 812, 7, false, "negative offset"},
		{1, 0, 7, false, "length 0 at an offset: farRef"},
	} {
		r := storage.ColdRefOf(tc.off, tc.n, tc.crc)
		p, ok := packRef(r)
		if ok != tc.packs {
			t.Errorf("%s: packs %v, want %v", tc.because, ok, tc.packs)
			continue
		}
		if ok && p.unpack() != r {
			t.Errorf("%s: got %v back, want %v", tc.because, p.unpack(), r)
		}
		if ok && p == farRef {
			t.Errorf("%s: packs as farRef", tc.because)
		}
	}
}

// TestFarRefs: an item whose position does not pack (a log past 1 TiB)
// keeps it whole beside its entry, found by Ref as it was given, and
// forgotten once a later position packs or the item is gone.
func TestFarRefs(t *testing.T) {
	d := newDense()
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	put := func(id string, ref storage.ColdRef) {
		t.Helper()
		it := testItem(id, "u1", "r1", 0)
		v, err := json.Marshal(&it)
		if err != nil {
			t.Fatal(err)
		}
		if err := d.apply([]storage.ColdPut{{ID: id, Ref: ref, V: v}}, nil, false); err != nil {
			t.Fatal(err)
		}
	}
	a, b := "0000000a-0000-4000-8000-000000000000", "0000000b-0000-4000-8000-000000000000"
	far := storage.ColdRefOf(3<<40, 500, 9)
	near := storage.ColdRefOf(4096, 500, 10)
	put(a, far)
	put(b, near)
	d.open(now)
	for _, c := range []struct {
		id   string
		want storage.ColdRef
	}{{a, far}, {b, near}} {
		if got, ok := d.ref(c.id); !ok || got != c.want {
			t.Errorf("ref(%s): got %v, %v; want %v", c.id, got, ok, c.want)
		}
	}
	if len(d.far) != 1 {
		t.Errorf("far: got %d positions, want 1", len(d.far))
	}
	put(a, near)
	if got, _ := d.ref(a); got != near || len(d.far) != 0 {
		t.Errorf("a moved near: got %v and %d far, want %v and 0", got, len(d.far), near)
	}
	put(b, far)
	d.apply(nil, []string{b}, false)
	d.moved([]storage.ColdPut{{ID: a, Ref: near}})
	if _, ok := d.ref(b); ok || len(d.far) != 0 {
		t.Errorf("b gone: found %v, %d far; want not found, 0", ok, len(d.far))
	}
}
