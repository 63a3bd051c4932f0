package search

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestColumnsIDs encodes and decodes columns of UUIDs (kept as 16 bytes
// each), of other ids and of both mixed (kept as strings), and checks
// each document's id, written out and found again.
func TestColumnsIDs(t *testing.T) {
	uuids := []string{"0b9f7a2e-1111-4c6e-9a57-000000000003", "0b9f7a2e-1111-4c6e-9a57-000000000001",
		"ffffffff-0000-4000-8000-0000000000aa", "0b9f7a2e-1111-4c6e-9a57-000000000001"}
	tests := []struct {
		name    string
		ids     []string
		compact bool
	}{
		{"uuids", uuids, true},
		{"others", []string{"d2", "d1", "a-very-long-id-" + fmt.Sprint(make([]int, 20))}, false},
		{"uuid then other", append(uuids[:2:2], "d1"), false},
		{"other then uuid", []string{"d1", uuids[0]}, false},
		{"upper-case uuid", []string{"0B9F7A2E-1111-4C6E-9A57-000000000003", uuids[1]}, false},
		{"none", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in columns
			for i, id := range tt.ids {
				in.ids = append(in.ids, id)
				in.dates.add(int64(i))
				in.addNames("email", "imap", "r1")
				in.lens = append(in.lens, fieldLens{1, 2, 3, uint16(i)})
			}
			c, err := decodeColumns(encodeColumns(&in))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.uuids != nil; got != tt.compact {
				t.Errorf("got compact %v, want %v", got, tt.compact)
			}
			if c.len() != len(tt.ids) {
				t.Fatalf("got %d documents, want %d", c.len(), len(tt.ids))
			}
			for d, id := range tt.ids {
				if got := c.id(uint32(d)); got != id {
					t.Errorf("id(%d): got %q, want %q", d, got, id)
				}
				if got := string(c.appendDocID([]byte("x"), uint32(d))); got != "x"+id {
					t.Errorf("appendDocID(%d): got %q, want %q", d, got, "x"+id)
				}
				if c.dates.at(uint32(d)) != int64(d) || c.lens[d][3] != uint16(d) {
					t.Errorf("document %d: got date %d, lens %v", d, c.dates.at(uint32(d)), c.lens[d])
				}
				// The first live one of equal ids: skip the earlier ones.
				got, ok := c.find(id, func(e uint32) bool { return e < uint32(d) })
				if !ok || c.id(got) != id || got < uint32(d) {
					t.Errorf("find(%q) past %d: got %d, %v", id, d, got, ok)
				}
			}
			for _, id := range []string{"d3", "0b9f7a2e-1111-4c6e-9a57-000000000002", ""} {
				if d, ok := c.find(id, func(uint32) bool { return false }); ok {
					t.Errorf("find(%q): got %d, want none", id, d)
				}
			}
		})
	}
}

// TestCopyID copies ids as a merge does, from segments that keep them as
// bytes and from ones that keep them as strings: every id is kept, as
// bytes only while every source had them so.
func TestCopyID(t *testing.T) {
	decoded := func(ids ...string) *columns {
		var in columns
		for _, id := range ids {
			in.ids = append(in.ids, id)
			in.dates.add(0)
			in.addNames("email", "imap", "r1")
			in.lens = append(in.lens, fieldLens{})
		}
		c, err := decodeColumns(encodeColumns(&in))
		if err != nil {
			t.Fatal(err)
		}
		return &c
	}
	u1, u2, u3 := "0b9f7a2e-1111-4c6e-9a57-000000000001", "0b9f7a2e-1111-4c6e-9a57-000000000002", "0b9f7a2e-1111-4c6e-9a57-000000000003"
	tests := []struct {
		name    string
		srcs    []*columns
		want    []string
		compact bool
	}{
		{"bytes", []*columns{decoded(u2, u1), decoded(u3)}, []string{u2, u1, u3}, true},
		{"bytes then strings", []*columns{decoded(u2, u1), decoded("d1", u3)}, []string{u2, u1, "d1", u3}, false},
		{"strings then bytes", []*columns{decoded("d1"), decoded(u3, u1)}, []string{"d1", u3, u1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c columns
			for _, src := range tt.srcs {
				for d := range uint32(src.len()) {
					c.copyID(src, d)
				}
			}
			if got := c.uuids != nil; got != tt.compact {
				t.Errorf("got compact %v, want %v", got, tt.compact)
			}
			var got []string
			for d := range uint32(c.len()) {
				got = append(got, c.id(d))
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// TestPagingUUIDTies pages, with both sorts and with id filters, through
// documents with UUID ids (kept as bytes in their segment, as strings in
// the buffer) that tie on score and date, so only their ids order them:
// every page is the next run of the ids in order, none twice.
func TestPagingUUIDTies(t *testing.T) {
	ix := openTest(t, t.TempDir())
	var docs []Doc
	for i := range 30 {
		u := []byte("0123456789abcdef")
		u[0], u[15] = byte(i*37), byte(i)
		docs = append(docs, Doc{ID: formatUUID(u), Kind: "email", Text: "tied words",
			Date: day("2026-01-01").Add(time.Duration(i%2) * time.Hour)})
	}
	ix.Add(userA, docs[:20]...)
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	ix.Add(userA, docs[20:]...)
	if seg := onlySegment(t, ix); seg.cols.uuids == nil {
		t.Fatal("segment keeps its UUIDs as strings")
	}
	// Newer first, then the smaller id.
	order := slices.Clone(docs)
	slices.SortFunc(order, func(a, b Doc) int {
		if c := b.Date.Compare(a.Date); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	var all []string
	for _, d := range order {
		all = append(all, d.ID)
	}
	tests := []struct {
		name     string
		sort     string
		in, nin  []string
		wantHits []string
	}{
		{"relevance", SortRelevance, nil, nil, all},
		{"date", SortDate, nil, nil, all},
		{"in", SortRelevance, []string{all[3], all[29], all[0], "d1"}, nil, []string{all[0], all[3], all[29]}},
		{"nin", SortDate, nil, all[2:28], []string{all[0], all[1], all[28], all[29]}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			cursor := ""
			for range 40 {
				res := search(t, ix, userA, Request{Query: qterm("tied"), Limit: 3, Cursor: cursor, Sort: tt.sort, InIDs: tt.in, NinIDs: tt.nin})
				if res.Total != len(tt.wantHits) {
					t.Fatalf("got total %d, want %d", res.Total, len(tt.wantHits))
				}
				got = append(got, hitIDs(res)...)
				if cursor = res.NextCursor; cursor == "" {
					break
				}
			}
			if !slices.Equal(got, tt.wantHits) {
				t.Errorf("got %v,\nwant %v", got, tt.wantHits)
			}
		})
	}
}
