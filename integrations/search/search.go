package search

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math"
	"slices"
	"time"
)

// Sort orders of a search.
const (
	SortRelevance = "relevance"
	SortDate      = "date"
)

// Paging limits: Limit is 1 to MaxLimit, DefaultLimit when zero; Total is
// exact up to MaxTotal.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	MaxTotal     = 10_000
)

// Request is one search.
type Request struct {
	Query    Node
	Limit    int    // results per page; 0 is DefaultLimit, more than MaxLimit is MaxLimit
	Cursor   string // from the previous page's NextCursor
	Sort     string // SortRelevance (default) or SortDate (newest first)
	RecordID string // only items of this user-integration record
	InIDs    []string
	NinIDs   []string
	// Relax matches most of the words of an And of 3 or more when every
	// word finds fewer than RelaxBelow items (see Relax).
	Relax bool
}

// Hit is one result.
type Hit struct {
	ID          string
	RecordID    string
	Integration string
	Kind        string
	Date        time.Time
	Score       float64 // BM25F; 0 under SortDate
	// Stored is the document's stored fields when HasStored (stored.go):
	// the answer without opening the item. A document of a segment
	// written before stored fields existed has none until a merge with
	// them or a reindex (docs/search.md, "Answers from the index").
	Stored    Stored
	HasStored bool
}

// Result is one page of results.
type Result struct {
	Hits              []Hit
	Total             int // matching items, at most MaxTotal
	TotalIsLowerBound bool
	NextCursor        string // empty on the last page
	Relaxed           bool   // most of the words matched, not every one (Request.Relax)
}

// ErrBadCursor is returned for a cursor that this index did not hand out
// for this sort order.
var ErrBadCursor = errors.New("search: bad cursor")

// key orders hits: higher score first, then newer, then smaller id.
type key struct {
	score float64
	date  int64
	id    string
}

// order compares keys by score and date alone: -1 when a goes first, 1
// when b does, 0 when only their ids can tell.
func (a key) order(b key) int {
	switch {
	case a.score != b.score:
		if a.score > b.score {
			return -1
		}
		return 1
	case a.date != b.date:
		if a.date > b.date {
			return -1
		}
		return 1
	}
	return 0
}

// cursor is where the next page starts, and under SortRelevance the
// figures the first page was scored with: the number of documents, the
// fields' average lengths and each query term's document frequency.
// Later pages score with them, so a document keeps its score, and its
// place in the order, whatever was added, merged or deleted between
// pages: each document the first page could rank is on one page only.
type cursor struct {
	k     key
	n     int
	inv   [numFields]float64
	dfs   []int
	stats bool
}

// maxCursor bounds a decoded cursor: the key, the figures and a df for
// each of MaxTerms terms.
const maxCursor = 2 + 16 + 10 + 8*int(numFields) + 2 + 10*MaxTerms + 2 + maxTerm

func encodeCursor(sort byte, c cursor) string {
	b := []byte{2, sort}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(c.k.score))
	b = binary.BigEndian.AppendUint64(b, uint64(c.k.date))
	b = binary.AppendUvarint(b, uint64(len(c.k.id)))
	b = append(b, c.k.id...)
	if c.stats {
		b = binary.AppendUvarint(b, uint64(c.n))
		for _, v := range c.inv {
			b = binary.BigEndian.AppendUint64(b, math.Float64bits(v))
		}
		b = binary.AppendUvarint(b, uint64(len(c.dfs)))
		for _, df := range c.dfs {
			b = binary.AppendUvarint(b, uint64(df))
		}
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, sort byte) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) < 18 || raw[0] != 2 || raw[1] != sort || len(raw) > maxCursor {
		return cursor{}, ErrBadCursor
	}
	var c cursor
	r := &reader{b: raw[2:]}
	u64 := func() uint64 {
		if b := r.bytes(8); b != nil {
			return binary.BigEndian.Uint64(b)
		}
		return 0
	}
	c.k.score = math.Float64frombits(u64())
	c.k.date = int64(u64())
	c.k.id = r.string(maxTerm)
	if sort == 'r' {
		c.stats = true
		c.n = int(min(r.uvarint(), math.MaxInt32))
		for f := range c.inv {
			c.inv[f] = math.Float64frombits(u64())
			if v := c.inv[f]; r.err == nil && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0) {
				return cursor{}, ErrBadCursor
			}
		}
		n := r.count(1)
		if n > MaxTerms {
			return cursor{}, ErrBadCursor
		}
		c.dfs = make([]int, 0, n)
		for range n {
			c.dfs = append(c.dfs, int(min(r.uvarint(), uint64(c.n))))
		}
	}
	if r.err != nil || len(r.b) != 0 || math.IsNaN(c.k.score) {
		return cursor{}, ErrBadCursor
	}
	return c, nil
}

// candidate is a document that may be on the page. Its key has no id:
// the id is written out only to break a tie (see before) and for the
// page's hits, as most candidates are pushed out by better ones.
type candidate struct {
	k key
	p *part
	d uint32
}

