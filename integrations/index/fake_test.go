package index

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// store is an item store in memory whose reads a test can hold: a held
// LiveIDs takes its snapshot, says so and waits; a held Text does the
// same for one item. Each hold holds one call.
type store struct {
	mu    sync.Mutex
	items map[string]map[string]stored // user → item id → item
	holds map[string]*hold             // "live "+user or "text "+item id
}

type stored struct {
	rec  items.ItemRecord
	meta items.Meta
	text string
}

// hold is a read held: entered is closed when the read waits, release
// lets it go on.
type hold struct{ entered, release chan struct{} }

func newStore() *store {
	return &store{items: map[string]map[string]stored{}, holds: map[string]*hold{}}
}

// add stores an item (a commit) and returns it as the syncer tells it.
func (s *store) add(userID, id, title, text string) Item {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.items[userID] == nil {
		s.items[userID] = map[string]stored{}
	}
	date := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s.items[userID][id] = stored{
		rec:  items.ItemRecord{ID: id, UserID: userID, RecordID: "rec-1", Integration: "feed", Date: date},
		meta: items.Meta{Title: title},
		text: text,
	}
	return Item{ID: id, RecordID: "rec-1", Integration: "feed", Title: title, Date: date, Text: text}
}

// remove removes items (a commit).
func (s *store) remove(userID string, ids ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		delete(s.items[userID], id)
	}
}

// removeUser removes every item of the user (a commit).
func (s *store) removeUser(userID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.items, userID)
}

// hold holds the next read named key ("live "+user, "text "+item id).
func (s *store) hold(key string) *hold {
	h := &hold{entered: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.holds[key] = h
	s.mu.Unlock()
	return h
}

// wait holds the read if a hold is set for key; s.mu is held and is
// released meanwhile.
func (s *store) wait(key string) {
	h := s.holds[key]
	if h == nil {
		return
	}
	delete(s.holds, key)
	s.mu.Unlock()
	close(h.entered)
	<-h.release
	s.mu.Lock()
}

func (s *store) Users() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for u, its := range s.items {
		if len(its) > 0 {
			out = append(out, u)
		}
	}
	return out
}

func (s *store) LiveIDs(userID string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id := range s.items[userID] {
		out = append(out, id)
	}
	s.wait("live " + userID) // the snapshot is taken: what is stored meanwhile is not in it
	return out
}

func (s *store) Get(userID, id string) (items.ItemRecord, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.items[userID][id]
	if !ok {
		return items.ItemRecord{}, items.ErrNotFound
	}
	return it.rec, nil
}

func (s *store) OpenMeta(it *items.ItemRecord) (items.Meta, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.items[it.UserID][it.ID].meta, nil
}

func (s *store) Text(it *items.ItemRecord) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	text := s.items[it.UserID][it.ID].text // read before a removal the hold lets in
	s.wait("text " + it.ID)
	return text, nil
}

// testVault is a vault of a fixed key, as the server's seals the index.
func testVault(t *testing.T) *vault.Vault {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// openTest opens an indexer on st over an index in dir (a new one if
// empty), closed with the test at position 0.
func openTest(t *testing.T, dir string, st Items, mod ...func(*Config)) *Indexer {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	cfg := Config{
		Search: search.Config{Dir: dir, Vault: testVault(t), FlushAfter: time.Hour},
		Items:  st,
	}
	for _, m := range mod {
		m(&cfg)
	}
	x, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close(storage.Position{}) })
	return x
}

// found returns the ids of the user's documents that match query, sorted.
func found(t *testing.T, x *Indexer, userID, query string) []string {
	t.Helper()
	q, err := search.Parse(query)
	if err != nil {
		t.Fatal(err)
	}
	res, err := x.Search().Search(userID, search.Request{Query: q, Limit: search.MaxLimit})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, h := range res.Hits {
		ids = append(ids, h.ID)
	}
	slices.Sort(ids)
	return ids
}

// want fails unless the user's documents matching query are ids.
func want(t *testing.T, x *Indexer, userID, query string, ids ...string) {
	t.Helper()
	if got := found(t, x, userID, query); !slices.Equal(got, ids) {
		t.Errorf("%s finds %q: got %v, want %v", userID, query, got, ids)
	}
}

// idle waits until the user has no worker and nothing queued.
func (x *Indexer) idle(userID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	for q := x.queues[userID]; q != nil && q.running; q = x.queues[userID] {
		x.changed.Wait()
	}
}

// state returns the user's queued changes and whether a catch-up of the
// user is due and under way.
func (x *Indexer) state(userID string) (ops []op, due, running bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	q := x.queues[userID]
	if q == nil {
		return nil, false, false
	}
	return slices.Clone(q.ops), q.catchUp, q.catchingUp
}

// run runs x.Run at pos until the test ends.
func run(t *testing.T, x *Indexer, pos storage.Position) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); x.Run(ctx, pos) }()
	t.Cleanup(func() { cancel(); <-done })
}
