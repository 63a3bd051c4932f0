package search

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"searchsvc/integrations/vault"
)

// Config configures Open.
type Config struct {
	// Dir holds the index: one directory per user, named by the user's id.
	Dir string
	// Vault seals everything written (vault.SearchIndex) under its
	// current key and opens what its previous keys sealed, until Reseal
	// rewrites that.
	Vault *vault.Vault
	// CacheBytes bounds the cache of opened blocks; default 16 MiB.
	CacheBytes int64
	// FlushBytes is the memory of added documents, in bytes, that makes a
	// user's buffer a segment; default 12 MiB. Bulk indexing holds at most
	// two such buffers per user.
	FlushBytes int
	// FlushAfter is the quiet time after which buffered documents are
	// written to a segment anyway; default 2 s.
	FlushAfter time.Duration
	// MergeFactor is how many segments of one tier are merged into one;
	// default 5. Each document is rewritten at most once per tier.
	MergeFactor int
	// MaxMergeDocs bounds the live documents a merge puts in one segment;
	// default 16,384. Larger segments are only rewritten to drop deleted
	// documents.
	MaxMergeDocs int
	// MaxPostings bounds the postings one query reads, all its terms and
	// parts together (the documents a NOT or a filter alone walks count
	// too); a query over it is ErrTooBroad. Default DefaultMaxPostings.
	MaxPostings int
	// OnDamage, if set, is called (from the goroutine that found it) when
	// part of a user's index was found damaged and dropped: the caller
	// reconciles that user against the store (see NeedsRebuild).
	OnDamage func(userID string)
	// OnQuery, if set, is told how long each query took (Search, on Now's
	// clock), from the goroutine that ran it: the service's query duration
	// histogram. It must not block.
	OnQuery func(time.Duration)
	Logger  *slog.Logger
	Now     func() time.Time // time.Now by default
}

// ErrBadUser is returned for a user id that is not a UUID-like name.
var ErrBadUser = errors.New("search: bad user id")

// ErrClosed is returned by writes to a closed index.
var ErrClosed = errors.New("search: index closed")

// Index is the full-text index of every user. Its methods are safe for
// concurrent use.
type Index struct {
	cfg   Config
	s     *sealer
	cache *cache
	log   *slog.Logger

	mu    sync.Mutex
	users map[string]*user
	// userSnap is users as a slice, made by userList and dropped when
	// users changes, so that the flusher's and the merger's ticks, which
	// list the users every half second and every 10 s, allocate nothing
	// while the index is quiet: an idle service must not wake the
	// collector (docs/operations.md, "Memory").
	userSnap []*user
	closed   bool
	cpWant   uint64
	cpDone   uint64
	lastAdd  time.Time

	flushKick chan struct{}
	mergeKick chan struct{}
	stop      chan struct{}
	wg        sync.WaitGroup
	ioMu      sync.Mutex // one flush at a time
	scratch   sync.Pool  // of *scratch, for queries
	// f1 makes flushes write segments as before stored fields existed
	// (footer F1, stored.go): tests stand an older index with it.
	f1 bool
	// noProximity ranks by BM25F alone (rank.go), and allWords
	// weighs the query's function words as any other (rank.go's
	// quietStopwords): the ranking benchmark's baselines.
	noProximity, allWords bool
	// noPrune scores every posting of a long Or (prune.go): the
	// exhaustive reference its tests compare with.
	noPrune bool
	// searches counts the searches running, which decides whether one
	// may start helpers (parallel.go); helpers, when not zero, is the
	// helpers every search starts (-1: none), for tests.
	searches  atomic.Int32
	helpers   int
	minHelped int // tests: the postings before helpers, partHelpersMin when zero

	stats struct {
		queries, queryNanos, written, flushes, merges atomic.Int64
		plainWritten                                  atomic.Int64 // segment blocks before compression
	}
}

// user is one user's index: segments, buffers being written, the buffer
// being filled.
type user struct {
	id      string
	dir     string
	mu      sync.RWMutex
	flushed *sync.Cond // signalled when a frozen buffer became a segment
	// mergeDone is signalled when a merge ends (merging is false).
	mergeDone *sync.Cond
	parts     []*part // segments oldest first, then frozen buffers, then buf
	buf       *part
	frozen    int // frozen buffers waiting for the flusher
	nextSeq   uint64
	rebuild   bool
	dirty     bool // deletions or changes the manifest lacks
	gone      bool
	merging   bool
	manMu     sync.Mutex // orders manifest writes
}

func validUser(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-') {
			return false
		}
	}
	return true
}

