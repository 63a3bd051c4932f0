package main

import "testing"

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
