package main

import (
	"io"
	"log/slog"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	rtmetrics "runtime/metrics"
	"slices"
	"testing"
)

// dirNames lists the names in dir.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// TestOpenAppPhases: openAppPhased ends a phase once the web app is built,
// before the stores open, once the stores are open, before the search
// index opens, and once the index is open, before the handlers are built,
// so that serve gives back each phase's garbage and code before the next
// one adds its own.
func TestOpenAppPhases(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"DATA_DIR": dir, "SESSION_SECURE": "false", "STORE_SYNC": "none"}
	c, err := loadConfig(envFunc(env))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatal(err)
	}
	var seen [][]string
	log := slog.New(slog.DiscardHandler)
	a, err := openAppPhased(c, envFunc(env), log, func() { seen = append(seen, dirNames(t, dir)) })
	if err != nil {
		t.Fatal(err)
	}
	a.close(log)
	want := [][]string{
		{devSecretsFile},
		{devSecretsFile, "format", mainStoreDir, sessionStoreDir},
		{devSecretsFile, "format", mainStoreDir, searchDir, sessionStoreDir},
	}
	if !slices.EqualFunc(seen, want, slices.Equal) {
		t.Errorf("DATA_DIR at the ends of the phases: got %q, want %q", seen, want)
	}
	if names := dirNames(t, dir); !slices.Contains(names, searchDir) {
		t.Errorf("DATA_DIR once open: got %q, want the search index (%s) too", names, searchDir)
	}
}

// TestSettleStart: the end of a phase gives the free heap back to the
// system at once. (That it drops the binary's pages is
// TestReleaseStartPages: the collection that follows runs through the
// runtime's code again, as much as a test binary's start left.)
func TestSettleStart(t *testing.T) {
	const mib = 1 << 20
	leaveGarbage(64 * mib)
	held := runtimeHeld()
	settleStart()
	heldAfter := runtimeHeld()
	if held-heldAfter < 48*mib {
		t.Errorf("runtime holds %d MiB after, %d before: want at least 48 MiB given back", heldAfter/mib, held/mib)
	}
}

// TestSettleReleasesAfterCollecting: the end of a phase drops the
// binary's pages before the collection, so that it runs beside no
// phase's code, and again after it, so that the pages the collection
// mapped (its code, the stack maps and type descriptors it read) do not
// count in the next phase's peak.
func TestSettleReleasesAfterCollecting(t *testing.T) {
	var got []string
	settle(func() { got = append(got, "release") }, func() { got = append(got, "collect") })
	if want := []string{"release", "collect", "release"}; !slices.Equal(got, want) {
		t.Errorf("the steps of settleStart: got %q, want %q", got, want)
	}
}

// leaveGarbage allocates n bytes in blocks of 1 MiB, writes every page and
// drops them: garbage the runtime holds until a collection and the
// scavenger give it back.
func leaveGarbage(n int) {
	blocks := make([][]byte, n>>20)
	for i := range blocks {
		blocks[i] = make([]byte, 1<<20)
		for j := 0; j < len(blocks[i]); j += 4096 {
			blocks[i][j] = 1
		}
	}
	runtime.KeepAlive(blocks)
}

// TestStartGCPercent: with GC_PERCENT off (the default), the start
// collects at a target of 25% until the stores are open, so that the
// replay's garbage adds a quarter of its live heap to the start's peak.
func TestStartGCPercent(t *testing.T) {
	env := map[string]string{"DATA_DIR": t.TempDir(), "SESSION_SECURE": "false"}
	if _, _, err := serveConfig(envFunc(env), io.Discard); err != nil {
		t.Fatal(err)
	}
	defer debug.SetMemoryLimit(math.MaxInt64)
	if got := debug.SetGCPercent(100); got != 25 {
		t.Errorf("the collector's target during the start: got %d%%, want 25%%", got)
	}
}

// runtimeHeld is what the runtime holds of the system's memory: all it
// mapped, less what it gave back.
func runtimeHeld() int64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 || s[1].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return int64(s[0].Value.Uint64() - s[1].Value.Uint64())
}
