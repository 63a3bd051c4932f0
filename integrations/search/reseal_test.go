package search

import (
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
)

// oldKeySegments counts u's segments sealed under a previous key.
func oldKeySegments(ix *Index, user string) int {
	u, _ := ix.getUser(user, false)
	if u == nil {
		return 0
	}
	u.mu.RLock()
	defer u.mu.RUnlock()
	n := 0
	for _, p := range u.parts {
		if p.seg != nil && p.seg.key != 0 {
			n++
		}
	}
	return n
}

// TestResealWaitsForMerge: a merge under way on a user when Reseal starts
// is waited for, and the user is then re-sealed.
func TestResealWaitsForMerge(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		noMerges := func(c *Config) { c.MergeFactor = 100 }
		ix := openTest(t, dir, noMerges)
		ix.Add(userA, handDocs()[:3]...)
		ix.Flush()
		ix.Add(userA, handDocs()[3:]...)
		ix.Close()
		other := slices.Repeat([]byte{9}, 32)
		ix = openTest(t, dir, noMerges, func(c *Config) { c.Vault = mustVault(other, testKey) })
		if got := oldKeySegments(ix, userA); got != 2 {
			t.Fatalf("before: %d segments under the old key, want 2", got)
		}
		// The background merger holds the user.
		u, _ := ix.getUser(userA, false)
		u.mu.Lock()
		u.merging = true
		u.mu.Unlock()
		done := make(chan error, 1)
		go func() { done <- ix.Reseal() }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("Reseal returned %v while a merge was under way", err)
		default:
		}
		u.mu.Lock()
		u.merging = false
		u.mergeDone.Broadcast()
		u.mu.Unlock()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := oldKeySegments(ix, userA); got != 0 {
			t.Errorf("after: %d segments under the old key, want 0", got)
		}
		ix.Close()
		ix = openTest(t, dir, func(c *Config) { c.Vault = mustVault(other) })
		if got := ix.NeedsRebuild(); len(got) != 0 {
			t.Errorf("new key alone: NeedsRebuild %v", got)
		}
		checkQueries(t, ix)
		ix.Close()
	})
}

// TestResealWhileMerging re-seals while the background merger works on
// the same user: every segment ends under the new key.
func TestResealWhileMerging(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir, func(c *Config) { c.MergeFactor = 100 })
	for i := range 12 {
		ix.Add(userA, Doc{ID: fmt.Sprintf("d%02d", i), Kind: "email", Text: fmt.Sprintf("common w%d", i)})
		ix.Flush()
	}
	ix.Close()
	other := slices.Repeat([]byte{9}, 32)
	ix = openTest(t, dir, func(c *Config) { c.Vault, c.MergeFactor = mustVault(other, testKey), 2 })
	ix.kick(ix.mergeKick)
	if err := ix.Reseal(); err != nil {
		t.Fatal(err)
	}
	if got := oldKeySegments(ix, userA); got != 0 {
		t.Errorf("%d segments under the old key, want 0", got)
	}
	ix.Close()
	ix = openTest(t, dir, func(c *Config) { c.Vault = mustVault(other) })
	if got := ix.NeedsRebuild(); len(got) != 0 {
		t.Errorf("new key alone: NeedsRebuild %v", got)
	}
	if res := search(t, ix, userA, Request{Query: qterm("common")}); res.Total != 12 {
		t.Errorf("total %d, want 12", res.Total)
	}
}
