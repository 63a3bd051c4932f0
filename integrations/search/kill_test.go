package search

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
	killDirEnv = "SEARCH_KILL_DIR" // set: this process is the child, indexing into this dir
	killTagEnv = "SEARCH_KILL_TAG" // prefix of the ids the child adds
)

// letters spells n in letters, so the analyzer keeps it one word.
func letters(n int) string {
	s := ""
	for {
		s += string(rune('a' + n%26))
		n /= 26
		if n == 0 {
			return s
		}
	}
}

// killDoc is document i of a child: a word of its own, and common text.
func killDoc(tag string, i int) Doc {
	return Doc{
		ID: fmt.Sprintf("%s-%d", tag, i), RecordID: "rec", Integration: "imap", Kind: "email",
		Title: "note " + letters(i%50), From: "Someone <someone@example.org>",
		Text: "zq" + tag + "zq" + letters(i) + "x " + strings.Repeat("plain words of a mail body ", 1+i%9),
		Date: time.Unix(int64(1_700_000_000+i), 0),
	}
}

// TestKill runs a child process that indexes documents (with a small
// buffer and merge factor, so it flushes and merges all the time), kills
// it with SIGKILL at a random moment, reopens the index and checks: it
// opens undamaged; every document acknowledged as flushed is there; the
// checkpoint covers the acknowledgements; and once the parent reconciles
// (adds what its "store" holds and the index lacks) every stored document
// is found by a query. SEARCH_CRASH_CYCLES sets the number of cycles
// (default 30); SEARCH_CRASH_SEED the random seed.
func TestKill(t *testing.T) {
	if os.Getenv(killDirEnv) != "" {
		t.Skip("running as the child")
	}
	if testing.Short() {
		t.Skip("kill -9 cycles are long")
	}
	cycles := 30
	if v := os.Getenv("SEARCH_CRASH_CYCLES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SEARCH_CRASH_CYCLES=%q: want a positive number", v)
		}
		cycles = n
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("SEARCH_CRASH_SEED"); v != "" {
		var err error
		if seed, err = strconv.ParseUint(v, 10, 64); err != nil {
			t.Fatalf("SEARCH_CRASH_SEED=%q: %v", v, err)
		}
	}
	t.Logf("SEARCH_CRASH_SEED=%d, %d cycles", seed, cycles)
	rng := rand.New(rand.NewPCG(seed, seed))

	var dir string
	var stored []Doc // the "store": every document a child stored
	torn, merges := 0, 0
	for c := range cycles {
		if c%10 == 0 {
			dir = filepath.Join(t.TempDir(), "index")
			stored = stored[:0]
		}
		tag := letters(c + 26*26)
		n, acked, m := runKillChild(t, dir, tag, rng)
		merges += m
		for i := range n {
			stored = append(stored, killDoc(tag, i))
		}

		// A segment left half written: the kill landed in a flush or a
		// merge (each merge's output is the newest segment number).
		if tmp, _ := filepath.Glob(filepath.Join(dir, userA, "*.seg.tmp")); len(tmp) > 0 {
			torn++
		}
		ix, err := Open(Config{Dir: dir, Vault: testVault, FlushAfter: time.Hour})
		if err != nil {
			t.Fatalf("cycle %d (seed %d): reopen after kill: %v", c, seed, err)
		}
		if got := ix.NeedsRebuild(); len(got) != 0 {
			t.Fatalf("cycle %d (seed %d): a kill damaged the index: %v", c, seed, got)
		}
		if cp := ix.Checkpoint(); cp < uint64(acked) {
			t.Errorf("cycle %d (seed %d): checkpoint %d, want at least %d", c, seed, cp, acked)
		}
		ids, _ := ix.IDs(userA)
		have := map[string]bool{}
		for _, id := range ids {
			have[id] = true
		}
		for i := range acked {
			if id := killDoc(tag, i).ID; !have[id] {
				t.Fatalf("cycle %d (seed %d): flushed document %s lost", c, seed, id)
			}
		}
		var missing []Doc
		for _, d := range stored {
			if !have[d.ID] {
				missing = append(missing, d)
			}
		}
		if err := ix.Add(userA, missing...); err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 20 && len(stored) > 0; k++ {
			d := stored[rng.IntN(len(stored))]
			word := strings.Fields(d.Text)[0]
			res := search(t, ix, userA, Request{Query: Term{Field: FieldText, Text: qword(word)}})
			if got := hitIDs(res); len(got) != 1 || got[0] != d.ID {
				t.Fatalf("cycle %d (seed %d): %q finds %v, want [%s]", c, seed, word, got, d.ID)
			}
		}
		if res := search(t, ix, userA, Request{Query: qterm("plain")}); res.Total != min(len(stored), MaxTotal) {
			t.Fatalf("cycle %d (seed %d): total %d, want %d", c, seed, res.Total, len(stored))
		}
		if err := ix.Close(); err != nil {
			t.Fatalf("cycle %d: close: %v", c, err)
		}
	}
	t.Logf("%d kills (%d in the middle of writing a segment; the children merged %d times), none lost a flushed document or damaged the index", cycles, torn, merges)
}

