package sessions

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A session whose record was damaged in the log since it was written
// (one byte of its sealed part) would fail every touch flush, and with it
// every other session's last access: the flush ends it instead, and
// writes the others'. A cold review found the whole flush failing.
func TestFlushEndsADamagedSession(t *testing.T) {
	e := newEnv(t, Config{MaxAge: 24 * time.Hour, IdleTimeout: 24 * time.Hour, TouchInterval: time.Minute})
	a, b := e.create("user-a"), e.create("user-b")
	names, err := filepath.Glob(filepath.Join(e.dir, "log.*.jsonl"))
	if err != nil || len(names) == 0 {
		t.Fatalf("the log: %v %v", names, err)
	}
	path := names[len(names)-1]
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte(`"id":"`+e.m.key(a.ID)+`"`))
	j := bytes.Index(data[i:], []byte(`"sealed":"`))
	if i < 0 || j < 0 {
		t.Fatal("a's record is not in the log")
	}
	at := i + j + len(`"sealed":"`) + 5
	damaged := byte('A')
	if data[at] == damaged {
		damaged = 'B'
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{damaged}, int64(at)); err != nil {
		t.Fatal(err)
	}
	f.Close()

	e.clk.Add(10 * time.Minute)
	if _, _, err := e.m.Validate(b.ID, homeIP); err != nil {
		t.Fatal(err)
	}
	// a, met before the damage, is still touched (its opened fields are
	// kept in memory).
	e.m.Touch(a.ID)
	if err := e.m.flush(e.cfg.TouchInterval); err != nil {
		t.Fatalf("flush: got %v, want the others written", err)
	}
	r, ok := e.m.tab.Get(e.m.key(b.ID))
	if got := fromSecs(r.Accessed); !ok || !got.Equal(toSecond(e.clk.Now())) {
		t.Errorf("b's last access in the store after the flush: got %v (found %v), want %v", got, ok, toSecond(e.clk.Now()))
	}
	if _, ok := e.m.tab.Get(e.m.key(a.ID)); ok {
		t.Error("the damaged session is still in the store after the flush, want it ended")
	}
	if _, _, err := e.m.Validate(a.ID, homeIP); err == nil {
		t.Error("the damaged session still validates after the flush")
	}
	if err := e.m.flush(e.cfg.TouchInterval); err != nil {
		t.Errorf("the next flush: got %v, want nil", err)
	}
}
