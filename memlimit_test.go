package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"runtime/debug"
	"testing"
)

// TestLimitFor: the configured limit stands while the stores hold up to
// three quarters of it; above, the limit keeps a quarter of it free
// above what they hold.
func TestLimitFor(t *testing.T) {
	const mib = 1 << 20
	for _, tc := range []struct{ configured, live, want int64 }{
		{48 * mib, 0, 48 * mib},
		{48 * mib, 36 * mib, 48 * mib},
		{48 * mib, 36*mib + 1, 48*mib + 1},
		{48 * mib, 140 * mib, 152 * mib},
		{0, 140 * mib, 0}, // no MEMORY_LIMIT_MIB: GOMEMLIMIT's, untouched
	} {
		if got := limitFor(tc.configured, tc.live); got != tc.want {
			t.Errorf("limitFor(%d MiB, %d): %d, want %d", tc.configured/mib, tc.live, got, tc.want)
		}
	}
}

// TestFitMemoryLimit: a MEMORY_LIMIT_MIB below what the runtime holds is
// raised for the run, with the warning that names the value to set; one
// far above it is kept, without a word.
func TestFitMemoryLimit(t *testing.T) {
	prev := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(prev)
	var logs bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))

	fitMemoryLimit(&config{MemoryLimit: 1 << 30}, log)
	if got := debug.SetMemoryLimit(-1); got != prev || logs.Len() != 0 {
		t.Fatalf("1 GiB: limit %d (was %d), logged %q", got, prev, logs.String())
	}

	held := runtimeHeld()
	if held < 1<<20 {
		t.Fatalf("the runtime holds %d bytes", held)
	}
	fitMemoryLimit(&config{MemoryLimit: 1 << 20}, log)
	got := debug.SetMemoryLimit(-1)
	if got < held || got > 2*held+1<<20 {
		t.Errorf("1 MiB under %d held: limit %d", held, got)
	}
	var line struct {
		Level, Msg string
		Limit      int64 `json:"memory_limit_mib"`
	}
	if err := json.Unmarshal(logs.Bytes(), &line); err != nil {
		t.Fatalf("%v: %q", err, logs.String())
	}
	want := "the stores hold most of MEMORY_LIMIT_MIB: the limit is raised until the next start; set MEMORY_LIMIT_MIB to at least the value given"
	if line.Level != "WARN" || line.Msg != want || line.Limit != (got+1<<20-1)>>20 {
		t.Errorf("logged %q, want a warning %q with memory_limit_mib %d", logs.String(), want, (got+1<<20-1)>>20)
	}
}
