package items

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/storage"
)

// An item's link is sealed with its metadata and shown in its view; one
// too long to keep whole is dropped, as a cut address would lead elsewhere.
func TestItemLink(t *testing.T) {
	st := storage.New(filepath.Join(t.TempDir(), "main"), storage.Options{Sync: storage.SyncNone})
	s := New(st, testVault(t, 3), t.TempDir())
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	owner := Owner{UserID: "u1", RecordID: "r1", Integration: "feed"}
	long := "https://example.org/" + strings.Repeat("a", maxLink)
	tests := []struct{ link, want string }{
		{"https://example.org/posts/1", "https://example.org/posts/1"},
		{"", ""},
		{long, ""},
	}
	for _, tc := range tests {
		it, err := s.NewItem(owner, &integrations.Item{ProviderID: "p" + tc.link[:min(len(tc.link), 30)], Title: "t", Link: tc.link}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(it.Meta, []byte("example.org")) {
			t.Errorf("the link is in the metadata in plain text")
		}
		v, err := s.View(&it)
		if err != nil {
			t.Fatal(err)
		}
		if v.Link != tc.want {
			t.Errorf("link %.40q: got %.40q, want %.40q", tc.link, v.Link, tc.want)
		}
	}
}
