package search

import (
	"reflect"
	"strings"
	"testing"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// analyzeDocDoc is a mail-sized document: a subject, a sender, two
// recipients and a body of a few hundred words, many of them repeated.
func analyzeDocDoc() Doc {
	body := strings.Repeat("The quarterly reports were running late; Running reports again, "+
		"naïve café owners reviewed 42 invoices and the reviewers' notes. ", 20)
	return Doc{ID: "d1", Title: "Re: quarterly reports running late", From: "Alice Example <alice@example.org>",
		To: []string{"Bob <bob@example.org>", "carol@example.org"}, Text: body}
}

// TestAnalyzeDocAllocations: beside what the analyzer allocates itself,
// analysing a document allocates a bounded number of times, not once or
// more per term and field as its positions grow (448 times in all, of
// them 103 the analyzer's, for this document before).
func TestAnalyzeDocAllocations(t *testing.T) {
	d := analyzeDocDoc()
	a := analyzeDoc(d)
	if len(a.terms) < 20 || a.lens[FieldText] < 300 {
		t.Fatalf("the document has %d terms, %d words of text; want a mail-sized one", len(a.terms), a.lens[FieldText])
	}
	analyzer := testing.AllocsPerRun(20, func() {
		for _, s := range append([]string{d.Title, d.From, d.Text}, d.To...) {
			Analyze(s, func(Token) {})
		}
	})
	allocs := testing.AllocsPerRun(20, func() { analyzeDoc(d) })
	if allocs-analyzer > 60 {
		t.Errorf("analyzeDoc allocates %.0f times for %d terms, %.0f of them the analyzer's; want at most 60 more than it",
			allocs, len(a.terms), analyzer)
	}
}

// TestAnalyzeDocPositions: every term keeps its frequency and its
// positions of each field in the order they occur, unstemmed words their
// frequency and no position, on the corpus's mails.
func TestAnalyzeDocPositions(t *testing.T) {
	docs := []Doc{analyzeDocDoc(), {ID: "empty"}}
	for i, raw := range mailtest.Corpus(t) {
		if i == 300 {
			break
		}
		m, err := mail.Parse(raw)
		if err != nil {
			continue
		}
		docs = append(docs, Doc{ID: "m", Title: m.Subject, From: m.From, To: m.To, Text: m.Text})
	}
	for _, d := range docs {
		got, want := analyzeDoc(d), analyzeDocSlow(d)
		if got.lens != want.lens || len(got.terms) != len(want.terms) {
			t.Fatalf("doc %q: lens %v and %d terms, want %v and %d", d.Title, got.lens, len(got.terms), want.lens, len(want.terms))
		}
		for i := range got.terms {
			g, w := got.terms[i], want.terms[i]
			for f := range numFields {
				if len(g.pos[f]) == 0 && len(w.pos[f]) == 0 {
					g.pos[f], w.pos[f] = nil, nil
				}
			}
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("doc %q, term %d: got %+v, want %+v", d.Title, i, g, w)
			}
		}
	}
}

// analyzeDocSlow is analyzeDoc written plainly: a slice of positions per
// term and field, appended to token by token.
func analyzeDocSlow(d Doc) *analyzed {
	a := &analyzed{doc: d}
	at := map[string]int{}
	emit := func(f Field, p uint32, t Token) {
		a.lens[f]++
		i, ok := at[t.Term]
		if !ok {
			i = len(a.terms)
			at[t.Term] = i
			a.terms = append(a.terms, docTerm{term: t.Term})
		}
		dt := &a.terms[i]
		dt.tf[f]++
		dt.pos[f] = append(dt.pos[f], p)
		if t.Word != t.Term && t.Word != "" {
			w := wordMark + t.Word
			j, ok := at[w]
			if !ok {
				j = len(a.terms)
				at[w] = j
				a.terms = append(a.terms, docTerm{term: w})
			}
			a.terms[j].tf[f]++
		}
	}
	field := func(f Field) func(Token) {
		return func(t Token) { emit(f, uint32(t.Pos), t) }
	}
	Analyze(d.Title, field(FieldTitle))
	Analyze(d.From, field(FieldFrom))
	next := uint32(0)
	for _, to := range d.To {
		base := next
		Analyze(to, func(t Token) {
			p := base + uint32(t.Pos)
			emit(FieldTo, p, t)
			next = p + 2
		})
	}
	Analyze(d.Text, field(FieldText))
	return a
}