// runKillChild starts the child, kills it at a random moment and returns
// how many documents it stored, how many it acknowledged as flushed, and
// how many merges it had finished by its last acknowledgement.
func runKillChild(t *testing.T, dir, tag string, rng *rand.Rand) (stored, acked, merges int) {
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
	var problems []string
	var wg sync.WaitGroup
	wg.Go(func() {
		r := bufio.NewReader(out)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return // EOF after the kill; a partial last line is not an ack
			}
			line = strings.TrimSuffix(line, "\n")
			f := strings.Fields(line)
			switch {
			case line == "ready":
				close(ready)
			case len(f) == 2 && f[0] == "stored":
				stored, _ = strconv.Atoi(f[1])
			case len(f) == 2 && f[0] == "ack":
				acked, _ = strconv.Atoi(f[1])
			case len(f) == 2 && f[0] == "merges":
				merges, _ = strconv.Atoi(f[1])
			default:
				problems = append(problems, line)
			}
		}
	})
	if rng.IntN(5) == 0 { // sometimes during Open
		time.Sleep(time.Duration(rng.IntN(20_000)) * time.Microsecond)
	} else {
		select {
		case <-ready:
		case <-time.After(time.Minute):
			t.Errorf("child never got ready")
		}
		time.Sleep(time.Duration(rng.IntN(400_000)) * time.Microsecond)
	}
	cmd.Process.Kill()
	wg.Wait()
	werr := cmd.Wait()
	if len(problems) > 0 || (werr != nil && !strings.Contains(werr.Error(), "killed")) {
		t.Fatalf("child %s: %v; reported %q; stderr:\n%s", tag, werr, problems, stderr.String())
	}
	return stored, acked, merges
}

// TestKillHelper is TestKill's child process, not a test of its own.
func TestKillHelper(t *testing.T) {
	dir := os.Getenv(killDirEnv)
	if dir == "" {
		t.Skip("only runs as TestKill's child")
	}
	tag := os.Getenv(killTagEnv)
	say := func(s string) { os.Stdout.Write([]byte(s + "\n")) } // one write: atomic on a pipe
	ix, err := Open(Config{Dir: dir, Vault: testVault, FlushBytes: 24 << 10, MergeFactor: 2, FlushAfter: time.Hour})
	if err != nil {
		say("open failed: " + err.Error())
		os.Exit(3)
	}
	say("ready")
	for i := 0; ; i++ {
		// The store holds document i before the index learns of it.
		say(fmt.Sprintf("stored %d", i+1))
		if err := ix.Add(userA, killDoc(tag, i)); err != nil {
			say("add failed: " + err.Error())
			os.Exit(4)
		}
		if i%25 == 24 {
			ix.SetCheckpoint(uint64(i + 1))
			if err := ix.Flush(); err != nil {
				say("flush failed: " + err.Error())
				os.Exit(5)
			}
			say(fmt.Sprintf("ack %d", i+1))
			say(fmt.Sprintf("merges %d", ix.Stats().Merges))
		}
	}
}
