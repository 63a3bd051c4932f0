package search

import (
	"slices"
	"testing"
)

// TestRefTerms: a document's links are found by their RefTerm, from the
// buffer, a segment, a merge and after a reopen; its thread comes back in
// its stored fields; no typed query, prefix, fuzzy word or "did you mean"
// reaches a link, and the links weigh nothing in the title's ranking.
func TestRefTerms(t *testing.T) {
	dir := t.TempDir()
	ix := openTest(t, dir, mergeBy2)
	docs := handDocs()
	docs[0].Thread, docs[0].Refs = "qx7k", []string{"qx7k", "m1"}
	docs[1].Thread, docs[1].Refs = "qx7k", []string{"m2", "m1", "qx7k"}
	docs[4].Refs = []string{"m9"}
	check := func(when string) {
		t.Helper()
		for ref, want := range map[string][]string{"qx7k": {"d1", "d2"}, "m1": {"d1", "d2"}, "m2": {"d2"}, "m9": {"d5"}, "m3": nil} {
			res := search(t, ix, userA, Request{Query: Term{Field: FieldTitle, Text: RefTerm(ref)}, Limit: 10, Sort: SortDate})
			var got []string
			for _, h := range res.Hits {
				got = append(got, h.ID)
				if th := map[string]string{"d1": "qx7k", "d2": "qx7k"}[h.ID]; h.Stored.Thread != th {
					t.Errorf("%s: %s: stored thread %q, want %q", when, h.ID, h.Stored.Thread, th)
				}
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%s: RefTerm(%s) finds %v, want %v", when, ref, got, want)
			}
		}
		for _, q := range []string{"qx7k", "m1", "qx*", "qx7k~", "subject:qx7k"} {
			n, err := Parse(q)
			if err != nil {
				t.Fatal(err)
			}
			if res := search(t, ix, userA, Request{Query: n}); len(res.Hits) != 0 {
				t.Errorf("%s: the query %q finds %d documents through their links", when, q, len(res.Hits))
			}
		}
		if s, err := ix.Suggest(userA, "qx7k"); err != nil || s != "" {
			t.Errorf("%s: did you mean for th1: %q %v", when, s, err)
		}
	}
	if err := ix.Add(userA, docs[:3]...); err != nil {
		t.Fatal(err)
	}
	if err := ix.Add(userA, docs[3:]...); err != nil {
		t.Fatal(err)
	}
	check("buffer")
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	check("segment")
	waitMerged(t, ix)
	check("merged")
	ix.Close()
	ix = openTest(t, dir, mergeBy2)
	check("reopened")

	// The title's ranking is the same with links and without.
	plain := openTest(t, t.TempDir())
	if err := plain.Add(userA, handDocs()...); err != nil {
		t.Fatal(err)
	}
	q, _ := Parse("subject:report")
	a, b := search(t, ix, userA, Request{Query: q}), search(t, plain, userA, Request{Query: q})
	if len(a.Hits) != 1 || len(b.Hits) != 1 || a.Hits[0].Score != b.Hits[0].Score {
		t.Errorf("subject:report with links %+v, without %+v", a.Hits, b.Hits)
	}
}

// TestFileNameAndAttachment: filename: finds a document by the words and
// the extension of an attachment's or a file's name, has:attachment the
// documents with attachments; a plain word does not reach a name's term;
// has: knows one value.
func TestFileNameAndAttachment(t *testing.T) {
	ix := openTest(t, t.TempDir())
	docs := handDocs()
	docs[0].Names, docs[0].Attached = []string{"Q3 zorbix.pdf", "minutes.docx"}, true
	docs[3].Names = []string{"budget q3 xlsx"}
	if err := ix.Add(userA, docs...); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{
		`filename:zorbix`:             {"d1"},
		`filename:pdf`:                {"d1"},
		`filename:"q3 zorbix.pdf"`:    {"d1"},
		`filename:q3`:                 {"d1", "d4"},
		`filename:minutes.docx`:       {"d1"},
		`has:attachment`:              {"d1"},
		`has:attachment quarterly`:    {"d1"},
		`-has:attachment filename:q3`: {"d4"},
		`zorbix`:                      nil,
		`filename:lunch`:              nil,
	} {
		n, err := Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, h := range search(t, ix, userA, Request{Query: n, Limit: 10}).Hits {
			got = append(got, h.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	for q, msg := range map[string]string{
		"has:pictures": `unknown value "pictures" in has: (attachment) at 0`,
		"filename:--":  `filename: needs a word of a name at 0`,
	} {
		if _, err := Parse(q); err == nil || err.Error() != msg {
			t.Errorf("%s: %v, want %s", q, err, msg)
		}
	}
}

// TestInFolder: in: finds the items of a mailbox by its name or its
// special use, and of a folder by its name or its path; a folder the
// person named like a use is not the server's mailbox of that use.
func TestInFolder(t *testing.T) {
	ix := openTest(t, t.TempDir())
	docs := handDocs()
	docs[0].Folders = []string{"inbox", UseValue("inbox")}
	docs[1].Folders = []string{"sent items", UseValue("sent")}
	docs[2].Folders = []string{"sent"} // a folder someone called sent
	docs[3].Folders = []string{"projects", "projects", "2026", "projects/2026"}
	if err := ix.Add(userA, docs...); err != nil {
		t.Fatal(err)
	}
	for q, want := range map[string][]string{
		`in:inbox`:          {"d1"},
		`in:INBOX`:          {"d1"},
		`in:sent`:           {"d2", "d3"},
		`in:"Sent Items"`:   {"d2"},
		`in:projects`:       {"d4"},
		`in:projects/2026`:  {"d4"},
		`in:2026`:           {"d4"},
		`in:drafts`:         nil,
		`-in:inbox in:sent`: {"d2", "d3"},
	} {
		n, err := Parse(q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		var got []string
		for _, h := range search(t, ix, userA, Request{Query: n, Limit: 10}).Hits {
			got = append(got, h.ID)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %v, want %v", q, got, want)
		}
	}
	if _, err := Parse(`in:""`); err == nil || err.Error() != `in: needs a folder's name at 0` {
		t.Errorf(`in:"": %v`, err)
	}
}
