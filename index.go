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

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
	isync "searchsvc/integrations/sync"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// searchDir holds the search index under DATA_DIR: one directory per
// user, every file sealed under a key derived from CREDENTIALS_KEY.
const searchDir = "search"

// searchKeyPurpose names the subkey of CREDENTIALS_KEY that seals the
// search index.
const searchKeyPurpose = "search index"

// catchUpBatch is how many items the catch-up reads and adds at once:
// their texts are in memory together.
const catchUpBatch = 64

// openIndex opens the search index under dataDir, sealed under the
// subkeys of v's keys.
func openIndex(dataDir string, v *vault.Vault, cacheMB int, log *slog.Logger, onDamage func(string)) (*search.Index, error) {
	keys := v.DerivedKeys(searchKeyPurpose)
	prev := make([][]byte, 0, len(keys)-1)
	for _, k := range keys[1:] {
		prev = append(prev, k.Key)
	}
	return search.Open(search.Config{
		Dir:          filepath.Join(dataDir, searchDir),
		Key:          keys[0].Key,
		PreviousKeys: prev,
		CacheBytes:   int64(cacheMB) << 20,
		OnDamage:     onDamage,
		Logger:       log,
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
// position (a crash, a restore, a first start), and for a user whose
// index was found damaged.
type indexer struct {
	ix    *search.Index
	items *items.Store
	kinds map[string]string // integration domain → item kind
	log   *slog.Logger

	damaged  chan string  // users whose index lost documents to damage
	behind   atomic.Int64 // users the catch-up has still to compare
	caughtUp atomic.Bool  // the catch-up at start is done (or was not needed)
	mu       sync.Mutex   // one catch-up at a time
}

// newIndexer completes x, made before the index and the item store it
// connects because each of them is given x (as OnDamage, as Indexer)
// when it is made.
func newIndexer(x *indexer, ix *search.Index, st *items.Store, reg *integrations.Registry, log *slog.Logger) *indexer {
	x.ix, x.items, x.log = ix, st, log
	for _, m := range reg.List() {
		x.kinds[m.Domain] = integrations.ItemKind(m.Kind)
	}
	return x
}

// onDamage is the index's OnDamage: the user is caught up in the
// background (Run), never in the goroutine that found the damage.
func (x *indexer) onDamage(userID string) {
	select {
	case x.damaged <- userID:
	default: // full: NeedsRebuild still lists the user for the next pass
	}
}

func (x *indexer) doc(it isync.IndexedItem) search.Doc {
	return search.Doc{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: x.kinds[it.Integration],
		Title: it.Title, From: it.From, To: it.To, Text: it.Text, Date: it.Date,
	}
}

// Index adds the items a sync batch stored.
func (x *indexer) Index(userID string, its []isync.IndexedItem) {
	docs := make([]search.Doc, len(its))
	for i := range its {
		docs[i] = x.doc(its[i])
	}
	if err := x.ix.Add(userID, docs...); err != nil {
		x.log.Error("index items", "user_id", userID, "items", len(docs), "err", err)
	}
}

// Remove removes the items a provider reported deleted.
func (x *indexer) Remove(userID string, ids []string) {
	if err := x.ix.Delete(userID, ids...); err != nil {
		x.log.Error("remove items from the index", "user_id", userID, "items", len(ids), "err", err)
	}
}

// RemoveRecord removes a disconnected record's items.
func (x *indexer) RemoveRecord(userID, recordID string) {
	if err := x.ix.DeleteRecord(userID, recordID); err != nil {
		x.log.Error("remove a record from the index", "user_id", userID, "record_id", recordID, "err", err)
	}
}

// RemoveUser removes a deleted user's index.
func (x *indexer) RemoveUser(userID string) {
	if err := x.ix.DeleteUser(userID); err != nil {
		x.log.Error("remove a user's index", "user_id", userID, "err", err)
	}
}

// Run catches up at start if the index is behind the store at pos, then
// catches up each user whose index is found damaged, until ctx is done.
func (x *indexer) Run(ctx context.Context, pos storage.Position) {
	if x.ix.Checkpoint() != checkpoint(pos) {
		x.log.Info("search index catching up with the store")
		if err := x.CatchUp(ctx, nil); err != nil {
			if ctx.Err() == nil {
				x.log.Error("search index catch-up", "err", err)
			}
			return
		}
	}
	x.caughtUp.Store(true)
	for _, u := range x.ix.NeedsRebuild() {
		x.onDamage(u)
	}
	for {
		select {
		case <-ctx.Done():
			return
		case u := <-x.damaged:
			if err := x.CatchUp(ctx, []string{u}); err != nil && ctx.Err() == nil {
				x.log.Error("search index rebuild", "user_id", u, "err", err)
			}
		}
	}
}

// CaughtUp reports whether the index holds every item of the store, as
// far as the syncer has told it: the catch-up at start is done and no
// user's index waits to be rebuilt after damage.
func (x *indexer) CaughtUp() bool {
	return x.caughtUp.Load() && len(x.ix.NeedsRebuild()) == 0
}

// Behind is the number of users the running catch-up has still to
// compare with the store.
func (x *indexer) Behind() int64 { return x.behind.Load() }

// CatchUp compares the index of the given users (nil: every user of the
// store or the index) with the item store: live items the index lacks
// are added, documents the store no longer has are deleted, and so are
// the indexes of users the store has no items for. The service serves
// meanwhile; an item stored or removed during the catch-up reaches the
// index through the syncer as usual, and adding one twice is harmless.
func (x *indexer) CatchUp(ctx context.Context, users []string) error {
	x.mu.Lock()
	defer x.mu.Unlock()
	want := users != nil
	only := make(map[string]bool, len(users))
	for _, u := range users {
		only[u] = true
	}
	live := make(map[string]map[string]struct{})
	x.items.Scan(func(it items.ItemRecord) bool {
		if !it.Live() || (want && !only[it.UserID]) {
			return true
		}
		ids := live[it.UserID]
		if ids == nil {
			ids = make(map[string]struct{})
			live[it.UserID] = ids
		}
		ids[it.ID] = struct{}{}
		return true
	})
	if !want {
		for _, u := range x.ix.Users() {
			if live[u] == nil {
				users = append(users, u)
			}
		}
		for u := range live {
			users = append(users, u)
		}
	}
	x.behind.Store(int64(len(users)))
	defer x.behind.Store(0)
	var errs []error
	for _, u := range users {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := x.catchUpUser(ctx, u, live[u]); err != nil {
			errs = append(errs, err)
		}
		x.behind.Add(-1)
	}
	return errors.Join(errs...)
}

func (x *indexer) catchUpUser(ctx context.Context, userID string, live map[string]struct{}) error {
	if len(live) == 0 {
		return x.ix.DeleteUser(userID)
	}
	have, err := x.ix.IDs(userID)
	if err != nil {
		return err
	}
	var extra []string
	for _, id := range have {
		if _, ok := live[id]; ok {
			delete(live, id) // indexed already: what stays is missing
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
	for id := range live {
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
// meanwhile, or whose sealed parts do not open, is left out (logged).
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
	return x.doc(isync.IndexedItem{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration,
		Title: m.Title, From: m.From, To: m.To, Date: it.Date, Text: text,
	}), true
}
