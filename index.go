package main

import (
	"context"
	"encoding/binary"
	"errors"
	"hash/fnv"
	"log/slog"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
	"searchsvc/integrations/syncer"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// searchDir holds the search index under DATA_DIR: one directory per
// user, every file sealed under a key derived from CREDENTIALS_KEY.
const searchDir = "search"

// catchUpBatch is how many items the catch-up reads and adds at once:
// their texts are in memory together.
const catchUpBatch = 64

// openIndex opens the search index under dataDir, sealed with v.
func openIndex(dataDir string, v *vault.Vault, cacheMB int, log *slog.Logger, onDamage func(string)) (*search.Index, error) {
	return search.Open(search.Config{
		Dir:        filepath.Join(dataDir, searchDir),
		Vault:      v,
		CacheBytes: int64(cacheMB) << 20,
		OnDamage:   onDamage,
		Logger:     log,
	})
}

// checkpoint is the value the index records for a store position: equal
// positions give equal values, and no position gives 0, the value of an
// index that never recorded one.
func checkpoint(p storage.Position) uint64 {
	h := fnv.New64a()
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], p.Gen)
	binary.BigEndian.PutUint64(b[8:], p.Seq)
	h.Write(b[:])
	return h.Sum64() | 1
}

// indexer keeps the search index level with the item store. It is the
// syncer's Indexer (every stored, removed or disconnected item reaches the
// index right after its commit), and it catches up on what the index
// missed: at start when the index's checkpoint is not the store's
// position (a crash, a restore, a first start), for a user whose index
// was found damaged or lost, and for a user whose change the index
// refused (a full disk).
//
// A user's changes and catch-up are serialized by a lock of that user's:
// the syncer commits before it calls Index or Remove, so a catch-up that
// reads the store under the lock sees every change whose call it holds
// back, and a call it held back applies after it, on top.
type indexer struct {
	ix    *search.Index
	items *items.Store
	kinds map[string]string // integration domain → item kind
	log   *slog.Logger

	locks sync.Map // user id → *sync.Mutex

	mu      sync.Mutex
	pending map[string]bool // users to catch up
	all     bool            // every user is to be caught up
	started bool            // the start's comparison is done
	wake    chan struct{}   // a catch-up is pending

	behind atomic.Int64 // users the running catch-up has still to compare
}

func newIndexer() *indexer {
	return &indexer{kinds: make(map[string]string), pending: make(map[string]bool), wake: make(chan struct{}, 1)}
}

// connect completes x, made before the index and the item store it
// connects because each of them is given x (as OnDamage, as Indexer)
// when it is made.
func (x *indexer) connect(ix *search.Index, st *items.Store, reg *integrations.Registry, log *slog.Logger) *indexer {
	x.ix, x.items, x.log = ix, st, log
	for _, m := range reg.List() {
		x.kinds[m.Domain] = integrations.ItemKind(m.Kind)
	}
	return x
}

