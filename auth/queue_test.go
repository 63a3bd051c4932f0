package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// TestHashQueueBoundedAndFair: with one hashing slot busy, logins wait in
// the order they came; once queuePerSlot wait, the next login is refused
// at once with 503 and Retry-After instead of queueing behind them, and a
// login that comes after the queue drained is served.
func TestHashQueueBoundedAndFair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, func(s *setup) { s.hashJobs = 1; s.cfg.RateLimit = 1000 })
		e.register("victim@example.com", "Victim")
		gate := make(chan struct{})
		var mu sync.Mutex
		var order []string
		e.h.hasher.argon = func(password, salt []byte, p Params) []byte {
			<-gate
			mu.Lock()
			order = append(order, string(password))
			mu.Unlock()
			return idKey(password, salt, p)
		}
		var wg sync.WaitGroup
		statuses := make([]int, queuePerSlot+1)
		for i := range queuePerSlot + 1 { // one hashing, queuePerSlot waiting
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := e.send(request{method: "POST", path: "/v1/auth/login", ip: fmt.Sprintf("203.0.113.%d", i+1),
					body: map[string]string{"email": "nobody@example.com", "password": fmt.Sprintf("attempt-%02d", i)}})
				statuses[i] = r.status
			}()
			synctest.Wait() // each is queued before the next arrives
		}
		r := e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.9",
			body: map[string]string{"email": "victim@example.com", "password": testPassword}})
		r.wantError(t, http.StatusServiceUnavailable, "service unavailable")
		if got := r.header.Get("Retry-After"); got != "2" {
			t.Errorf("Retry-After: got %q, want 2", got)
		}
		close(gate)
		wg.Wait()
		for i, s := range statuses {
			if s != http.StatusUnauthorized {
				t.Errorf("queued login %d: got %d, want 401", i, s)
			}
		}
		for i, pw := range order {
			if want := fmt.Sprintf("attempt-%02d", i); pw != want {
				t.Fatalf("hash %d ran for %q, want %q (arrival order)", i, pw, want)
			}
		}
		e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.9",
			body: map[string]string{"email": "victim@example.com", "password": testPassword}}).wantStatus(t, http.StatusOK)
	})
}

// TestFIFOCancelledWaiter: a waiter whose request ends leaves the queue
// and does not hold the slot it may have been handed.
func TestFIFOCancelledWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := newFIFO(1, 2)
		if err := q.acquire(context.Background()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		errc := make(chan error, 1)
		go func() { errc <- q.acquire(ctx) }()
		synctest.Wait()
		time.Sleep(2 * time.Second) // fake time: the waiter's request ends
		if err := <-errc; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("cancelled waiter: got %v, want DeadlineExceeded", err)
		}
		q.release()
		if err := q.acquire(context.Background()); err != nil {
			t.Fatalf("slot after the cancelled waiter left: got %v, want it free", err)
		}
		if q.waiting.Len() != 0 || q.free != 0 {
			t.Errorf("got %d waiting, %d free; want 0, 0", q.waiting.Len(), q.free)
		}
	})
}

// The hasher's idle func runs once each time the last running hash ends
// with none waiting: after each of three hashes one after another, and
// once after a burst of six on two slots, not after each of them.
func TestHasherIdleAfterBurst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := NewHasher(Params{Memory: 8, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 16}, 2)
		if err != nil {
			t.Fatal(err)
		}
		var idles int
		h.idle = func() { idles++ }
		for range 3 {
			if _, err := h.Hash(t.Context(), "password"); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
		}
		if idles != 3 {
			t.Fatalf("after three hashes one after another: got %d idle calls, want 3", idles)
		}
		gate := make(chan struct{})
		h.argon = func(password, salt []byte, p Params) []byte { <-gate; return idKey(password, salt, p) }
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() { h.Hash(t.Context(), "password") })
		}
		synctest.Wait() // two hashing, four waiting
		if got := h.running.Load(); got != 2 {
			t.Fatalf("running: got %d, want 2", got)
		}
		close(gate)
		wg.Wait()
		synctest.Wait()
		if idles != 4 {
			t.Fatalf("after a burst of six: got %d idle calls in all, want 4", idles)
		}
	})
}

