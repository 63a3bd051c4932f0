package search

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Fragment is a piece of a snippet; Match marks a word the query matched.
type Fragment struct {
	Text  string
	Match bool
}

// Snippet limits: about SnippetChars characters around the best passage;
// only the first snippetScan bytes of a text are looked at, which bounds
// its cost on a very long text.
const (
	SnippetChars = 240
	snippetScan  = 256 << 10
	ellipsis     = "…"
)

// matcher is one word of a query as a snippet looks for it.
type matcher struct {
	text   string
	prefix bool
}

// snippetTerms collects the words a query looks for in the text, leaving
// out what it excludes.
func snippetTerms(n Node, out []matcher) []matcher {
	switch n := n.(type) {
	case And:
		for _, c := range n.Children {
			out = snippetTerms(c, out)
		}
	case *And:
		return snippetTerms(*n, out)
	case Or:
		for _, c := range n.Children {
			out = snippetTerms(c, out)
		}
	case *Or:
		return snippetTerms(*n, out)
	case Term:
		if n.Field == FieldAny || n.Field == FieldText {
			out = append(out, matcher{text: n.Text, prefix: n.Prefix})
		}
	case *Term:
		return snippetTerms(*n, out)
	case Phrase:
		if n.Field == FieldAny || n.Field == FieldText {
			for _, t := range n.Terms {
				out = append(out, matcher{text: t})
			}
		}
	case *Phrase:
		return snippetTerms(*n, out)
	}
	return out
}

type snippetHit struct {
	start, end int
	term       int
}

// Snippet cuts at most about SnippetChars characters of text around its
// best passage, the one with the most different query words, as
// fragments; "…" marks a cut, which never falls inside a character. When
// no word of the text matches, it is the start of the text.
func Snippet(text string, q Node) []Fragment {
	ms := snippetTerms(q, nil)
	scan := text
	if len(scan) > snippetScan {
		scan = scan[:snippetScan]
		for len(scan) > 0 && !utf8.RuneStart(scan[len(scan)-1]) {
			scan = scan[:len(scan)-1]
		}
	}
	var hits []snippetHit
	if len(ms) > 0 {
		Analyze(scan, func(t Token) {
			for i, m := range ms {
				if t.Term == m.text || m.prefix && (strings.HasPrefix(t.Term, m.text) || strings.HasPrefix(t.Word, m.text)) {
					hits = append(hits, snippetHit{start: t.Start, end: t.End, term: i})
					return
				}
			}
		})
	}
	if len(hits) == 0 {
		return cut(text, 0, nil)
	}
	// The best window starts at a hit and holds the most different words,
	// then the most hits.
	best, bestKinds, bestCount := 0, 0, 0
	budget := SnippetChars * 3 / 4 // bytes of hits a window may span, roughly
	for i := range hits {
		seen := map[int]bool{}
		count := 0
		for j := i; j < len(hits) && hits[j].end-hits[i].start <= budget; j++ {
			seen[hits[j].term] = true
			count++
		}
		if len(seen) > bestKinds || len(seen) == bestKinds && count > bestCount {
			best, bestKinds, bestCount = i, len(seen), count
		}
	}
	// Some context before the first hit, starting at a word.
	start := hits[best].start
	for back := 0; start > 0 && back < 40; back++ {
		_, n := utf8.DecodeLastRuneInString(text[:start])
		start -= n
	}
	if start > 0 {
		if sp := strings.IndexFunc(text[start:hits[best].start], unicode.IsSpace); sp >= 0 {
			start += sp + 1
		}
	}
	return cut(text, start, hits)
}

// cut returns about SnippetChars characters of text from start, ending at
// a word when one ends near the limit, with the hits inside marked.
func cut(text string, start int, hits []snippetHit) []Fragment {
	end := start
	for n := 0; end < len(text) && n < SnippetChars; n++ {
		_, k := utf8.DecodeRuneInString(text[end:])
		end += k
	}
	if end < len(text) {
		if sp := strings.LastIndexFunc(text[start:end], unicode.IsSpace); sp > (end-start)*3/4 {
			end = start + sp
		}
	}
	var out []Fragment
	plain := func(s string) {
		s = collapse(s)
		if s == "" {
			return
		}
		if n := len(out); n > 0 && !out[n-1].Match {
			out[n-1].Text += s
			return
		}
		out = append(out, Fragment{Text: s})
	}
	if start > 0 {
		plain(ellipsis)
	}
	at := start
	for _, h := range hits {
		if h.start < at || h.end > end {
			continue
		}
		plain(text[at:h.start])
		out = append(out, Fragment{Text: text[h.start:h.end], Match: true})
		at = h.end
	}
	plain(text[at:end])
	if end < len(text) {
		plain(ellipsis)
	}
	if out == nil {
		out = []Fragment{}
	}
	return out
}

// collapse turns each run of white space into one space.
func collapse(s string) string {
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) && r != ' ' }) && !strings.Contains(s, "  ") {
		return s
	}
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			if !space {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}