func (a candidate) before(b candidate) bool {
	if o := a.k.order(b.k); o != 0 {
		return o < 0
	}
	var x, y [36]byte
	return bytes.Compare(a.p.cols().appendDocID(x[:0], a.d), b.p.cols().appendDocID(y[:0], b.d)) < 0
}

// withID is the candidate's key with its id.
func (a candidate) withID() key {
	k := a.k
	k.id = a.p.cols().id(a.d)
	return k
}

// Search runs a query over one user's index, as SearchContext does with
// a context that never ends.
func (ix *Index) Search(userID string, req Request) (Result, error) {
	return ix.SearchContext(context.Background(), userID, req)
}

// SearchContext runs a query over one user's index. It reads only:
// nothing is written to answer it. A part found damaged on the way is
// left out of the answer and dropped afterwards (see NeedsRebuild). A
// query that would read more than Config.MaxPostings postings is
// ErrTooBroad, and one whose ctx ends before it finished is ErrStopped
// (wrapping ctx's error); neither has a partial answer.
func (ix *Index) SearchContext(ctx context.Context, userID string, req Request) (Result, error) {
	if req.Relax {
		return ix.relaxed(ctx, userID, req)
	}
	start := ix.cfg.Now()
	defer func() {
		d := ix.cfg.Now().Sub(start)
		ix.stats.queries.Add(1)
		ix.stats.queryNanos.Add(int64(d))
		if ix.cfg.OnQuery != nil {
			ix.cfg.OnQuery(d)
		}
	}()
	if req.Query == nil {
		return Result{}, ErrBadQuery
	}
	limit := req.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	sortByte := byte('r')
	if req.Sort == SortDate {
		sortByte = 'd'
	} else if req.Sort != "" && req.Sort != SortRelevance {
		return Result{}, ErrBadQuery
	}
	var after *cursor
	if req.Cursor != "" {
		c, err := decodeCursor(req.Cursor, sortByte)
		if err != nil {
			return Result{}, err
		}
		after = &c
	}
	u, err := ix.getUser(userID, false)
	if err != nil {
		return Result{}, err
	}
	if u == nil {
		if _, err := newPlanner(nil, &ranker{}, req.Query).build(req.Query, 0); err != nil {
			return Result{}, err
		}
		return Result{Hits: []Hit{}}, nil
	}
	work := newBudget(ctx, ix.cfg.MaxPostings)
	res, damaged, err := ix.search(u, req, limit, sortByte, after, work)
	if damaged {
		ix.dropBad(u)
	}
	return res, err
}

func (ix *Index) search(u *user, req Request, limit int, sortByte byte, after *cursor, work *budget) (Result, bool, error) {
	// Counted for the helpers (parallel.go): a page of results and a
	// completion's alike.
	ix.searches.Add(1)
	defer ix.searches.Add(-1)
	u.mu.RLock()
	defer u.mu.RUnlock()
	parts := searchable(u)
	known := newTermLookups(parts)
	query := expandLangs(req.Query, userLangs(parts), known.has)
	r := newRanker(parts)
	pl := newPlanner(parts, &r, query)
	pl.known = known
	if after != nil && after.stats {
		r.n, r.invAvg = after.n, after.inv
		pl.frozen = after.dfs
	}
	root, err := pl.build(query, 0)
	if err != nil {
		return Result{}, false, err
	}
	if pl.frozen != nil && len(pl.dfs) != len(pl.frozen) {
		return Result{}, false, ErrBadCursor // a cursor of another query
	}

	pg := newPager(req, limit, sortByte, after)
	var near []*plan
	if sortByte == 'r' && !ix.allWords {
		quietStopwords(root)
	}
	if sortByte == 'r' && !ix.noProximity {
		near = proximityTerms(root)
	}
	q := &partQuery{parts: parts, root: root, near: near, r: &r, recordID: req.RecordID, work: work}
	damaged := ix.evalParts(q, pg, ix.partHelpers(parts, pl))
	if err := work.failed(); err != nil {
		// Spent or stopped: no answer from part of the index.
		return Result{}, damaged, err
	}
	res := pg.result(&r, pl)
	for _, p := range u.parts {
		damaged = damaged || p.bad.Load()
	}
	return res, damaged, nil
}

// searchable returns the parts of u a search reads: those not marked bad
// that hold documents.
func searchable(u *user) []*part {
	var parts []*part
	for _, p := range u.parts {
		if !p.bad.Load() && p.docs() > 0 {
			parts = append(parts, p)
		}
	}
	return parts
}

// pager keeps the best limit+1 matches of a search, over all its parts,
// in the page's order, and counts every match the filters let through.
type pager struct {
	in, nin  map[string]bool // req.InIDs and req.NinIDs; nil when empty
	limit    int
	sortByte byte
	after    *cursor
	top      []candidate // sorted, at most limit+1
	total    int
}

