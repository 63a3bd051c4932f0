package storage

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"syscall"
	"testing"
	"time"
)

// model is what the test schema should hold.
type model struct {
	Users    map[string]user
	Creds    map[string]credential
	Sessions map[string]session
}

func newModel() *model {
	return &model{Users: map[string]user{}, Creds: map[string]credential{}, Sessions: map[string]session{}}
}

func (m *model) clone() *model {
	return &model{Users: maps.Clone(m.Users), Creds: maps.Clone(m.Creds), Sessions: maps.Clone(m.Sessions)}
}

// String is the model as JSON, without the sessions expired at epoch.
func (m *model) String() string {
	c := m.clone()
	maps.DeleteFunc(c.Sessions, func(_ string, s session) bool { return !s.ExpiresAt.After(epoch) })
	b, err := json.Marshal(c)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// dump reads a store into a model.
func dump(db *testDB) *model {
	m := newModel()
	db.users.Scan(func(u user) bool { m.Users[u.ID] = u; return true })
	db.creds.Scan(func(c credential) bool { m.Creds[c.ID] = c; return true })
	var ids []string
	db.sessions.Scan(func(s session) bool { ids = append(ids, s.ID); return true })
	for _, id := range ids {
		s, err := db.sessions.Load(id)
		if err != nil {
			panic(fmt.Sprintf("load session %s: %v", id, err))
		}
		m.Sessions[id] = s
	}
	return m
}

// checkIndexes fails the test if a unique index is violated or an index
// disagrees with the records.
func checkIndexes(t *testing.T, db *testDB) {
	t.Helper()
	emails := map[string]string{}
	db.users.Scan(func(u user) bool {
		if u.Deleted {
			return true
		}
		if other, dup := emails[u.Email]; dup {
			t.Errorf("live users %s and %s share email %q", other, u.ID, u.Email)
		}
		emails[u.Email] = u.ID
		return true
	})
	for email, id := range emails {
		if got, ok := db.users.Lookup("email", email); !ok || got.ID != id {
			t.Errorf("Lookup(email, %q) = %q, %v; want %q", email, got.ID, ok, id)
		}
	}
	var creds []credential
	db.creds.Scan(func(c credential) bool { creds = append(creds, c); return true })
	for _, c := range creds {
		found := false
		for _, f := range db.creds.Find("user", c.UserID) {
			found = found || f.ID == c.ID
		}
		if !found {
			t.Errorf("Find(user, %q) misses credential %s", c.UserID, c.ID)
		}
	}
}

// step is one action of the crash workload: a commit, or a compaction.
type step struct {
	ops     func(db *testDB) []Op
	apply   func(m *model)
	compact bool
}

func sess(id, userID string, ttl time.Duration) session {
	return session{ID: id, UserID: userID, ExpiresAt: epoch.Add(ttl), Meta: map[string]string{"ip": "192.0.2." + id[1:]}}
}

// crashWorkload touches every kind of op, moves unique keys between
// records, expires sessions, and compacts twice.
func crashWorkload() []step {
	put := func(v user) step {
		return step{
			ops:   func(db *testDB) []Op { return []Op{db.users.Put(v)} },
			apply: func(m *model) { m.Users[v.ID] = v },
		}
	}
	return []step{
		put(user{ID: "u1", Email: "a@x", Name: "Ann"}),
		put(user{ID: "u2", Email: "b@x"}),
		{
			ops: func(db *testDB) []Op {
				return []Op{
					db.creds.Insert(credential{ID: "c1", UserID: "u1", Secret: "k1"}),
					db.creds.Insert(credential{ID: "c2", UserID: "u1", Secret: "k2"}),
					db.sessions.Insert(sess("s1", "u1", time.Hour)),
					db.sessions.Insert(sess("s2", "u1", -time.Hour)),
				}
			},
			apply: func(m *model) {
				m.Creds["c1"] = credential{ID: "c1", UserID: "u1", Secret: "k1"}
				m.Creds["c2"] = credential{ID: "c2", UserID: "u1", Secret: "k2"}
				m.Sessions["s1"] = sess("s1", "u1", time.Hour)
				m.Sessions["s2"] = sess("s2", "u1", -time.Hour)
			},
		},
		{
			ops: func(db *testDB) []Op {
				return []Op{db.users.Update("u1", func(u *user) error { u.Name = "Anne"; return nil })}
			},
			apply: func(m *model) { u := m.Users["u1"]; u.Name = "Anne"; m.Users["u1"] = u },
		},
		{ // soft-delete u2 and give its email to u3
			ops: func(db *testDB) []Op {
				return []Op{
					db.users.Update("u2", func(u *user) error { u.Deleted = true; return nil }),
					db.users.Insert(user{ID: "u3", Email: "b@x"}),
				}
			},
			apply: func(m *model) {
				m.Users["u2"] = user{ID: "u2", Email: "b@x", Deleted: true}
				m.Users["u3"] = user{ID: "u3", Email: "b@x"}
			},
		},
		{compact: true},
		{ // delete a user and everything of theirs in one line
			ops: func(db *testDB) []Op {
				return []Op{db.users.Delete("u1"), db.creds.Delete("c1"), db.creds.Delete("c2"), db.sessions.Delete("s1")}
			},
			apply: func(m *model) {
				delete(m.Users, "u1")
				delete(m.Creds, "c1")
				delete(m.Creds, "c2")
				delete(m.Sessions, "s1")
			},
		},
		put(user{ID: "u4", Email: "a@x"}),
		{
			ops: func(db *testDB) []Op {
				return []Op{db.sessions.Put(sess("s3", "u3", 2*time.Hour)), db.sessions.Put(sess("s4", "u4", -time.Minute))}
			},
			apply: func(m *model) {
				m.Sessions["s3"] = sess("s3", "u3", 2*time.Hour)
				m.Sessions["s4"] = sess("s4", "u4", -time.Minute)
			},
		},
		{ // move an email from u3 to u5 in one commit
			ops: func(db *testDB) []Op {
				return []Op{
					db.users.Update("u3", func(u *user) error { u.Email = "c@x"; return nil }),
					db.users.Insert(user{ID: "u5", Email: "b@x"}),
				}
			},
			apply: func(m *model) {
				m.Users["u3"] = user{ID: "u3", Email: "c@x"}
				m.Users["u5"] = user{ID: "u5", Email: "b@x"}
			},
		},
		{compact: true},
		{
			ops: func(db *testDB) []Op { return []Op{db.users.Delete("u2"), db.users.Put(user{ID: "u6", Email: "d@x"})} },
			apply: func(m *model) {
				delete(m.Users, "u2")
				m.Users["u6"] = user{ID: "u6", Email: "d@x"}
			},
		},
		{
			ops: func(db *testDB) []Op {
				return []Op{db.sessions.Update("s3", func(s *session) error { s.Meta = map[string]string{"device": "pi"}; return nil })}
			},
			apply: func(m *model) {
				s := m.Sessions["s3"]
				s.Meta = map[string]string{"device": "pi"}
				m.Sessions["s3"] = s
			},
		},
		put(user{ID: "u7", Email: "e@x"}),
	}
}

const crashDir = "/data/main"

// runWorkload opens a store on fsys and runs the workload until the first
// error. It returns the model of the acknowledged commits, and the model
// with the failed commit applied too (the same if none failed or a
// compaction failed).
func runWorkload(fsys *memFS) (acked, inflight *model, err error) {
	acked = newModel()
	db := newDB(crashDir, Options{FS: fsys, CompactMinBytes: 1 << 30})
	if err := db.s.Open(); err != nil {
		return acked, acked, fmt.Errorf("open: %w", err)
	}
	defer db.s.Close()
	for i, st := range crashWorkload() {
		if st.compact {
			if err := db.s.Compact(); err != nil {
				return acked, acked, fmt.Errorf("step %d: compact: %w", i, err)
			}
			continue
		}
		if err := db.s.Commit(st.ops(db)...); err != nil {
			inflight = acked.clone()
			st.apply(inflight)
			return acked, inflight, fmt.Errorf("step %d: commit: %w", i, err)
		}
		st.apply(acked)
	}
	return acked, acked, nil
}

// TestCrashConsistency crashes at every file operation of the workload, in
// each crash mode, and checks that the store opens with every acknowledged
// write, at most the one unacknowledged commit in flight, and consistent
// unique indexes; and that it then takes writes again.
func TestCrashConsistency(t *testing.T) {
	clean := newMemFS()
	final, _, err := runWorkload(clean)
	if err != nil {
		t.Fatalf("workload without a crash: %v", err)
	}
	if got := clean.counts["rename"]; got != 2 {
		t.Fatalf("workload made %d renames, want 2 compactions", got)
	}
	total := clean.ops
	crashes := 0
	for k := 1; k <= total; k++ {
		fsys := newMemFS()
		fsys.crashAt = k
		acked, inflight, werr := runWorkload(fsys)
		// A crash in Close, after the workload, leaves werr nil.
		if werr != nil && !errors.Is(werr, errCrashed) {
			t.Fatalf("crash at op %d: workload failed with %v, want the crash", k, werr)
		}
		for _, mode := range crashModes {
			after := fsys.afterCrash(mode)
			if after == nil {
				t.Fatalf("crash at op %d: no snapshot", k)
			}
			crashes++
			name := fmt.Sprintf("op %d (%s) %v", k, mode, werr)
			db := newDB(crashDir, Options{FS: after})
			if err := db.s.Open(); err != nil {
				t.Errorf("%s: reopen: %v", name, err)
				continue
			}
			got := dump(db).String()
			if got != acked.String() && got != inflight.String() {
				t.Errorf("%s: after reopen\n got %s\nwant %s\n  or %s", name, got, acked, inflight)
			}
			checkIndexes(t, db)
			if err := db.s.Commit(db.users.Put(user{ID: "after", Email: "after@x"})); err != nil {
				t.Errorf("%s: commit after reopen: %v", name, err)
			}
			db.s.Close()
			db = newDB(crashDir, Options{FS: after})
			if err := db.s.Open(); err != nil {
				t.Errorf("%s: second reopen: %v", name, err)
				continue
			}
			if _, ok := db.users.Get("after"); !ok {
				t.Errorf("%s: commit after reopen lost", name)
			}
			db.s.Close()
		}
	}
	t.Logf("%d file operations, %d crash states checked; final state %s", total, crashes, final)
}

// TestInjectedErrors fails one write, fsync, rename or directory fsync
// with EIO: the commit or compaction that hit it is not acknowledged, the
// store refuses every later write with ErrFailed, reads still serve the
// last durable state, and a restart recovers. ENOSPC is not for good:
// TestDiskFull.
func TestInjectedErrors(t *testing.T) {
	tests := []struct {
		kind    string
		n       int // which operation of that kind fails; counted from Open
		err     syscall.Errno
		compact bool // the failure hits a compaction, not a commit
	}{
		{"write", 3, syscall.EIO, false},
		{"sync", 2, syscall.EIO, false},
		{"write", 4, syscall.EIO, true}, // the compaction's temp file
		{"sync", 3, syscall.EIO, true},
		{"rename", 1, syscall.EIO, true},
		{"syncdir", 4, syscall.EIO, true}, // Open syncs 3 directories
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %d %v", tt.kind, tt.n, tt.err), func(t *testing.T) {
			fsys := newMemFS()
			fsys.failAt(tt.kind, tt.n, tt.err)
			db := newDB(crashDir, Options{FS: fsys, CompactMinBytes: 1 << 30})
			if err := db.s.Open(); err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer db.s.Close()
			// The lock file takes write 1.
			mustCommit(t, db.s, db.users.Put(user{ID: "u1", Email: "a@x"}))
			var err error
			if tt.compact {
				mustCommit(t, db.s, db.users.Put(user{ID: "u2", Email: "b@x"}))
				err = db.s.Compact()
			} else {
				err = db.s.Commit(db.users.Put(user{ID: "u2", Email: "b@x"}))
			}
			if !errors.Is(err, ErrFailed) || !errors.Is(err, tt.err) {
				t.Fatalf("got %v, want ErrFailed wrapping %v", err, tt.err)
			}
			if err := db.s.Err(); !errors.Is(err, ErrFailed) {
				t.Errorf("Err() = %v, want ErrFailed", err)
			}
			if _, ok := db.users.Get("u2"); ok != tt.compact {
				t.Errorf("Get(u2) found %v, want %v", ok, tt.compact)
			}
			if _, ok := db.users.Get("u1"); !ok {
				t.Errorf("Get(u1): acknowledged record not readable")
			}
			writes, syncs := fsys.counts["write"], fsys.counts["sync"]
			if err := db.s.Commit(db.users.Put(user{ID: "u3", Email: "c@x"})); !errors.Is(err, ErrFailed) {
				t.Errorf("next Commit: got %v, want ErrFailed", err)
			}
			if err := db.s.Compact(); !errors.Is(err, ErrFailed) {
				t.Errorf("next Compact: got %v, want ErrFailed", err)
			}
			if fsys.counts["write"] != writes || fsys.counts["sync"] != syncs {
				t.Errorf("a failed store wrote or synced again")
			}
			db.s.Close()

			// Restart on what is on disk (everything the OS has, as after
			// the process exits) and on what a power cut would leave.
			fsys.mu.Lock()
			fsys.crashNow()
			fsys.mu.Unlock()
			for _, mode := range crashModes {
				db := newDB(crashDir, Options{FS: fsys.afterCrash(mode)})
				if err := db.s.Open(); err != nil {
					t.Fatalf("%s: reopen: %v", mode, err)
				}
				if _, ok := db.users.Get("u1"); !ok {
					t.Errorf("%s: acknowledged u1 lost", mode)
				}
				if tt.compact {
					if _, ok := db.users.Get("u2"); !ok {
						t.Errorf("%s: acknowledged u2 lost", mode)
					}
				}
				mustCommit(t, db.s, db.users.Put(user{ID: "u4", Email: "d@x"}))
				db.s.Close()
			}
		})
	}
}
