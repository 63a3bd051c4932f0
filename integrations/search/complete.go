package search

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"strings"
	"unicode/utf8"
)

// Completions while typing (GET /v1/search/suggest, docs/search.md,
// "Suggestions while typing"): the word being typed, the last of the
// query, completed to senders, titles and frequent words of the user's
// own items. Everything comes from what the index already keeps, sealed
// as ever: the words from the term dictionary (by the items that hold
// them), the senders and titles from the stored fields of the newest
// items matching the word as a prefix in that field. The work is
// bounded: a few hundred dictionary entries per part and
// completePostings postings per field (from the third letter on),
// whatever the index holds.

// Completion kinds.
const (
	CompleteFrom  = "from"
	CompleteTitle = "title"
	CompleteWord  = "word"
)

// MaxCompletions is how many completions Complete returns at most.
const MaxCompletions = 8

const (
	// completeScan bounds the dictionary entries read per part for one
	// kind of entry (stems, words as written).
	completeScan = 256
	// completePostings bounds the postings a sender or title lookup
	// reads; a prefix too common for it offers words alone.
	completePostings = 5_000
	// completeFieldRunes is the shortest word completed to senders and
	// titles: two letters start too many of them to find the newest
	// within the bound.
	completeFieldRunes = 3
	// completeEach is how many senders, and how many titles, one answer
	// holds at most.
	completeEach = 3
	// maxCompleteTitle bounds a title offered, in bytes.
	maxCompleteTitle = 200
)

// Completion is one suggestion while typing: Text is what the list
// shows, Query the query it stands for (the typed query with its last
// word completed, or a from: or subject: query).
type Completion struct {
	Kind  string
	Text  string
	Query string
}

// Complete returns up to MaxCompletions completions of q's last word:
// senders, then titles, then words, none twice. A query ending in a
// space, or whose last word is an operator, a quoted phrase, a field:
// or shorter than 2 characters, has none.
func (ix *Index) Complete(ctx context.Context, userID, q string) ([]Completion, error) {
	out := []Completion{}
	head, word, ok := lastWord(q)
	if !ok {
		return out, nil
	}
	u, err := ix.getUser(userID, false)
	if err != nil || u == nil {
		return out, err
	}
	seen := map[string]bool{}
	add := func(c Completion) {
		if len(out) < MaxCompletions && !seen[c.Query] {
			seen[c.Query] = true
			out = append(out, c)
		}
	}
	for _, f := range []Field{FieldFrom, FieldTitle} {
		if utf8.RuneCountInString(word) < completeFieldRunes {
			break
		}
		cs, err := ix.completeField(ctx, u, f, word)
		if err != nil {
			return []Completion{}, err
		}
		for _, c := range cs {
			add(c)
		}
	}
	for _, w := range completeWords(u, word) {
		add(Completion{Kind: CompleteWord, Text: w, Query: head + w})
	}
	return out, nil
}

// lastWord splits q into what comes before its last word and that word,
// folded; ok is false when there is no plain word being typed.
func lastWord(q string) (head, word string, ok bool) {
	i := strings.LastIndexAny(q, " \t\n") + 1
	last := q[i:]
	if last == "" || strings.ContainsAny(last, `:"()*~`) || last[0] == '-' || last == "OR" {
		return "", "", false
	}
	var toks []Token
	Analyze(last, func(t Token) { toks = append(toks, t) })
	if len(toks) != 1 || toks[0].Start != 0 || toks[0].End != len(last) || utf8.RuneCountInString(toks[0].Word) < 2 {
		return "", "", false
	}
	return q[:i], toks[0].Word, true
}

