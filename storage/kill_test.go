package storage

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Environment of the kill -9 test's child process.
const (
	killDirEnv = "STORAGE_KILL_DIR" // set: this process is the child, writing to this dir
	killTagEnv = "STORAGE_KILL_TAG" // prefix of the ids the child writes
)

// TestKill runs a child process that commits with several goroutines and
// prints each id once its Commit has returned nil, kills it with SIGKILL at
// a random moment (during Open, writes, or compaction), reopens the store
// and checks that every acknowledged id is there. STORAGE_CRASH_CYCLES sets
// the number of cycles (default 100); STORAGE_CRASH_SEED the random seed.
func TestKill(t *testing.T) {
	if os.Getenv(killDirEnv) != "" {
		t.Skip("running as the child")
	}
	cycles := 100
	if v := os.Getenv("STORAGE_CRASH_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("STORAGE_CRASH_CYCLES=%q: want a positive number", v)
		}
		cycles = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("STORAGE_CRASH_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("STORAGE_CRASH_SEED=%q: %v", v, err)
		}
	}
	t.Logf("STORAGE_CRASH_SEED=%d, %d cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, seed))

	var dir string
	var acked []string
	total, opens, compacted := 0, 0, 0
	lastGen := uint64(0)
	for c := range cycles {
		if c%25 == 0 { // a fresh store now and then keeps replay short
			dir = filepath.Join(t.TempDir(), "store")
			acked, lastGen = acked[:0], 0
		}
		ids := runKillChild(t, dir, fmt.Sprintf("c%d", c), rng)
		acked = append(acked, ids...)
		total += len(ids)

		db := newDB(dir, Options{})
		if err := db.s.Open(); err != nil {
			t.Fatalf("cycle %d (seed %d): reopen after kill: %v", c, seed, err)
		}
		opens++
		if db.s.gen > max(lastGen, 1) {
			compacted++ // the child compacted during this cycle
		}
		lastGen = db.s.gen
		missing := 0
		for _, id := range acked {
			_, ok := db.users.Get(id)
			// The session of the same commit is in the cold table: its
			// whole record is read back from the log.
			s, err := db.sessions.Load(id)
			if !ok || err != nil || s.Meta["id"] != id {
				missing++
				if missing <= 5 {
					t.Errorf("cycle %d (seed %d): acknowledged id %s lost (user found %v; session %+v, %v)", c, seed, id, ok, s, err)
				}
			}
		}
		db.s.Close()
		if missing > 0 {
			t.Fatalf("cycle %d: %d of %d acknowledged ids lost", c, missing, len(acked))
		}
	}
	t.Logf("%d kills, %d acknowledged ids, %d opens, none failed; %d cycles compacted", cycles, total, opens, compacted)
}

// runKillChild starts the child, kills it at a random moment and returns
// the ids it acknowledged.
func runKillChild(t *testing.T, dir, tag string, rng *rand.Rand) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), killDirEnv+"="+dir, killTagEnv+"="+tag)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan struct{})
	var ids, problems []string
	var wg sync.WaitGroup
	wg.Go(func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // EOF after the kill; a partial last line is not an ack
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "ready":
				close(ready)
			case strings.HasPrefix(line, "ack "):
				ids = append(ids, strings.TrimPrefix(line, "ack "))
			default:
				problems = append(problems, line)
			}
		}
	})
	if rng.IntN(5) == 0 { // sometimes during Open: replay, truncation
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	} else {
		select {
		case <-ready:
		case <-time.After(time.Minute):
			t.Errorf("child never got ready")
		}
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	}
	cmd.Process.Kill()
	wg.Wait()
	werr := cmd.Wait()
	if len(problems) > 0 || (werr != nil && !strings.Contains(werr.Error(), "killed")) {
		t.Fatalf("child %s: %v; reported %q; stderr:\n%s", tag, werr, problems, stderr.String())
	}
	return ids
}

// TestKillHelper is TestKill's child process, not a test of its own.
func TestKillHelper(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("only runs as TestKill's child")
	}
	tag := os.Getenv(killTagEnv)
	var mu sync.Mutex
	say := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write([]byte(s + "\n")) // one write: atomic on a pipe
	}
	// A small compaction floor makes kills land in compactions too.
	db := newDB(dir, Options{CompactMinBytes: 8 << 10})
	if err := db.s.Open(); err != nil {
		say("open failed: " + err.Error())
		os.Exit(3)
	}
	say("ready")
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("%s-%d-%d", tag, w, i)
				// Two overwrites per insert keep dead records ahead of
				// live; a session in the cold table, and an update of
				// the one before it, which reads it back from the log.
				err := db.s.Commit(
					db.users.Insert(user{ID: id, Email: id + "@x"}),
					db.sessions.Insert(session{ID: id, UserID: "u", ExpiresAt: epoch.Add(time.Hour), Meta: map[string]string{"id": id}}),
					db.sessions.UpdateIfExists(fmt.Sprintf("%s-%d-%d", tag, w, i-1), func(s *session) error {
						s.Meta = map[string]string{"id": s.Meta["id"], "next": id}
						return nil
					}),
					db.users.Put(user{ID: fmt.Sprintf("hot-%d-a", w), Email: fmt.Sprintf("hot-%d-a@x", w), Name: id}),
					db.users.Put(user{ID: fmt.Sprintf("hot-%d-b", w), Email: fmt.Sprintf("hot-%d-b@x", w), Name: id}),
				)
				if err != nil {
					say("commit failed: " + err.Error())
					os.Exit(4)
				}
				say("ack " + id)
			}
		})
	}
	wg.Wait()
}
