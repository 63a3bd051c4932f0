// Package index keeps the search index in step with the item store. It
// is the syncer's Indexer: each user's changes (items stored, removed, a
// record disconnected, the user deleted) wait in a queue of that user's
// and are applied in order by a worker of that user's, so a caller never
// waits for the index. And it catches a user's index up with the store, a
// full comparison, whenever the index may have missed something: at start
// after a crash or a restore, after damage, after a change the index
// refused, and when a user's queue grew past its bound.
package index

import (
	"context"
	"encoding/binary"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
	"searchsvc/storage"
)

// Item is a stored item as the index sees it: its ids, its metadata
// opened, and its extracted text, which is sealed on disk and only here
// in the clear.
type Item struct {
	ID          string
	RecordID    string
	Integration string
	Title       string
	From        string
	To          []string
	Date        time.Time
	Text        string
	Thread      string   // items.Meta.Thread
	Refs        []string // items.Meta.Refs
	Attachments []string // the names of items.Meta.Attachments
	Folders     []string // FolderTerms of the item's metadata
}

// Items is the item store as a catch-up reads it; *items.Store has it.
type Items interface {
	// Users returns the users that have live items.
	Users() []string
	// LiveIDs returns the ids of the user's live items.
	LiveIDs(userID string) []string
	// Get returns the user's live item with id.
	Get(userID, id string) (items.ItemRecord, error)
	// OpenMeta opens the item's sealed metadata.
	OpenMeta(it *items.ItemRecord) (items.Meta, error)
	// Text returns the item's extracted text.
	Text(it *items.ItemRecord) (string, error)
}

// Config configures Open.
type Config struct {
	// Search is the index to open. Open sets its OnDamage: a user found
	// damaged is caught up in the background.
	Search search.Config
	Items  Items
	// Registry gives the kind of each integration's items, which the
	// index keeps with each document. Nil: no kinds.
	Registry *integrations.Registry
	// MaxQueueBytes bounds the changes queued for one user, in bytes of
	// text and ids; default 8 MiB. A change that would pass it drops the
	// user's queue, and the user is caught up from the store instead.
	MaxQueueBytes int
	Logger        *slog.Logger
}

// Default bounds.
const (
	defaultMaxQueueBytes = 8 << 20
	// catchUpBatch is how many items a catch-up reads and adds at once:
	// their texts are in memory together.
	catchUpBatch = 64
)

// The wait before a failed catch-up of a user is tried again, doubling
// with each failure in a row up to the maximum.
const (
	catchUpRetry    = 5 * time.Second
	catchUpRetryMax = 10 * time.Minute
)

// Indexer keeps a search index level with the item store (see the
// package comment). Its methods are safe for concurrent use.
//
// The syncer commits a change before it tells the indexer, so a
// catch-up, which reads the store, sees every change queued before it
// began: those are dropped, not applied. A change queued once a catch-up
// has begun is applied after it, on top, so nothing the catch-up read
// before the change can undo it.
type Indexer struct {
	ix       *search.Index
	items    Items
	kinds    map[string]string // integration domain → item kind
	log      *slog.Logger
	maxQueue int
	now      func() time.Time

	// ctx is done once catch-ups stop (Run returned, or Close): none
	// starts and the running one gives up; queued changes still apply.
	ctx    context.Context
	cancel context.CancelFunc
	// slot is held by the running catch-up: one at a time, as each holds
	// a batch of texts and a user's index buffers in memory.
	slot chan struct{}

	mu       sync.Mutex
	changed  *sync.Cond           // a worker ended, or a catch-up
	queues   map[string]*queue    // users with changes queued, a worker, or a catch-up due
	workers  int                  // running workers
	catching int                  // running catch-ups
	failed   map[string]time.Time // users whose catch-up failed → when to try again
	attempts map[string]int       // failed catch-ups in a row, by user
	opened   bool                 // the index is open: workers may start
	started  bool                 // the comparison at start is done
	closed   bool
	retry    chan struct{} // a catch-up failed: Run schedules it again
}

// Open opens the search index cfg.Search and returns its indexer. Users
// found damaged are caught up in the background from now on.
func Open(cfg Config) (*Indexer, error) {
	if cfg.MaxQueueBytes <= 0 {
		cfg.MaxQueueBytes = defaultMaxQueueBytes
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	x := &Indexer{
		items: cfg.Items, kinds: make(map[string]string), log: cfg.Logger,
		maxQueue: cfg.MaxQueueBytes, now: time.Now,
		slot:   make(chan struct{}, 1),
		queues: make(map[string]*queue), failed: make(map[string]time.Time), attempts: make(map[string]int),
		retry: make(chan struct{}, 1),
	}
	x.changed = sync.NewCond(&x.mu)
	x.ctx, x.cancel = context.WithCancel(context.Background())
	if cfg.Registry != nil {
		for _, m := range cfg.Registry.List() {
			x.kinds[m.Domain] = integrations.ItemKind(m.Kind)
		}
	}
	// Damage found while the index opens is marked now, and caught up
	// once x is complete (start waits for opened).
	cfg.Search.OnDamage = x.mark
	ix, err := search.Open(cfg.Search)
	if err != nil {
		x.cancel()
		return nil, err
	}
	x.mu.Lock()
	x.ix, x.opened = ix, true
	for u, q := range x.queues {
		x.start(u, q)
	}
	x.mu.Unlock()
	return x, nil
}

// Search returns the index the indexer keeps, for queries.
func (x *Indexer) Search() *search.Index { return x.ix }

// Checkpoint is the value the index records for a store position: equal
// positions give equal values, and no position gives 0, the value of an
// index that never recorded one.
func Checkpoint(p storage.Position) uint64 {
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], p.Gen)
	binary.BigEndian.PutUint64(b[8:], p.Seq)
	h.Write(b[:])
	return h.Sum64() | 1
}

