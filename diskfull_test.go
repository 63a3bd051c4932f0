package main

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/storage"
	"searchsvc/storage/storagetest"
)

// TestDiskFullNoRestart: with the disk full, the watchdog keeps pinging
// (healthy stays true: a restart would not make room), /readyz answers 503,
// and once space comes back /readyz is green again without a restart.
func TestDiskFullNoRestart(t *testing.T) {
	var full atomic.Bool
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	dir := t.TempDir()
	a := &app{}
	a.mainStore = storage.New(filepath.Join(dir, mainStoreDir), storage.Options{FS: storagetest.FullFS{Full: &full}, Now: now})
	a.sessionStore = storage.New(filepath.Join(dir, sessionStoreDir), storage.Options{FS: storagetest.FullFS{Full: &full}, Now: now})
	type rec struct {
		ID string `json:"id"`
	}
	tab := storage.Register(a.mainStore, "things", storage.TableConfig[rec]{ID: func(r *rec) string { return r.ID }})
	for _, st := range []*storage.Store{a.mainStore, a.sessionStore} {
		if err := st.Open(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
	}
	ready := func() int {
		w := httptest.NewRecorder()
		a.ready().ServeHTTP(w, httptest.NewRequest("GET", "/readyz", nil))
		return w.Code
	}
	if got := ready(); got != http.StatusOK {
		t.Fatalf("readyz before: got %d, want 200", got)
	}
	full.Store(true)
	if err := a.mainStore.Commit(tab.Put(rec{ID: "a"})); err == nil {
		t.Fatal("a write on a full disk succeeded")
	}
	if !a.healthy() {
		t.Fatal("healthy() false on a full disk: the watchdog would restart the service")
	}
	if got := ready(); got != http.StatusServiceUnavailable {
		t.Fatalf("readyz on a full disk: got %d, want 503", got)
	}
	full.Store(false)
	clock = clock.Add(2 * time.Second)
	if got := ready(); got != http.StatusOK {
		t.Fatalf("readyz once space is back: got %d, want 200", got)
	}
	if err := a.mainStore.Commit(tab.Put(rec{ID: "b"})); err != nil {
		t.Fatalf("a write after space came back: %v", err)
	}
}