// TestHashQueuePerClient: 100 attacking addresses keeping the hashing
// slots of a 2-core machine busy, each trying three logins at once, get
// one waiter each in the queue (the rest refused 503 at once; an IPv6
// attacker's addresses count as its /64), and a
// client they have never seen still gets its place and is served, after
// those before it. The old queue held 16 waiters, any of them from one
// address, and refused the newcomer.
func TestHashQueuePerClient(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t, func(s *setup) { s.hashJobs = 2; s.cfg.RateLimit = 1000 })
		e.register("victim@example.com", "Victim")
		gate := make(chan struct{})
		e.h.hasher.argon = func(password, salt []byte, p Params) []byte {
			<-gate
			return idKey(password, salt, p)
		}
		const attackers, tries = 100, 3
		var wg sync.WaitGroup
		statuses := make([]int, attackers*tries)
		for i := range attackers * tries {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ip := fmt.Sprintf("203.0.113.%d", i/tries+1)
				if i/tries%2 == 1 {
					ip = fmt.Sprintf("2001:db8:%x:1::%x", i/tries, i%tries+1) // one /64 each, several addresses in it
				}
				statuses[i] = e.send(request{method: "POST", path: "/v1/auth/login", ip: ip,
					body: map[string]string{"email": "nobody@example.com", "password": "wrong password"}}).status
			}()
			synctest.Wait()
		}
		fresh := make(chan int)
		go func() {
			fresh <- e.send(request{method: "POST", path: "/v1/auth/login", ip: "198.51.100.9",
				body: map[string]string{"email": "victim@example.com", "password": testPassword}}).status
		}()
		synctest.Wait()
		// The first two attackers hold the slots and have one more waiting.
		if got := e.h.hasher.slots.waiting.Len(); got != attackers+1 {
			t.Errorf("waiting: got %d, want %d (one per attacker and the newcomer)", got, attackers+1)
		}
		close(gate)
		wg.Wait()
		if got := <-fresh; got != http.StatusOK {
			t.Errorf("the fresh client: got %d, want 200", got)
		}
		refused := 0
		for i, s := range statuses {
			switch {
			case s == http.StatusServiceUnavailable:
				refused++
			case s != http.StatusUnauthorized:
				t.Errorf("attacker login %d: got %d, want 401 or 503", i, s)
			}
		}
		if want := attackers*tries - attackers - 2; refused != want {
			t.Errorf("attacking logins refused: got %d, want %d (all but one waiting per address and the two hashing)", refused, want)
		}
	})
}

// The hasher's before func runs once for each hash, after the hash has
// its slot and before Argon2 starts (so the collection it runs frees the
// memory of the hashes that ended for this one): never while as many
// hashes run as there are slots, and as often as Argon2 runs, Verify and
// the unknown-email dummy included.
func TestHasherBeforeEachHash(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h, err := NewHasher(Params{Memory: 8, Time: 1, Threads: 1, SaltLen: 16, KeyLen: 16}, 2)
		if err != nil {
			t.Fatal(err)
		}
		var befores, overlapping atomic.Int64
		h.before = func() {
			befores.Add(1)
			if h.running.Load() >= 2 {
				overlapping.Add(1)
			}
		}
		encoded, err := h.Hash(t.Context(), "password")
		if err != nil {
			t.Fatal(err)
		}
		if ok, _, err := h.Verify(t.Context(), "password", encoded); !ok || err != nil {
			t.Fatalf("verify: got %v, %v; want a match", ok, err)
		}
		if err := h.verifyDummy(t.Context(), "password"); err != nil {
			t.Fatal(err)
		}
		if got := befores.Load(); got != 3 {
			t.Fatalf("after a hash, a verify and a dummy: got %d before calls, want 3", got)
		}
		gate := make(chan struct{})
		h.argon = func(password, salt []byte, p Params) []byte { <-gate; return idKey(password, salt, p) }
		var wg sync.WaitGroup
		for range 6 {
			wg.Go(func() { h.Hash(t.Context(), "password") })
		}
		synctest.Wait() // two hashing, four waiting
		if got := befores.Load(); got != 5 {
			t.Fatalf("with two of six hashing: got %d before calls in all, want 5", got)
		}
		close(gate)
		wg.Wait()
		if got, over := befores.Load(), overlapping.Load(); got != 9 || over != 0 || h.derivations.Load() != 9 {
			t.Errorf("after the burst: got %d before calls (%d with every slot hashing), %d derivations; want 9, 0, 9",
				got, over, h.derivations.Load())
		}
	})
}