// Run compares the index with the store at start: every user is caught
// up when the index's checkpoint is not the store's position pos (a
// crash, a restore, a first start), else only the users with items and
// no index (a user's folder removed by hand), and those the index found
// damaged. Until ctx is done it then tries each failed catch-up again,
// waiting longer after each failure in a row, up to catchUpRetryMax.
// When ctx is done it stops catch-ups and returns once none runs; queued
// changes still apply.
func (x *Indexer) Run(ctx context.Context, pos storage.Position) {
	x.compare(pos)
	defer x.stopCatchUps()
	for {
		x.mu.Lock()
		next := x.retryDue()
		x.mu.Unlock()
		var due <-chan time.Time
		var t *time.Timer
		if !next.IsZero() {
			t = time.NewTimer(next.Sub(x.now()))
			due = t.C
		}
		select {
		case <-ctx.Done():
		case <-x.ctx.Done():
		case <-x.retry:
		case <-due:
		}
		if t != nil {
			t.Stop()
		}
		if ctx.Err() != nil || x.ctx.Err() != nil {
			return
		}
	}
}

// compare marks the users whose index may differ from the store at start.
func (x *Indexer) compare(pos storage.Position) {
	var users []string
	if x.ix.Checkpoint() != Checkpoint(pos) {
		x.log.Info("search index catching up with the store")
		users = x.everyUser()
	} else {
		indexed := make(map[string]bool)
		for _, u := range x.ix.Users() {
			indexed[u] = true
		}
		for _, u := range x.items.Users() {
			if !indexed[u] {
				users = append(users, u)
			}
		}
	}
	users = append(users, x.ix.NeedsRebuild()...)
	x.mu.Lock()
	defer x.mu.Unlock()
	for _, u := range users {
		// A catch-up due or under way reads the store as it is now.
		if q := x.queues[u]; q != nil && (q.catchUp || q.catchingUp) {
			continue
		}
		x.markLocked(u)
	}
	x.started = true
}

// everyUser returns the users of the store and of the index.
func (x *Indexer) everyUser() []string {
	var users []string
	seen := make(map[string]bool)
	for _, u := range append(x.ix.Users(), x.items.Users()...) {
		if !seen[u] {
			seen[u] = true
			users = append(users, u)
		}
	}
	return users
}

// retryDue marks the users whose failed catch-up is due again and
// returns when the next one is (zero: none waits). x.mu is held.
func (x *Indexer) retryDue() time.Time {
	now := x.now()
	var next time.Time
	for u, at := range x.failed {
		if !at.After(now) {
			x.markLocked(u)
		} else if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next
}

// retryWait is the wait after the nth failed catch-up of a user in a row.
func retryWait(n int) time.Duration {
	d := catchUpRetry
	for ; n > 1 && d < catchUpRetryMax; n-- {
		d *= 2
	}
	return min(d, catchUpRetryMax)
}

// stopCatchUps stops catch-ups and waits until none runs.
func (x *Indexer) stopCatchUps() {
	x.cancel()
	x.mu.Lock()
	for x.catching > 0 {
		x.changed.Wait()
	}
	x.mu.Unlock()
}

// CaughtUp reports whether the index holds every item of the store, as
// far as the syncer has told it: the comparison at start is done, no
// change waits in a queue, no user waits for a catch-up or for one to be
// tried again, and none waits to be rebuilt after damage.
func (x *Indexer) CaughtUp() bool {
	x.mu.Lock()
	ok := x.started && len(x.queues) == 0 && len(x.failed) == 0
	x.mu.Unlock()
	return ok && len(x.ix.NeedsRebuild()) == 0
}

// Behind is the number of users whose catch-up is due or under way.
func (x *Indexer) Behind() int64 {
	x.mu.Lock()
	defer x.mu.Unlock()
	var n int64
	for _, q := range x.queues {
		if q.catchUp || q.catchingUp {
			n++
		}
	}
	return n
}

// Flush waits until every queued change is applied and every catch-up
// due has run; once catch-ups are stopped, until every queued change is
// applied. Changes queued meanwhile are waited for too.
func (x *Indexer) Flush() {
	x.mu.Lock()
	for x.workers > 0 {
		x.changed.Wait()
	}
	x.mu.Unlock()
}

// Close stops catch-ups, applies what is queued and closes the index.
// The item store must not change any more: if the index then holds what
// the store holds at position pos, it records so, and the next start
// (Run) catches up nobody.
func (x *Indexer) Close(pos storage.Position) error {
	x.stopCatchUps()
	x.Flush()
	if x.CaughtUp() {
		x.ix.SetCheckpoint(Checkpoint(pos))
	}
	x.mu.Lock()
	x.closed = true
	x.mu.Unlock()
	return x.ix.Close()
}
