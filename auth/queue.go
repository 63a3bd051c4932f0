package auth

import (
	"container/list"
	"context"
	"errors"
	"net/netip"
	"sync"
	"time"

	"searchsvc/httpx"
)

// ErrBusy refuses a password hash when the queue for the hashing slots is
// full; the client should come back after BusyRetryAfter.
var ErrBusy = errors.New("auth: too many password checks waiting")

// BusyRetryAfter is the Retry-After of an ErrBusy answer: a full queue
// drains in about this long at the default parameters on a Pi.
const BusyRetryAfter = 2 * time.Second

// queuePerSlot is how many hashes may wait per hashing slot: room for
// a waiter from each of many clients (see waitersPerClient), so that a
// few dozen attacking addresses cannot fill the queue and refuse one they
// have never seen. At 19 MiB and roughly 0.1 to 0.3 s a hash the last of
// a full queue waits up to about 13 s on a Pi; the login limit (5 per
// address per 10 minutes) keeps a queue that full short-lived.
const queuePerSlot = 64

// waitersPerClient is how many hashes of one client may wait at once:
// an IPv4 address or IPv6 /64, twice that for a /56 and four times for
// a /48 (httpx.AddrKeyLimit).
const waitersPerClient = 1

// fifo is a counting semaphore that admits waiters in arrival order (a
// buffered channel wakes whichever goroutine the scheduler picks, so a
// newcomer can overtake a login that has waited for seconds) and refuses
// at once when maxWaiting are already waiting, or when the client's
// prefix already has its waitersPerClient waiting: one address cannot
// fill the queue, and a client it has never seen finds its place in it.
type fifo struct {
	mu         sync.Mutex
	free       int
	slots      int
	maxWaiting int
	waiting    list.List // of *waiter
	keys       map[netip.Prefix]int
}

type waiter struct {
	ready chan struct{} // closed when the slot is handed over
	keys  []netip.Prefix
}

func newFIFO(slots, maxWaiting int) *fifo {
	return &fifo{free: slots, slots: slots, maxWaiting: maxWaiting, keys: make(map[netip.Prefix]int)}
}

// clientKeys are the keys a wait counts under: the request's client's
// httpx.AddrKeys, none for a hash no request asked for.
func clientKeys(ctx context.Context) []netip.Prefix {
	if info, ok := httpx.InfoFromContext(ctx); ok && info.ClientIP.IsValid() {
		return httpx.AddrKeys(info.ClientIP)
	}
	return nil
}

// acquire takes a slot, waiting behind those who came first. It returns
// ErrBusy when the queue is full or the client has its share of it
// waiting, or ctx's error if ctx ends first.
func (q *fifo) acquire(ctx context.Context) error {
	keys := clientKeys(ctx)
	q.mu.Lock()
	if q.free > 0 && q.waiting.Len() == 0 {
		q.free--
		q.mu.Unlock()
		return nil
	}
	if q.waiting.Len() >= q.maxWaiting {
		q.mu.Unlock()
		return ErrBusy
	}
	for _, k := range keys {
		if q.keys[k] >= httpx.AddrKeyLimit(k, waitersPerClient) {
			q.mu.Unlock()
			return ErrBusy
		}
	}
	w := &waiter{ready: make(chan struct{}), keys: keys}
	for _, k := range keys {
		q.keys[k]++
	}
	e := q.waiting.PushBack(w)
	q.mu.Unlock()
	select {
	case <-w.ready:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		select {
		case <-w.ready:
			// Handed the slot just as ctx ended: pass it on.
			q.mu.Unlock()
			q.release()
		default:
			q.remove(e)
			q.mu.Unlock()
		}
		return ctx.Err()
	}
}

// remove takes e out of the queue and its keys' counts. q.mu is held.
func (q *fifo) remove(e *list.Element) *waiter {
	w := q.waiting.Remove(e).(*waiter)
	for _, k := range w.keys {
		if n := q.keys[k] - 1; n > 0 {
			q.keys[k] = n
		} else {
			delete(q.keys, k)
		}
	}
	return w
}

// release gives the slot to the longest waiter, or frees it. It reports
// whether every slot is now free and no one waits.
func (q *fifo) release() (idle bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.waiting.Front(); e != nil {
		close(q.remove(e).ready)
		return false
	}
	q.free++
	return q.free == q.slots
}