// Open opens or creates the index in cfg.Dir. A user whose manifest or
// segment does not open keeps what does, and is reported by NeedsRebuild
// (and OnDamage); Open fails only for a bad configuration or a Dir it
// cannot use.
func Open(cfg Config) (*Index, error) {
	if cfg.Dir == "" {
		return nil, errors.New("search: no Dir")
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = 16 << 20
	}
	if cfg.FlushBytes <= 0 {
		cfg.FlushBytes = 12 << 20
	}
	if cfg.FlushAfter <= 0 {
		cfg.FlushAfter = 2 * time.Second
	}
	if cfg.MaxPostings <= 0 {
		cfg.MaxPostings = DefaultMaxPostings
	}
	if cfg.MergeFactor < 2 {
		cfg.MergeFactor = 5
	}
	if cfg.MaxMergeDocs <= 0 {
		cfg.MaxMergeDocs = 16 << 10
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s, err := newSealer(cfg.Vault)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, err
	}
	ix := &Index{
		cfg: cfg, s: s, cache: newCache(cfg.CacheBytes), log: cfg.Logger.With("component", "search"),
		users:     map[string]*user{},
		flushKick: make(chan struct{}, 1), mergeKick: make(chan struct{}, 1), stop: make(chan struct{}),
	}
	if err := ix.readCheckpoint(); err != nil {
		return nil, err
	}
	ix.cpWant = ix.cpDone
	entries, err := os.ReadDir(cfg.Dir)
	if err != nil {
		return nil, err
	}
	var damaged []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, ".deleted"):
			os.RemoveAll(filepath.Join(cfg.Dir, name))
		case e.IsDir() && validUser(name):
			u := ix.loadUser(name)
			ix.users[name] = u
			ix.userSnap = nil
			if u.rebuild {
				damaged = append(damaged, name)
			}
		}
	}
	for _, id := range damaged {
		if cfg.OnDamage != nil {
			cfg.OnDamage(id)
		}
	}
	ix.wg.Add(2)
	go ix.flusher()
	go ix.merger()
	ix.kick(ix.mergeKick)
	return ix, nil
}

func newUser(dir, id string) *user {
	u := &user{id: id, dir: filepath.Join(dir, id), nextSeq: 1}
	u.flushed = sync.NewCond(&u.mu)
	u.mergeDone = sync.NewCond(&u.mu)
	u.buf = &part{buf: newBuffer()}
	u.parts = []*part{u.buf}
	return u
}

// loadUser opens a user's manifest and segments. What does not open is
// dropped and the user flagged for a rebuild; files the manifest does not
// list (left by a crash) are removed.
func (ix *Index) loadUser(id string) *user {
	u := newUser(ix.cfg.Dir, id)
	m, err := readManifest(ix.s, u.dir, id)
	listed := map[string]bool{manifestName: true}
	switch {
	case errors.Is(err, os.ErrNotExist):
		m = &manifest{nextSeq: 1}
	case err != nil:
		ix.log.Error("search manifest damaged, the user's index is rebuilt", "user_id", id, "err", err)
		m = &manifest{nextSeq: 1, rebuild: true}
		u.dirty = true
	}
	u.nextSeq, u.rebuild = m.nextSeq, m.rebuild
	var segs []*part
	for _, ms := range m.segs {
		name := segName(ms.seq)
		seg, err := openSegmentFile(filepath.Join(u.dir, name), ix.s, id, ms.seq, ix.cache)
		if err != nil {
			ix.log.Error("search segment damaged, dropped", "user_id", id, "segment", ms.seq, "err", err)
			u.rebuild, u.dirty = true, true
			continue
		}
		listed[name] = true
		p := &part{seg: seg}
		for _, d := range ms.deleted {
			if int(d) < seg.cols.len() {
				p.remove(d)
			}
		}
		segs = append(segs, p)
	}
	u.parts = append(segs, u.buf)
	if entries, err := os.ReadDir(u.dir); err == nil {
		for _, e := range entries {
			if !listed[e.Name()] {
				os.Remove(filepath.Join(u.dir, e.Name()))
			}
		}
	}
	return u
}

func segName(seq uint64) string { return strconv.FormatUint(seq, 16) + ".seg" }

// getUser returns the user, creating an empty one when create is set.
func (ix *Index) getUser(id string, create bool) (*user, error) {
	if !validUser(id) {
		return nil, ErrBadUser
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.closed {
		return nil, ErrClosed
	}
	u := ix.users[id]
	if u == nil && create {
		u = newUser(ix.cfg.Dir, id)
		ix.users[id] = u
		ix.userSnap = nil
	}
	return u, nil
}

func (ix *Index) kick(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Close writes what is buffered and closes the index.
func (ix *Index) Close() error {
	ix.mu.Lock()
	if ix.closed {
		ix.mu.Unlock()
		return nil
	}
	ix.mu.Unlock()
	close(ix.stop)
	ix.wg.Wait()
	err := ix.flushAll()
	ix.mu.Lock()
	ix.closed = true
	users := ix.users
	ix.mu.Unlock()
	for _, u := range users {
		u.mu.Lock()
		for _, p := range u.parts {
			if p.seg != nil {
				p.seg.close()
			}
		}
		u.gone = true
		u.flushed.Broadcast()
		u.mergeDone.Broadcast()
		u.mu.Unlock()
	}
	ix.cache.close()
	return err
}

func (ix *Index) userList() []*user {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ix.userSnap == nil {
		ix.userSnap = make([]*user, 0, len(ix.users))
		for _, u := range ix.users {
			ix.userSnap = append(ix.userSnap, u)
		}
	}
	return ix.userSnap // shared: callers only read it
}
