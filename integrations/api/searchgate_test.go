package api

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"testing/synctest"

	"searchsvc/httpx"
)

// TestSearchGate: a user runs at most limit searches; queue more wait and
// go in the order they came as slots free; one beyond those is refused
// at once with 429 in words; another user is not held by the first's
// searches; a search whose request ends while it waits leaves the queue;
// a user with nothing running or waiting is forgotten. The route had no
// gate: every search ran at once.
func TestSearchGate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newSearchGate(2, 2)
		ctx := context.Background()
		var running []func()
		for range 2 {
			leave, err := g.enter(ctx, "a")
			if err != nil {
				t.Fatalf("within the limit: %v", err)
			}
			running = append(running, leave)
		}
		order := make(chan int, 2)
		for i := range 2 {
			go func() {
				leave, err := g.enter(ctx, "a")
				if err != nil {
					t.Errorf("queued search %d: %v", i, err)
					return
				}
				order <- i
				leave()
			}()
			synctest.Wait() // the first is queued before the second
		}
		_, err := g.enter(ctx, "a")
		var he *httpx.Error
		if !errors.As(err, &he) || he.Status != http.StatusTooManyRequests || he.Code != "too_many_searches" ||
			he.Message != "too many searches at once: wait for one to finish" || he.RetryAfter != searchRetryAfter {
			t.Fatalf("over the queue: got %v, want 429 too_many_searches", err)
		}
		leaveB, err := g.enter(ctx, "b")
		if err != nil {
			t.Fatalf("another user while the first's share is full: %v, want served", err)
		}
		leaveB()
		running[0]()
		synctest.Wait()
		if got := <-order; got != 0 {
			t.Errorf("first to run from the queue: search %d, want 0", got)
		}
		running[1]()
		synctest.Wait()
		if got := <-order; got != 1 {
			t.Errorf("second to run from the queue: search %d, want 1", got)
		}

		// A waiting search whose request ends leaves the queue.
		leave, _ := g.enter(ctx, "c")
		cctx, cancel := context.WithCancel(ctx)
		g2 := newSearchGate(1, 1)
		leave2, _ := g2.enter(ctx, "c")
		done := make(chan error, 1)
		go func() { _, err := g2.enter(cctx, "c"); done <- err }()
		synctest.Wait()
		cancel()
		if err := <-done; !errors.As(err, &he) || he.Status != http.StatusTooManyRequests {
			t.Errorf("a waiting search whose request ended: got %v, want 429", err)
		}
		leave2()
		leave()
		if len(g.users) != 0 || len(g2.users) != 0 {
			t.Errorf("users kept with nothing running: %d and %d, want 0", len(g.users), len(g2.users))
		}
	})
}
