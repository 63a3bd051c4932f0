package storage

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// writeUsersLog writes a log of n lines, line i putting user u<i>.
func writeUsersLog(t *testing.T, dir string, n int) (string, []byte) {
	t.Helper()
	db := openDB(t, dir, Options{Sync: SyncNone})
	for i := range n {
		mustCommit(t, db.s, db.users.Put(user{ID: fmt.Sprintf("u%d", i+1), Email: fmt.Sprintf("u%d@x", i+1)}))
	}
	db.s.Close()
	path := filepath.Join(dir, logName(1))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, data
}

// TestRepairKeepsIntactRecords: damage anywhere (one flipped byte in the
// middle, a bad checksum in the last complete line, a flipped newline
// that merges two lines) is reported by Verify, and Repair keeps every
// intact record and drops only the damaged one, saying which by sequence
// number, table and id. The old repair cut at the first damage.
func TestRepairKeepsIntactRecords(t *testing.T) {
	const n = 487
	tests := []struct {
		name     string
		line     int // 1-based line to damage
		at       func(line []byte) int
		wantLost []LostBytes
		lostSeqs []uint64
		kept     int
	}{
		{"a byte in the middle of the log", 244, func(l []byte) int { return len(l) - 5 },
			[]LostBytes{{Seq: 244, Ops: []LostOp{{Table: "users", ID: "u244"}}}}, []uint64{244}, n - 1},
		{"checksum of the last complete line", n, func(l []byte) int { return len(framePrefix) + 2 },
			[]LostBytes{{Seq: n, Ops: []LostOp{{Table: "users", ID: fmt.Sprintf("u%d", n)}}}}, nil, n - 1},
		{"a newline", 100, func(l []byte) int { return len(l) - 1 },
			[]LostBytes{{Bytes: 1, Reason: "a damaged newline"}}, nil, n},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path, full := writeUsersLog(t, dir, n)
			offs := lineOffsets(full)
			start := offs[tt.line-1]
			end := len(full)
			if tt.line < n {
				end = offs[tt.line]
			}
			damaged := bytes.Clone(full)
			pos := start + tt.at(full[start:end])
			damaged[pos] ^= 0x04
			if err := os.WriteFile(path, damaged, 0o600); err != nil {
				t.Fatal(err)
			}
			var ce *CorruptError
			if _, err := Verify(nil, dir); !errors.As(err, &ce) || ce.Offset != int64(start) {
				t.Fatalf("Verify: got %v, want damage at %d", err, start)
			}
			plan, err := PlanRepair(nil, dir, RepairOptions{})
			if err != nil {
				t.Fatalf("PlanRepair: %v", err)
			}
			if got, _ := os.ReadFile(path); !bytes.Equal(got, damaged) {
				t.Fatal("PlanRepair changed the log")
			}
			rep, err := Repair(nil, dir, RepairOptions{})
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if plan.Kept != rep.Kept || !reflect.DeepEqual(plan.Lost, rep.Lost) {
				t.Errorf("PlanRepair said %d kept, %+v lost; Repair did %d, %+v", plan.Kept, plan.Lost, rep.Kept, rep.Lost)
			}
			if rep.Kept != tt.kept {
				t.Errorf("kept %d lines, want %d", rep.Kept, tt.kept)
			}
			if !reflect.DeepEqual(rep.LostSeqs, tt.lostSeqs) {
				t.Errorf("lost sequence numbers: got %v, want %v", rep.LostSeqs, tt.lostSeqs)
			}
			if len(rep.Lost) != len(tt.wantLost) {
				t.Fatalf("lost: got %+v, want %+v", rep.Lost, tt.wantLost)
			}
			for i, w := range tt.wantLost {
				g := rep.Lost[i]
				if g.Seq != w.Seq || !reflect.DeepEqual(g.Ops, w.Ops) || (w.Reason != "" && g.Reason != w.Reason) || (w.Bytes != 0 && g.Bytes != w.Bytes) {
					t.Errorf("lost %d: got %+v, want %+v", i, g, w)
				}
			}
			db := openDB(t, dir, Options{Sync: SyncNone})
			defer db.s.Close()
			lost := map[string]bool{}
			for _, l := range tt.wantLost {
				for _, o := range l.Ops {
					lost[o.ID] = true
				}
			}
			for i := range n {
				id := fmt.Sprintf("u%d", i+1)
				if _, ok := db.users.Get(id); ok == lost[id] {
					t.Errorf("%s: present %v after repair, want %v", id, ok, !lost[id])
				}
			}
			mustCommit(t, db.s, db.users.Put(user{ID: "next", Email: "next@x"}))
		})
	}
}

