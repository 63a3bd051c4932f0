package items

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

	"searchsvc/integrations"
	"searchsvc/storage"
)

// Environment of the kill -9 test's child process.
const (
	itemsKillDirEnv = "ITEMS_KILL_DIR" // set: this process is the child, writing to this dir
	itemsKillTagEnv = "ITEMS_KILL_TAG" // prefix of the provider ids the child writes
)

// killOwner owns every item of the kill -9 test.
var killOwner = Owner{UserID: "u1", RecordID: "r1", Integration: "gmail"}

// killStore opens the item store of the kill -9 test in dir; a small
// compaction floor makes kills land in compactions too, which copy the
// cold items to a new log and move every position memory keeps, and small
// packs make them land in new packs and compactions of packs.
func killStore(tb testing.TB, dir string) (*storage.Store, *Store) {
	st := storage.New(filepath.Join(dir, "main"), storage.Options{CompactMinBytes: 16 << 10})
	s := New(st, testVault(tb, 3), filepath.Join(dir, "items"))
	s.content.packMax = 8 << 10
	return st, s
}

// killText is the text the kill -9 test stores for the item with
// provider id pid: a few hundred bytes, as a short mail's.
func killText(pid string) string { return strings.Repeat("text of "+pid+" ", 12) }

// TestItemsKill runs a child process that stores items with several
// goroutines (each commit: a new item, and every other one the soft
// delete of the one before it, which the writer reads back from the log)
// and prints each item's provider id once its Commit returned nil, kills
// it with SIGKILL at a random moment, reopens the store and checks that
// nothing acknowledged is lost: each acknowledged item reads back whole,
// its sealed metadata opening to what was stored, live or deleted as the
// commits left it, its text reading back (from a pack the start-up
// sweep may have had to finish compacting), and the user's page holds
// exactly the live ones.
// ITEMS_CRASH_CYCLES sets the number of cycles (default 20).
func TestItemsKill(t *testing.T) {
	if os.Getenv(itemsKillDirEnv) != "" {
		t.Skip("running as the child")
	}
	cycles := 20
	if v := os.Getenv("ITEMS_CRASH_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("ITEMS_CRASH_CYCLES=%q: want a positive number", v)
		}
		cycles = n
	}
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d, %d cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, seed))
	dir := t.TempDir()
	var acked []string // provider ids, in each worker's order
	compacted := 0
	for c := range cycles {
		logs, _ := filepath.Glob(filepath.Join(dir, "main", "log.*.jsonl"))
		acked = append(acked, runItemsKillChild(t, dir, fmt.Sprintf("c%d", c), rng)...)
		st, s := killStore(t, dir)
		if err := st.Open(); err != nil {
			t.Fatalf("cycle %d (seed %d): reopen after kill: %v", c, seed, err)
		}
		if after, _ := filepath.Glob(filepath.Join(dir, "main", "log.*.jsonl")); len(logs) > 0 && after[len(after)-1] != logs[len(logs)-1] {
			compacted++
		}
		if _, _, err := s.Sweep(); err != nil {
			t.Fatalf("cycle %d (seed %d): sweep after kill: %v", c, seed, err)
		}
		if olds, _ := filepath.Glob(filepath.Join(dir, "items", "*", "pack-*.old")); len(olds) > 0 {
			t.Fatalf("cycle %d: the sweep left %q", c, olds)
		}
		checkKilled(t, c, s, acked)
		st.Close()
	}
	t.Logf("%d kills, %d acknowledged items, none lost; %d cycles compacted", cycles, len(acked), compacted)
	if compacted == 0 {
		t.Errorf("no cycle compacted the log: the test does not cover moving the cold items")
	}
	// Packs compacted away leave gaps in the numbers.
	packs, _ := filepath.Glob(filepath.Join(dir, "items", killOwner.RecordID, "pack-*"))
	newest := 0
	for _, p := range packs {
		if n, _, ok := parsePackName(filepath.Base(p)); ok {
			newest = max(newest, n)
		}
	}
	t.Logf("%d packs, the newest pack-%d", len(packs), newest)
	if newest-len(packs) == 0 {
		t.Errorf("no pack was compacted: the test does not cover moving the texts")
	}
}

