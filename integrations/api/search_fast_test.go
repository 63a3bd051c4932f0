package api_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestSearchReadsNoItemRecord: a search reads no item's record back from
// the log (a pread and a JSON decode per hit): what memory holds says the
// item is live, and the index has the rest. With every item record in
// the log damaged, the answer is whole, and sends nothing to catch-up.
func TestSearchReadsNoItemRecord(t *testing.T) {
	f := newSearchFixture(t)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	f.mail.Fill("ann", 3, start)
	f.connectManual("u1", "ann")
	f.runOnce()
	code, body := f.search("u1", "q=confidential&sort=date")
	if code != 200 || body["count"] != 3.0 {
		t.Fatalf("q=confidential: %d %v", code, body)
	}
	logs, err := filepath.Glob(filepath.Join(f.dir, "main", "log.*"))
	if err != nil || len(logs) == 0 {
		t.Fatalf("no log under main: %v", err)
	}
	for _, path := range logs {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range body["results"].([]any) {
			// Each record's copy of its id, the same length changed:
			// its checksum no longer matches.
			id := []byte(r.(map[string]any)["id"].(string))
			raw = bytes.ReplaceAll(raw, []byte(`"id":"`+string(id)), []byte(`"id":"`+string(id[:35])+"x"))
		}
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	code, body = f.search("u1", "q=confidential&sort=date")
	if code != 200 || body["count"] != 3.0 || f.stale != nil {
		t.Fatalf("with the records damaged: %d %v, catch-ups %v; want 200 with 3 results and none", code, body, f.stale)
	}
	first := body["results"].([]any)[0].(map[string]any)
	if first["title"] != "Subject ann number 2" || first["from"] != "sender2@private.example" {
		t.Errorf("newest result: %v", first)
	}
}