func newPager(req Request, limit int, sortByte byte, after *cursor) *pager {
	pg := &pager{limit: limit, sortByte: sortByte, after: after, top: make([]candidate, 0, limit+1)}
	if len(req.InIDs) > 0 {
		pg.in = map[string]bool{}
		for _, id := range req.InIDs {
			pg.in[id] = true
		}
	}
	if len(req.NinIDs) > 0 {
		pg.nin = map[string]bool{}
		for _, id := range req.NinIDs {
			pg.nin[id] = true
		}
	}
	return pg
}

// add offers the documents of s, the matches in part p, to the page;
// recordID, when not empty, keeps only that record's.
func (pg *pager) add(p *part, s set, recordID string) {
	c := p.cols()
	rec := int64(-1)
	if recordID != "" {
		rec = int64(slices.Index(c.records, recordID))
		if rec < 0 {
			return
		}
	}
	in, nin, after, limit := pg.in, pg.nin, pg.after, pg.limit
	// A document's id is written out (into idBuf, see
	// columns.appendDocID) only when a filter or the cursor needs it:
	// most documents fall behind the page by score or date alone.
	var idBuf [36]byte
	for j, d := range s.docs {
		if p.deleted(d) || rec >= 0 && int64(c.recordAt(d)) != rec {
			continue
		}
		var id []byte
		if in != nil || nin != nil {
			id = c.appendDocID(idBuf[:0], d)
			if in != nil && !in[string(id)] || nin != nil && nin[string(id)] {
				continue
			}
		}
		pg.total++
		var k key
		if pg.sortByte == 'r' {
			k.score = scoreAt(s, j)
			// Most matches of a common word fall behind a full page by
			// score alone: neither their date nor their place is read.
			if len(pg.top) == limit+1 && k.score < pg.top[limit].k.score {
				continue
			}
		}
		k.date = c.dates.at(d)
		if after != nil {
			o := after.k.order(k)
			if o == 0 && id == nil {
				id = c.appendDocID(idBuf[:0], d)
			}
			if o > 0 || o == 0 && after.k.id >= string(id) {
				continue
			}
		}
		pg.offer(candidate{k: k, p: p, d: d})
	}
}

// offer puts cd on the page if it is among the best limit+1 so far.
func (pg *pager) offer(cd candidate) {
	if len(pg.top) == pg.limit+1 && !cd.before(pg.top[pg.limit]) {
		return
	}
	at, _ := slices.BinarySearchFunc(pg.top, cd, func(c, cd candidate) int {
		if c.before(cd) {
			return -1
		}
		return 1
	})
	if len(pg.top) == pg.limit+1 {
		pg.top = pg.top[:pg.limit]
	}
	pg.top = slices.Insert(pg.top, at, cd)
}

// empty returns a pager of pg's request with nothing in it yet.
func (pg *pager) empty() *pager {
	return &pager{in: pg.in, nin: pg.nin, limit: pg.limit, sortByte: pg.sortByte, after: pg.after,
		top: make([]candidate, 0, pg.limit+1)}
}

// merge adds what o, a pager of the same request over other parts,
// found: its matches to the total, its best documents to the page.
func (pg *pager) merge(o *pager) {
	pg.total += o.total
	for _, cd := range o.top {
		pg.offer(cd)
	}
}

// result is the page: its hits, the total, and the cursor of the next
// page, which carries the ranker's statistics (r, pl) when sorting by
// relevance, so that the next page scores as this one did.
func (pg *pager) result(r *ranker, pl *planner) Result {
	top, limit := pg.top, pg.limit
	var pn pins
	defer pn.release()
	res := Result{Hits: make([]Hit, 0, min(len(top), limit)), Total: min(pg.total, MaxTotal), TotalIsLowerBound: pg.total > MaxTotal}
	for j, cd := range top {
		if j == limit {
			next := cursor{k: top[limit-1].withID()}
			if pg.sortByte == 'r' {
				next.stats, next.n, next.inv, next.dfs = true, r.n, r.invAvg, pl.dfs
			}
			res.NextCursor = encodeCursor(pg.sortByte, next)
			break
		}
		c := cd.p.cols()
		// A stored record that does not open leaves the hit without
		// it (the route then answers from the item) and the part is
		// dropped and rebuilt, as for any block that does not open.
		st, ok, err := cd.p.stored(cd.d, &pn)
		pn.release()
		if err != nil {
			cd.p.bad.Store(true)
		}
		res.Hits = append(res.Hits, Hit{
			Stored:      st,
			HasStored:   ok && err == nil,
			ID:          c.id(cd.d),
			RecordID:    c.records[c.recordAt(cd.d)],
			Integration: c.integAt(cd.d),
			Kind:        c.kindAt(cd.d),
			Date:        time.UnixMilli(cd.k.date).UTC(),
			Score:       cd.k.score,
		})
	}
	return res
}
