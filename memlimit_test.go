package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"runtime"
	"runtime/debug"
	"testing"
)

// TestLimitFor: the limit keeps a quarter of MEMORY_LIMIT_MIB above what
// the runtime holds, whatever that is: under the configured value while
// it holds less than three quarters of it, above it past that; no
// MEMORY_LIMIT_MIB leaves GOMEMLIMIT's alone.
func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ configured, held, want int64 }{
		{48 * mib, 0, 12 * mib},
		{48 * mib, 6 * mib, 18 * mib},
		{48 * mib, 36 * mib, 48 * mib},
		{48 * mib, 36*mib + 1, 48*mib + 1},
		{48 * mib, 140 * mib, 152 * mib},
		{0, 140 * mib, 0},
	} {
		if got := limitFor(tc.configured, tc.held); got != tc.want {
			t.Errorf("limitFor(%d MiB, %d): %d, want %d", tc.configured/mib, tc.held, got, tc.want)
		}
	}
}

// followSink keeps what TestLimitFollowerFollows allocates live.
var followSink []byte

// TestLimitFollowerFollows: once following, the limit is a quarter of
// MEMORY_LIMIT_MIB above what the runtime holds, at the start and again
// after a collection that finds 64 MiB more live, without a word while
// the limit stays under MEMORY_LIMIT_MIB.
func TestLimitFollowerFollows(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	var logs bytes.Buffer
	const configured = 1 << 30
	f := newLimitFollower(configured, slog.New(slog.NewJSONHandler(&logs, nil)))
	fits := make(chan int64, 16)
	f.fitted = func(l int64) {
		select {
		case fits <- l:
		default:
		}
	}
	defer f.stop()
	runtime.GC()
	f.follow()
	start := debug.SetMemoryLimit(-1)
	if held := start - configured/4; held < 1<<20 || held > 64<<20 {
		t.Fatalf("following: limit %d, %d above a quarter of MEMORY_LIMIT_MIB, not what a test binary holds", start, held)
	}
	followSink = make([]byte, 64<<20)
	defer func() { followSink = nil }()
	for l := start; l < start+64<<20; l = <-fits {
		runtime.GC()
	}
	if got := debug.SetMemoryLimit(-1); got < start+64<<20 || got > configured {
		t.Errorf("64 MiB more live: limit %d, want from %d to %d", got, start+64<<20, configured)
	}
	if logs.Len() != 0 {
		t.Errorf("logged %q under MEMORY_LIMIT_MIB", logs.String())
	}
}

// TestLimitFollowerRaises: a MEMORY_LIMIT_MIB below what the runtime
// holds is passed, to a quarter of it above what is held, with the
// warning that names the value to set, said once.
func TestLimitFollowerRaises(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	var logs bytes.Buffer
	f := newLimitFollower(1<<20, slog.New(slog.NewJSONHandler(&logs, nil)))
	held, _ := f.held()
	if held < 1<<20 {
		t.Fatalf("the runtime holds %d bytes", held)
	}
	got, _ := f.fit()
	if set := debug.SetMemoryLimit(-1); set != got || got < held || got > 2*held+1<<20 {
		t.Errorf("1 MiB under %d held: fit %d, limit %d", held, got, set)
	}
	f.fit()
	var line struct {
		Level, Msg string
		Limit      int64 `json:"memory_limit_mib"`
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("%v: %q (one line wanted)", err, logs.String())
	}
	want := "the stores hold most of MEMORY_LIMIT_MIB: the limit is raised until the next start; set MEMORY_LIMIT_MIB to at least the value given"
	if line.Level != "WARN" || line.Msg != want || line.Limit != (got+1<<20-1)>>20 {
		t.Errorf("logged %q, want a warning %q with memory_limit_mib %d", logs.String(), want, (got+1<<20-1)>>20)
	}
}

// TestLimitFollowerNoLimit: without MEMORY_LIMIT_MIB (GOMEMLIMIT alone)
// the follower leaves the runtime's limit as it is.
func TestLimitFollowerNoLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(123 << 20)
	defer debug.SetMemoryLimit(prev)
	f := newLimitFollower(0, slog.New(slog.DiscardHandler))
	f.follow()
	defer f.stop()
	if got := debug.SetMemoryLimit(-1); got != 123<<20 {
		t.Errorf("limit %d, want GOMEMLIMIT's %d", got, 123<<20)
	}
}

// TestRunFollowsMemoryLimit: the service, once listening, keeps the
// runtime's limit a quarter of MEMORY_LIMIT_MIB above what it holds, far
// under a MEMORY_LIMIT_MIB of 1 GiB, rather than at it; stopped, it
// leaves MEMORY_LIMIT_MIB for whatever runs next in the process.
func TestRunFollowsMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	env := testEnv(t.TempDir())
	env["MEMORY_LIMIT_MIB"] = "1024"
	srv := startRun(t, env)
	if got := debug.SetMemoryLimit(-1); got < 256<<20+1<<20 || got > 256<<20+128<<20 {
		t.Errorf("listening with MEMORY_LIMIT_MIB=1024: limit %d MiB, want 256 MiB above what it holds", got>>20)
	}
	if err := srv.stop(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 1<<30 {
		t.Errorf("stopped: limit %d MiB, want MEMORY_LIMIT_MIB's 1024", got>>20)
	}
}
