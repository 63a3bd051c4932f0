package main

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"searchsvc/storage"
)

// fullFS is the operating system's file system with a switch that makes
// every write fail with ENOSPC, as a full SD card does.
type fullFS struct{ full *atomic.Bool }

type fullFile struct {
	*os.File
	full *atomic.Bool
}

func (f fullFile) Write(p []byte) (int, error) {
	if f.full.Load() {
		return 0, &fs.PathError{Op: "write", Path: f.Name(), Err: syscall.ENOSPC}
	}
	return f.File.Write(p)
}

func (x fullFS) OpenFile(name string, flag int, perm fs.FileMode) (storage.File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return fullFile{f, x.full}, nil
}
func (fullFS) Rename(a, b string) error                     { return os.Rename(a, b) }
func (fullFS) Remove(name string) error                     { return os.Remove(name) }
func (fullFS) MkdirAll(name string, perm fs.FileMode) error { return os.MkdirAll(name, perm) }
func (fullFS) SyncDir(string) error                         { return nil }
func (fullFS) ReadDir(name string) ([]string, error) {
	es, err := os.ReadDir(name)
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out, err
}
func (x fullFS) Lock(name string) (storage.File, error) {
	return x.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
}

// TestDiskFullNoRestart: with the disk full, the watchdog keeps pinging
// (healthy stays true: a restart would not make room), /readyz answers 503,
// and once space comes back /readyz is green again without a restart.
func TestDiskFullNoRestart(t *testing.T) {
	var full atomic.Bool
	clock := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	dir := t.TempDir()
	a := &app{}
	a.mainStore = storage.New(filepath.Join(dir, mainStoreDir), storage.Options{FS: fullFS{&full}, Now: now})
	a.sessionStore = storage.New(filepath.Join(dir, sessionStoreDir), storage.Options{FS: fullFS{&full}, Now: now})
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
