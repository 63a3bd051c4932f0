package auth

import (
	"container/list"
	"context"
	"errors"
	"sync"
	"time"
)

// ErrBusy refuses a password hash when the queue for the hashing slots is
// full; the client should come back after BusyRetryAfter.
var ErrBusy = errors.New("auth: too many password checks waiting")

// BusyRetryAfter is the Retry-After of an ErrBusy answer: a full queue
// drains in about this long at the default parameters on a Pi.
const BusyRetryAfter = 2 * time.Second

// queuePerSlot is how many hashes may wait per hashing slot. At 19 MiB and
// roughly 0.1 to 0.3 s a hash, eight waiting per slot keeps the worst
// wait of an admitted login near two seconds on a Pi.
const queuePerSlot = 8

// fifo is a counting semaphore that admits waiters in arrival order (a
// buffered channel wakes whichever goroutine the scheduler picks, so a
// newcomer can overtake a login that has waited for seconds) and refuses
// at once when maxWaiting are already waiting.
type fifo struct {
	mu         sync.Mutex
	free       int
	slots      int
	maxWaiting int
	waiting    list.List // of chan struct{}, closed when the slot is handed over
}

func newFIFO(slots, maxWaiting int) *fifo {
	return &fifo{free: slots, slots: slots, maxWaiting: maxWaiting}
}

// acquire takes a slot, waiting behind those who came first. It returns
// ErrBusy when the queue is full, or ctx's error if ctx ends first.
func (q *fifo) acquire(ctx context.Context) error {
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
	ready := make(chan struct{})
	e := q.waiting.PushBack(ready)
	q.mu.Unlock()
	select {
	case <-ready:
		return nil
	case <-ctx.Done():
		q.mu.Lock()
		select {
		case <-ready:
			// Handed the slot just as ctx ended: pass it on.
			q.mu.Unlock()
			q.release()
		default:
			q.waiting.Remove(e)
			q.mu.Unlock()
		}
		return ctx.Err()
	}
}

// release gives the slot to the longest waiter, or frees it. It reports
// whether every slot is now free and no one waits.
func (q *fifo) release() (idle bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e := q.waiting.Front(); e != nil {
		q.waiting.Remove(e)
		close(e.Value.(chan struct{}))
		return false
	}
	q.free++
	return q.free == q.slots
}