// lock holds the user's changes and catch-up apart; it returns the unlock.
func (x *indexer) lock(userID string) func() {
	m, _ := x.locks.LoadOrStore(userID, new(sync.Mutex))
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// mark schedules a catch-up of the user (Run does it).
func (x *indexer) mark(userID string) {
	x.mu.Lock()
	x.pending[userID] = true
	x.mu.Unlock()
	select {
	case x.wake <- struct{}{}:
	default:
	}
}

// onDamage is the index's OnDamage: the user is caught up in the
// background (Run), never in the goroutine that found the damage.
func (x *indexer) onDamage(userID string) { x.mark(userID) }

// failed notes a change the index refused: the user is caught up later.
func (x *indexer) failed(what, userID string, n int, err error) {
	x.log.Error(what, "user_id", userID, "items", n, "err", err)
	x.mark(userID)
}

func (x *indexer) doc(it syncer.IndexedItem) search.Doc {
	return search.Doc{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: x.kinds[it.Integration],
		Title: it.Title, From: it.From, To: it.To, Text: it.Text, Date: it.Date,
	}
}

// Index adds the items a sync batch stored.
func (x *indexer) Index(userID string, its []syncer.IndexedItem) {
	docs := make([]search.Doc, len(its))
	for i := range its {
		docs[i] = x.doc(its[i])
	}
	defer x.lock(userID)()
	if err := x.ix.Add(userID, docs...); err != nil {
		x.failed("index items", userID, len(docs), err)
	}
}

// Remove removes the items a provider reported deleted.
func (x *indexer) Remove(userID string, ids []string) {
	defer x.lock(userID)()
	if err := x.ix.Delete(userID, ids...); err != nil {
		x.failed("remove items from the index", userID, len(ids), err)
	}
}

// RemoveRecord removes a disconnected record's items.
func (x *indexer) RemoveRecord(userID, recordID string) {
	defer x.lock(userID)()
	if err := x.ix.DeleteRecord(userID, recordID); err != nil {
		x.failed("remove a record from the index", userID, 0, err)
	}
}

// RemoveUser removes a deleted user's index.
func (x *indexer) RemoveUser(userID string) {
	defer x.lock(userID)()
	if err := x.ix.DeleteUser(userID); err != nil {
		x.failed("remove a user's index", userID, 0, err)
	}
}

// Run compares the index with the store at start: every user when the
// index's checkpoint is not the store's position pos, else only the users
// with items and no index (a user's folder removed by hand). Then it
// catches up each user marked (damage, a refused change) until ctx is
// done; a catch-up that fails is tried again, waiting longer each time up
// to catchUpRetryMax.
func (x *indexer) Run(ctx context.Context, pos storage.Position) {
	if x.ix.Checkpoint() != checkpoint(pos) {
		x.log.Info("search index catching up with the store")
		x.mu.Lock()
		x.all = true
		x.mu.Unlock()
	} else {
		indexed := make(map[string]bool)
		for _, u := range x.ix.Users() {
			indexed[u] = true
		}
		for _, u := range x.items.Users() {
			if !indexed[u] {
				x.mark(u)
			}
		}
	}
	for _, u := range x.ix.NeedsRebuild() {
		x.mark(u)
	}
	wait := catchUpRetry
	for ctx.Err() == nil {
		x.mu.Lock()
		all, users := x.all, make([]string, 0, len(x.pending))
		for u := range x.pending {
			users = append(users, u)
		}
		x.all, x.pending = false, make(map[string]bool)
		x.mu.Unlock()
		if all {
			users = nil
		}
		if all || len(users) > 0 {
			failed := x.CatchUp(ctx, users)
			if ctx.Err() != nil {
				return
			}
			x.mu.Lock()
			if failed == nil {
				x.started = true
			}
			for _, u := range failed {
				x.pending[u] = true
			}
			x.mu.Unlock()
			if len(failed) > 0 {
				select {
				case <-ctx.Done():
					return
				case <-time.After(wait):
				}
				wait = min(2*wait, catchUpRetryMax)
				continue
			}
			wait = catchUpRetry
		} else {
			x.mu.Lock()
			x.started = true
			x.mu.Unlock()
		}
		select {
		case <-ctx.Done():
			return
		case <-x.wake:
		}
	}
}

// The wait before a failed catch-up is tried again, doubling up to the
// maximum.
const (
	catchUpRetry    = 5 * time.Second
	catchUpRetryMax = 10 * time.Minute
)

// CaughtUp reports whether the index holds every item of the store, as
// far as the syncer has told it: the comparison at start is done, no
// user waits for a catch-up, and none waits to be rebuilt after damage.
func (x *indexer) CaughtUp() bool {
	x.mu.Lock()
	ok := x.started && !x.all && len(x.pending) == 0
	x.mu.Unlock()
	return ok && len(x.ix.NeedsRebuild()) == 0
}

// Behind is the number of users the running catch-up has still to
// compare with the store.
func (x *indexer) Behind() int64 { return x.behind.Load() }

// CatchUp compares the index of the given users (nil: every user of the
// store or the index) with the item store: live items the index lacks
// are added, documents the store no longer has are deleted, and so is the
// index of a user the store has no live items for. The service serves
// meanwhile. It returns the users it could not catch up (their errors are
// logged), nil when all went well.
func (x *indexer) CatchUp(ctx context.Context, users []string) []string {
	if users == nil {
		seen := make(map[string]bool)
		for _, u := range append(x.ix.Users(), x.items.Users()...) {
			if !seen[u] {
				seen[u] = true
				users = append(users, u)
			}
		}
	}
	x.behind.Store(int64(len(users)))
	defer x.behind.Store(0)
	var failed []string
	for i, u := range users {
		if ctx.Err() != nil {
			return append(failed, users[i:]...)
		}
		if err := x.catchUpUser(ctx, u); err != nil {
			if ctx.Err() == nil {
				x.log.Error("search index catch-up", "user_id", u, "err", err)
			}
			failed = append(failed, u)
		}
		x.behind.Add(-1)
	}
	return failed
}

// catchUpUser brings one user's index level with the store, holding the
// user's changes back meanwhile (see indexer).
func (x *indexer) catchUpUser(ctx context.Context, userID string) error {
	defer x.lock(userID)()
	ids := x.items.LiveIDs(userID)
	if len(ids) == 0 {
		return x.ix.DeleteUser(userID)
	}
	missing := make(map[string]struct{}, len(ids))
	for _, id := range ids {
		missing[id] = struct{}{}
	}
	have, err := x.ix.IDs(userID)
	if err != nil {
		return err
	}
	var extra []string
	for _, id := range have {
		if _, ok := missing[id]; ok {
			delete(missing, id) // indexed already: what stays is missing
		} else {
			extra = append(extra, id)
		}
	}
	if len(extra) > 0 {
		if err := x.ix.Delete(userID, extra...); err != nil {
			return err
		}
	}
	added := 0
	docs := make([]search.Doc, 0, catchUpBatch)
	flush := func() error {
		if len(docs) == 0 {
			return nil
		}
		err := x.ix.Add(userID, docs...)
		added += len(docs)
		clear(docs)
		docs = docs[:0]
		return err
	}
	for id := range missing {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, ok := x.load(userID, id)
		if !ok {
			continue
		}
		if docs = append(docs, d); len(docs) == catchUpBatch {
			if err := flush(); err != nil {
				return err
			}
		}
	}
	if err := flush(); err != nil {
		return err
	}
	if err := x.ix.Rebuilt(userID); err != nil {
		return err
	}
	if added > 0 || len(extra) > 0 {
		x.log.Info("search index caught up", "user_id", userID, "added", added, "removed", len(extra))
	}
	return nil
}

// load reads a stored item as the index wants it; an item removed
// meanwhile, or whose sealed parts do not open, is left out (logged): no
// catch-up could index it either.
func (x *indexer) load(userID, id string) (search.Doc, bool) {
	it, err := x.items.Get(userID, id)
	if err != nil || !it.Live() {
		return search.Doc{}, false
	}
	m, err := x.items.OpenMeta(&it)
	if err != nil {
		x.log.Error("open item metadata for the index", "item_id", id, "err", err)
		return search.Doc{}, false
	}
	text, err := x.items.Text(&it)
	if err != nil && !errors.Is(err, items.ErrContentMissing) {
		x.log.Error("read item text for the index", "item_id", id, "err", err)
		return search.Doc{}, false
	}
	return x.doc(syncer.IndexedItem{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration,
		Title: m.Title, From: m.From, To: m.To, Date: it.Date, Text: text,
	}), true
}
