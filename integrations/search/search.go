package search

import (
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
}

// Hit is one result.
type Hit struct {
	ID          string
	RecordID    string
	Integration string
	Kind        string
	Date        time.Time
	Score       float64 // BM25F; 0 under SortDate
}

// Result is one page of results.
type Result struct {
	Hits              []Hit
	Total             int // matching items, at most MaxTotal
	TotalIsLowerBound bool
	NextCursor        string // empty on the last page
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

func (a key) before(b key) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	if a.date != b.date {
		return a.date > b.date
	}
	return a.id < b.id
}

func encodeCursor(sort byte, k key) string {
	b := []byte{1, sort}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(k.score))
	b = binary.BigEndian.AppendUint64(b, uint64(k.date))
	b = append(b, k.id...)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, sort byte) (key, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 18 || b[0] != 1 || b[1] != sort || len(b) > 18+maxTerm {
		return key{}, ErrBadCursor
	}
	k := key{
		score: math.Float64frombits(binary.BigEndian.Uint64(b[2:])),
		date:  int64(binary.BigEndian.Uint64(b[10:])),
		id:    string(b[18:]),
	}
	if math.IsNaN(k.score) {
		return key{}, ErrBadCursor
	}
	return k, nil
}

type candidate struct {
	k key
	p *part
	d uint32
}

// Search runs a query over one user's index. It reads only: nothing is
// written to answer it. A part found damaged on the way is left out of
// the answer and dropped afterwards (see NeedsRebuild).
func (ix *Index) Search(userID string, req Request) (Result, error) {
	start := time.Now()
	defer func() {
		ix.stats.queries.Add(1)
		ix.stats.queryNanos.Add(int64(time.Since(start)))
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
	var after *key
	if req.Cursor != "" {
		k, err := decodeCursor(req.Cursor, sortByte)
		if err != nil {
			return Result{}, err
		}
		after = &k
	}
	u, err := ix.getUser(userID, false)
	if err != nil {
		return Result{}, err
	}
	if u == nil {
		if _, err := (&planner{df: map[string]int{}, r: &ranker{}}).build(req.Query, 0); err != nil {
			return Result{}, err
		}
		return Result{Hits: []Hit{}}, nil
	}
	res, damaged, err := ix.search(u, req, limit, sortByte, after)
	if damaged {
		ix.dropBad(u)
	}
	return res, err
}

func (ix *Index) search(u *user, req Request, limit int, sortByte byte, after *key) (Result, bool, error) {
	u.mu.RLock()
	defer u.mu.RUnlock()
	var parts []*part
	for _, p := range u.parts {
		if !p.bad.Load() && p.docs() > 0 {
			parts = append(parts, p)
		}
	}
	r := newRanker(parts)
	pl := &planner{parts: parts, r: &r, df: map[string]int{}}
	root, err := pl.build(req.Query, 0)
	if err != nil {
		return Result{}, false, err
	}
	pl.finish(root)

	var in, nin map[string]bool
	if len(req.InIDs) > 0 {
		in = map[string]bool{}
		for _, id := range req.InIDs {
			in[id] = true
		}
	}
	if len(req.NinIDs) > 0 {
		nin = map[string]bool{}
		for _, id := range req.NinIDs {
			nin[id] = true
		}
	}
	sc, _ := ix.scratch.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer ix.scratch.Put(sc)
	total := 0
	top := make([]candidate, 0, limit+1)
	damaged := false
	for i, p := range parts {
		if p.bad.Load() {
			damaged = true
			continue
		}
		ev := &evaluator{p: p, i: i, r: &r, sc: sc}
		s := ev.eval(root)
		if ev.err != nil {
			p.bad.Store(true)
			damaged = true
			continue
		}
		c := p.cols()
		rec := int64(-1)
		if req.RecordID != "" {
			rec = int64(slices.Index(c.records, req.RecordID))
			if rec < 0 {
				continue
			}
		}
		for j, d := range s.docs {
			if p.deleted(d) || rec >= 0 && int64(c.record[d]) != rec {
				continue
			}
			id := c.ids[d]
			if in != nil && !in[id] || nin != nil && nin[id] {
				continue
			}
			total++
			k := key{date: c.dates[d], id: id}
			if sortByte == 'r' {
				k.score = scoreAt(s, j)
			}
			if after != nil && !after.before(k) {
				continue
			}
			if len(top) == limit+1 && !k.before(top[limit].k) {
				continue
			}
			at, _ := slices.BinarySearchFunc(top, k, func(c candidate, k key) int {
				if c.k.before(k) {
					return -1
				}
				return 1
			})
			if len(top) == limit+1 {
				top = top[:limit]
			}
			top = slices.Insert(top, at, candidate{k: k, p: p, d: d})
		}
		ev.release(s)
	}
	for _, p := range u.parts {
		damaged = damaged || p.bad.Load()
	}
	res := Result{Hits: make([]Hit, 0, min(len(top), limit)), Total: min(total, MaxTotal), TotalIsLowerBound: total > MaxTotal}
	for j, cd := range top {
		if j == limit {
			last := top[limit-1].k
			res.NextCursor = encodeCursor(sortByte, last)
			break
		}
		c := cd.p.cols()
		res.Hits = append(res.Hits, Hit{
			ID:          cd.k.id,
			RecordID:    c.records[c.record[cd.d]],
			Integration: c.integs[c.integ[cd.d]],
			Kind:        c.kinds[c.kind[cd.d]],
			Date:        time.UnixMilli(cd.k.date).UTC(),
			Score:       cd.k.score,
		})
	}
	return res, damaged, nil
}