// completeField returns the senders (FieldFrom) or titles (FieldTitle) of
// the newest items with a word in that field starting with word.
func (ix *Index) completeField(ctx context.Context, u *user, f Field, word string) ([]Completion, error) {
	req := Request{Query: Term{Field: f, Text: word, Prefix: true}, Sort: SortDate}
	res, _, err := ix.search(u, req, 4*completeEach, 'd', nil, newBudget(ctx, completePostings))
	if errors.Is(err, ErrTooBroad) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Completion
	for _, h := range res.Hits {
		if !h.HasStored || len(out) == completeEach {
			continue
		}
		var c Completion
		if f == FieldFrom {
			c = fromCompletion(h.Stored.From)
		} else {
			c = titleCompletion(h.Stored.Title)
		}
		if c.Query != "" && !slices.ContainsFunc(out, func(o Completion) bool { return o.Query == c.Query }) {
			out = append(out, c)
		}
	}
	return out, nil
}

// fromCompletion offers a sender: by the address when it has one.
func fromCompletion(from string) Completion {
	from = strings.TrimSpace(from)
	addr := from
	if i, j := strings.LastIndexByte(from, '<'), strings.LastIndexByte(from, '>'); i >= 0 && j > i {
		addr = from[i+1 : j]
	}
	if addr == "" || strings.ContainsAny(addr, " \t\"()") {
		if addr = strings.Join(strings.FieldsFunc(from, func(r rune) bool { return strings.ContainsRune(" \t\"()<>", r) }), " "); addr == "" {
			return Completion{}
		}
		return Completion{Kind: CompleteFrom, Text: from, Query: `from:"` + addr + `"`}
	}
	return Completion{Kind: CompleteFrom, Text: from, Query: "from:" + addr}
}

// titleCompletion offers a title as a subject: phrase.
func titleCompletion(title string) Completion {
	title = strings.Join(strings.Fields(title), " ")
	if title == "" || len(title) > maxCompleteTitle {
		return Completion{}
	}
	return Completion{Kind: CompleteTitle, Text: title, Query: `subject:"` + strings.ReplaceAll(title, `"`, " ") + `"`}
}

// completeWords returns the words of u's index starting with word, those
// in the most items first. A stem is offered only as written: "software"
// with the items of the stem "softwar".
func completeWords(u *user, word string) []string {
	u.mu.RLock()
	defer u.mu.RUnlock()
	type cand struct {
		df      uint64
		written bool
	}
	cands := map[string]cand{}
	for _, p := range searchable(u) {
		for _, mark := range []string{"", wordMark} {
			err := p.prefix(mark+word, completeScan, func(r termRef) {
				w := r.term[len(mark):]
				c := cands[w]
				c.df += uint64(r.df)
				c.written = c.written || mark != ""
				cands[w] = c
			})
			if err != nil {
				break // a damaged part: a search finds and drops it
			}
		}
	}
	// A stem is in the dictionary for every word written with it; the
	// words written otherwise are there too, marked. A stem is a word
	// itself ("money") when more items hold it than hold its other
	// written forms ("moneyed"); else ("softwar") it is offered as its
	// most frequent written form, with the stem's items.
	type form struct {
		word string
		df   uint64
	}
	forms := map[string]form{} // stem: its most frequent written form
	others := map[string]uint64{}
	for w, c := range cands {
		if !c.written {
			continue
		}
		stem := ""
		Analyze(w, func(t Token) { stem = t.Term })
		if s, ok := cands[stem]; ok && stem != w && !s.written {
			others[stem] += c.df
			if f := forms[stem]; c.df > f.df || c.df == f.df && w < f.word {
				forms[stem] = form{w, c.df}
			}
		}
	}
	for stem, f := range forms {
		if cands[stem].df > others[stem] {
			continue
		}
		c := cands[f.word]
		c.df = max(c.df, cands[stem].df)
		cands[f.word] = c
		delete(cands, stem)
	}
	words := make([]string, 0, len(cands))
	for w := range cands {
		if w != word && !strings.ContainsAny(w, "@.") {
			words = append(words, w)
		}
	}
	slices.SortFunc(words, func(a, b string) int {
		if c := cmp.Compare(cands[b].df, cands[a].df); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return words[:min(len(words), MaxCompletions)]
}