// checkKilled checks the store against the acknowledged items, each
// "<provider id> <item id>". Worker w's nth item has provider id
// <tag>-<w>-<n>; the commit of an odd n deleted item n-1, so an item the
// acknowledged commit after it deleted must be deleted, and any other
// acknowledged item live, or deleted by a commit that landed unacknowledged.
func checkKilled(t *testing.T, cycle int, s *Store, acked []string) {
	t.Helper()
	set := make(map[string]bool, len(acked))
	for _, a := range acked {
		pid, _, _ := strings.Cut(a, " ")
		set[pid] = true
	}
	byID := make(map[string]ItemRecord)
	live := 0
	for _, it := range s.ForRecord(killOwner.RecordID) {
		byID[it.ID] = it
		if it.Live() {
			live++
		}
	}
	for _, a := range acked {
		pid, id, _ := strings.Cut(a, " ")
		i := strings.LastIndexByte(pid, '-')
		n, _ := strconv.Atoi(pid[i+1:])
		mustDelete := n%2 == 0 && set[pid[:i+1]+strconv.Itoa(n+1)]
		it, ok := byID[id]
		switch {
		case !ok:
			t.Fatalf("cycle %d: acknowledged item %s (%s) lost", cycle, pid, id)
		case mustDelete && it.Live():
			t.Fatalf("cycle %d: item %s live, want it deleted by the acknowledged commit after it", cycle, pid)
		case !it.Live() && (n%2 == 1 || it.Key != "" || it.Meta != nil):
			t.Fatalf("cycle %d: item %s deleted (%+v), which no commit did", cycle, pid, it)
		case it.Live():
			got, err := s.Get(killOwner.UserID, id)
			if err != nil {
				t.Fatalf("cycle %d: Get(%s): %v", cycle, id, err)
			}
			m, err := s.OpenMeta(&got)
			if err != nil || m.ProviderID != pid || m.Title != "title "+pid {
				t.Fatalf("cycle %d: item %s reads back as %+v, %v; want provider id %s", cycle, id, m, err, pid)
			}
			if text, err := s.Text(&got); err != nil || text != killText(pid) {
				t.Fatalf("cycle %d: item %s's text reads back as %q, %v", cycle, pid, text, err)
			}
		}
	}
	if got := len(s.LiveIDs(killOwner.UserID)); got != live {
		t.Fatalf("cycle %d: page order holds %d items, want the %d live", cycle, got, live)
	}
}

// runItemsKillChild starts the child, kills it at a random moment and
// returns the provider ids it acknowledged.
func runItemsKillChild(t *testing.T, dir, tag string, rng *rand.Rand) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestItemsKillHelper$", "-test.count=1")
	cmd.Env = append(os.Environ(), itemsKillDirEnv+"="+dir, itemsKillTagEnv+"="+tag)
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
	// Killed after a random number of acknowledgements, not a random
	// time: however slow the machine (-race), cycles write enough for
	// compactions to run.
	target, enough := 1+rng.IntN(400), make(chan struct{})
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
				if len(ids) == target {
					close(enough)
				}
			default:
				problems = append(problems, line)
			}
		}
	})
	if rng.IntN(5) == 0 { // sometimes during Open: the replay
		time.Sleep(time.Duration(rng.IntN(30_000)) * time.Microsecond)
	} else {
		select {
		case <-ready:
		case <-time.After(time.Minute):
			t.Errorf("child never got ready")
		}
		select {
		case <-enough:
		case <-time.After(time.Minute):
		}
		time.Sleep(time.Duration(rng.IntN(5_000)) * time.Microsecond)
	}
	cmd.Process.Kill()
	wg.Wait()
	werr := cmd.Wait()
	if len(problems) > 0 || (werr != nil && !strings.Contains(werr.Error(), "killed")) {
		t.Fatalf("child %s: %v; reported %q; stderr:\n%s", tag, werr, problems, stderr.String())
	}
	return ids
}

// TestItemsKillHelper is TestItemsKill's child process, not a test of its
// own.
func TestItemsKillHelper(t *testing.T) {
	dir := os.Getenv(itemsKillDirEnv)
	if dir == "" {
		t.Skip("only runs as TestItemsKill's child")
	}
	tag := os.Getenv(itemsKillTagEnv)
	var mu sync.Mutex
	say := func(s string) {
		mu.Lock()
		defer mu.Unlock()
		os.Stdout.Write([]byte(s + "\n")) // one write: atomic on a pipe
	}
	st, s := killStore(t, dir)
	if err := st.Open(); err != nil {
		say("open failed: " + err.Error())
		os.Exit(3)
	}
	say("ready")
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			var prev, deleted string // the item before, the last deleted, by id
			var prevIt ItemRecord
			for n := 0; ; n++ {
				pid := fmt.Sprintf("%s-%d-%d", tag, w, n)
				it, err := s.NewItem(killOwner, &integrations.Item{ProviderID: pid, Title: "title " + pid,
					Date: now.Add(time.Duration(n) * time.Second)}, now)
				if err != nil {
					say("new item: " + err.Error())
					os.Exit(4)
				}
				staged, err := s.Stage(&it, killText(pid))
				if err == nil {
					err = s.Publish([]Staged{staged})
				}
				if err != nil {
					say("stage: " + err.Error())
					os.Exit(4)
				}
				ops := []storage.Op{s.InsertOp(it)}
				if n%2 == 1 {
					ops = append(ops, s.scrubOp(prev, now))
				}
				if deleted != "" {
					// Written again as it is: dead records enough for
					// compactions to run.
					ops = append(ops, s.scrubOp(deleted, now))
				}
				if err := st.Commit(ops...); err != nil {
					say("commit failed: " + err.Error())
					os.Exit(4)
				}
				say("ack " + pid + " " + it.ID)
				if n%2 == 1 {
					deleted = prev
					// Its text erased, and packs half dead compacted.
					if err := s.RemoveFiles([]ItemRecord{prevIt}); err != nil {
						say("remove text: " + err.Error())
						os.Exit(4)
					}
				}
				prev, prevIt = it.ID, it
			}
		})
	}
	wg.Wait()
}
