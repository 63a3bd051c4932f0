package search

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// TestConcurrent adds, replaces, deletes and searches from several
// goroutines while small buffers flush and merge all the time; every
// document is found by its own word exactly while it is live.
func TestConcurrent(t *testing.T) {
	ix := openTest(t, t.TempDir(), func(c *Config) { c.FlushBytes = 16 << 10; c.MergeFactor = 2 })
	const writers, perWriter = 3, 150
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	doc := func(w, i, version int) Doc {
		return Doc{ID: fmt.Sprintf("w%d-%d", w, i), Kind: "email",
			Text: fmt.Sprintf("zq%sx common v%s", letters(w*1000+i), letters(version))}
	}
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				ix.Add(userA, doc(w, i, 0))
				if i%5 == 0 {
					ix.Add(userA, doc(w, i, 1)) // replaces
				}
				if i%7 == 0 {
					ix.Delete(userA, doc(w, i, 0).ID)
				}
				// What this writer did is visible at once.
				for _, j := range []int{i, i / 2} {
					d := doc(w, j, 0)
					res, err := ix.Search(userA, Request{Query: Term{Field: FieldText, Text: qword(fmt.Sprintf("zq%sx", letters(w*1000+j)))}})
					if err != nil {
						errs <- err
						return
					}
					want := 1
					if j%7 == 0 {
						want = 0
					}
					if len(res.Hits) != want || want == 1 && res.Hits[0].ID != d.ID {
						errs <- fmt.Errorf("writer %d after %d: %s finds %v, want %d hit", w, i, d.ID, hitIDs(res), want)
						return
					}
				}
				if i%50 == 0 {
					ix.Flush()
				}
			}
		})
	}
	wg.Go(func() {
		for range 200 {
			if _, err := ix.Search(userA, Request{Query: qterm("common"), Sort: SortDate}); err != nil {
				errs <- err
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	ix.Flush()
	live := 0
	for range writers {
		for i := range perWriter {
			if i%7 != 0 {
				live++
			}
		}
	}
	if res := search(t, ix, userA, Request{Query: qterm("common")}); res.Total != live {
		t.Errorf("total %d, want %d", res.Total, live)
	}
	if got := ix.NeedsRebuild(); len(got) != 0 {
		t.Errorf("NeedsRebuild %v", got)
	}
}

// TestVerifyConcurrent runs Verify over and over beside queries, adds,
// flushes and merges (which close the segments they replace): nothing is
// reported damaged, and every document is still found.
func TestVerifyConcurrent(t *testing.T) {
	var mu sync.Mutex
	var reported []string
	ix := openTest(t, t.TempDir(), func(c *Config) {
		c.FlushBytes, c.MergeFactor = 8<<10, 2
		c.OnDamage = func(u string) { mu.Lock(); reported = append(reported, u); mu.Unlock() }
	})
	const n = 300
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := ix.Verify(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := ix.Search(userA, Request{Query: qterm("common"), Limit: 5}); err != nil {
				t.Error(err)
				return
			}
		}
	})
	for i := range n {
		ix.Add(userA, Doc{ID: fmt.Sprintf("d%03d", i), Kind: "email", Text: fmt.Sprintf("common zq%sx", letters(i))})
		if i%20 == 0 {
			ix.Flush()
		}
	}
	ix.Flush()
	waitMerged(t, ix)
	close(stop)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if len(reported) != 0 {
		t.Errorf("OnDamage %v, want none", reported)
	}
	if got := ix.NeedsRebuild(); len(got) != 0 {
		t.Errorf("NeedsRebuild %v", got)
	}
	if res := search(t, ix, userA, Request{Query: qterm("common")}); res.Total != n {
		t.Errorf("total %d, want %d", res.Total, n)
	}
}

// Add and NeedsRebuild side by side finish: Add took a user's lock and
// then the index's, NeedsRebuild the index's and then each user's, and
// the two deadlocked within a few hundred adds (a cold review's test hung
// every time). A deadlock here hangs the test until go test's timeout.
func TestAddAndNeedsRebuildConcurrently(t *testing.T) {
	ix := openTest(t, t.TempDir(), func(c *Config) { c.FlushAfter = time.Hour })
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
				ix.NeedsRebuild()
			}
		}
	})
	for i := range 2000 {
		docs := make([]Doc, 5)
		for j := range docs {
			docs[j] = Doc{ID: fmt.Sprintf("d%d", (i*5+j)%500), Title: "harbour log", Text: "alpha beta gamma", Date: time.Unix(1, 0)}
		}
		if err := ix.Add(userA, docs...); err != nil {
			t.Fatal(err)
		}
	}
	close(stop)
	wg.Wait()
	if got := ix.NeedsRebuild(); len(got) != 0 {
		t.Errorf("NeedsRebuild after adds: got %v, want none", got)
	}
}