// FuzzSalvage feeds arbitrary log bytes to the repair: it must not panic,
// and what it writes must be a clean log of exactly the lines it kept.
func FuzzSalvage(f *testing.F) {
	valid := append(line(1, "u1"), line(2, "u2", "u3")...)
	f.Add(valid)
	f.Add(append(bytes.Clone(valid), "garbage\n"...))
	f.Add(append(line(3, "x"), valid[:len(valid)-3]...))
	f.Add([]byte("\n\n{\"crc\":\"00000000\",\"d\":{\"seq\":1,\"ops\":[{\"t\":\"a\",\"id\":\"b\",\"del\":true}]}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fsys := newMemFS()
		fsys.MkdirAll("/d", 0o700)
		w, _ := fsys.OpenFile("/d/log", os.O_RDWR|os.O_CREATE, 0o600)
		w.Write(data)
		w.Close()
		var out bytes.Buffer
		var rep Report
		if err := salvage(fsys, "/d/log", &out, RepairOptions{DeleteNamed: len(data)%2 == 0}, &rep); err != nil {
			t.Fatalf("salvage: %v", err)
		}
		res, err := scanLog(bytes.NewReader(out.Bytes()), "out", func(int64, uint64, []byte) error { return nil })
		want := rep.Kept
		for _, l := range rep.Lost {
			if len(l.Deleted) > 0 {
				want++ // its deletes, written again
			}
		}
		if err != nil || res.Lines != want || res.TornBytes() != 0 {
			t.Fatalf("salvaged log: %+v, %v; want %d clean lines", res, err, want)
		}
	})
}

// TestRepairKeepsDeletesDeleted: a flipped byte in a line that deletes
// records must not bring them back: Repair writes the deletes it can read
// again in the line's place (before a later put of the same id, which
// still wins), and with DeleteNamed deletes the records a damaged put
// names too. The old repair dropped the line and revived the records.
func TestRepairKeepsDeletesDeleted(t *testing.T) {
	tests := []struct {
		name        string
		opt         RepairOptions
		wantGone    []string // users absent after repair
		wantPresent []string
		wantDeleted []LostOp
	}{
		{"deletes", RepairOptions{}, []string{"u1"}, []string{"u3", "u4"},
			[]LostOp{{Table: "users", ID: "u1", Del: true}, {Table: "users", ID: "u2", Del: true}}},
		{"every record named", RepairOptions{DeleteNamed: true}, []string{"u1", "u5"}, []string{"u3", "u4"},
			[]LostOp{{Table: "users", ID: "u1", Del: true}, {Table: "users", ID: "u2", Del: true}, {Table: "users", ID: "u5", Del: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			db := openDB(t, dir, Options{Sync: SyncNone})
			for _, id := range []string{"u1", "u2", "u3", "u4"} {
				mustCommit(t, db.s, db.users.Put(user{ID: id, Email: id + "@x"}))
			}
			// Line 5, the one damaged: deletes u1 and u2 and puts u5.
			mustCommit(t, db.s, db.users.Delete("u1"), db.users.Delete("u2"), db.users.Put(user{ID: "u5", Email: "u5@x"}))
			mustCommit(t, db.s, db.users.Put(user{ID: "u2", Email: "u2-again@x"})) // a later put wins
			db.s.Close()
			path := filepath.Join(dir, logName(1))
			full, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			offs := lineOffsets(full)
			full[offs[4]+len(framePrefix)+2] ^= 0x04 // the checksum of line 5
			if err := os.WriteFile(path, full, 0o600); err != nil {
				t.Fatal(err)
			}
			rep, err := Repair(nil, dir, tt.opt)
			if err != nil {
				t.Fatalf("Repair: %v", err)
			}
			if len(rep.Lost) != 1 || !reflect.DeepEqual(rep.Lost[0].Deleted, tt.wantDeleted) {
				t.Fatalf("lost: got %+v, want one line with deletes %+v", rep.Lost, tt.wantDeleted)
			}
			db = openDB(t, dir, Options{Sync: SyncNone})
			for _, id := range tt.wantGone {
				if u, ok := db.users.Get(id); ok {
					t.Errorf("%s: present after repair (%+v), want deleted", id, u)
				}
			}
			for _, id := range tt.wantPresent {
				if _, ok := db.users.Get(id); !ok {
					t.Errorf("%s: missing after repair, want present", id)
				}
			}
			if u, ok := db.users.Get("u2"); !ok || u.Email != "u2-again@x" {
				t.Errorf("u2 after repair: got %+v, %v; want the later put u2-again@x", u, ok)
			}
		})
	}
}
