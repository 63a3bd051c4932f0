package feed

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

const rss2 = `<?xml version="1.0" encoding="UTF-8"?>
<rss version="2.0" xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:content="http://purl.org/rss/1.0/modules/content/" xmlns:atom="http://www.w3.org/2005/Atom">
<channel>
  <title>Example blog</title>
  <link>https://blog.example/</link>
  <atom:link href="https://blog.example/feed.xml" rel="self" type="application/rss+xml"/>
  <item>
    <title>Tom &amp;amp; Jerry</title>
    <link>https://blog.example/tom</link>
    <atom:link href="https://blog.example/ignored" rel="related"/>
    <guid isPermaLink="false">post-1</guid>
    <pubDate>Tue, 03 Jun 2025 09:39:21 +0200</pubDate>
    <dc:creator>Jane Doe</dc:creator>
    <description><![CDATA[<p>Hello&nbsp;<b>world</b> &amp; friends</p><script>alert(1)</script>]]></description>
  </item>
  <item>
    <title>No guid</title>
    <link>https://blog.example/no-guid</link>
    <pubDate>Wed, 4 Jun 2025 10:00:00 GMT</pubDate>
    <author>jane@example.com (Jane)</author>
    <content:encoded>&lt;p&gt;Only content, 1 &amp;lt; 2&lt;/p&gt;</content:encoded>
  </item>
  <item>
    <description>A note without title, link or guid</description>
  </item>
  <item>
    <guid>post-4</guid>
    <description>A teaser.</description>
    <content:encoded><![CDATA[<p>The <b>whole</b> post, with its teaser.</p>]]></content:encoded>
  </item>
  <item></item>
</channel>
</rss>`

const atom = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example Feed</title>
  <author><name>Feed Author</name></author>
  <entry>
    <title type="html">Fish &amp;amp; &lt;b&gt;Chips&lt;/b&gt;</title>
    <link rel="self" href="https://atom.example/self"/>
    <link href="https://atom.example/2003/12/13/atom03"/>
    <id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id>
    <updated>2003-12-13T18:30:02Z</updated>
    <published>2003-12-13T08:29:29-04:00</published>
    <summary type="text">1 &lt; 2, literally &lt;b&gt;</summary>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>Ignored</p></div></content>
  </entry>
  <entry>
    <title>Second</title>
    <link rel="alternate" href="https://atom.example/second"/>
    <id>tag:atom.example,2024:2</id>
    <updated>2024-01-02T03:04:05.123Z</updated>
    <author><name>Entry Author</name><email>e@example.com</email></author>
    <content type="xhtml"><div xmlns="http://www.w3.org/1999/xhtml"><p>First</p><p>second <em>para</em></p></div></content>
  </entry>
</feed>`

const rdf = `<?xml version="1.0"?>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
  <channel rdf:about="https://rdf.example/"><title>RDF</title></channel>
  <item rdf:about="https://rdf.example/1">
    <title>RDF item</title>
    <link>https://rdf.example/1</link>
    <dc:date>2024-05-06T07:08:09+00:00</dc:date>
    <dc:creator>R. D. F.</dc:creator>
  </item>
</rdf:RDF>`

func TestParseRSS(t *testing.T) {
	got, err := Parse(strings.NewReader(rss2))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{ID: "post-1", Title: "Tom & Jerry", Link: "https://blog.example/tom", Author: "Jane Doe",
			Published: time.Date(2025, 6, 3, 7, 39, 21, 0, time.UTC), Summary: "Hello world & friends"},
		{ID: "https://blog.example/no-guid", Title: "No guid", Link: "https://blog.example/no-guid", Author: "jane@example.com (Jane)",
			Published: time.Date(2025, 6, 4, 10, 0, 0, 0, time.UTC), Content: "Only content, 1 < 2"},
		{Title: "", Summary: "A note without title, link or guid"},
		{ID: "post-4", Summary: "A teaser.", Content: "The whole post, with its teaser."},
	}
	assertEntries(t, got, want)
	if id := got[2].ID; !strings.HasPrefix(id, "sha256:") {
		t.Errorf("entry without guid or link: got ID %q, want a sha256: hash", id)
	}
	again, _ := Parse(strings.NewReader(rss2))
	if again[2].ID != got[2].ID {
		t.Error("hash ID differs between two parses of the same feed")
	}
}

func TestParseAtom(t *testing.T) {
	got, err := Parse(strings.NewReader(atom))
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{
		{ID: "urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a", Title: "Fish & Chips", Link: "https://atom.example/2003/12/13/atom03",
			Author: "Feed Author", Published: time.Date(2003, 12, 13, 12, 29, 29, 0, time.UTC), Summary: "1 < 2, literally <b>", Content: "Ignored"},
		{ID: "tag:atom.example,2024:2", Title: "Second", Link: "https://atom.example/second", Author: "Entry Author",
			Published: time.Date(2024, 1, 2, 3, 4, 5, 123e6, time.UTC), Content: "First second para"},
	}
	assertEntries(t, got, want)
}

func TestParseRDF(t *testing.T) {
	got, err := Parse(strings.NewReader(rdf))
	if err != nil {
		t.Fatal(err)
	}
	assertEntries(t, got, []Entry{{ID: "https://rdf.example/1", Title: "RDF item", Link: "https://rdf.example/1",
		Author: "R. D. F.", Published: time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)}})
}

func TestParseEncodings(t *testing.T) {
	latin1 := "<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><rss><channel><item><title>Caf\xe9 \x80 \x93</title><guid>1</guid></item></channel></rss>"
	bom := "\xef\xbb\xbf<rss><channel><item><title>BOM</title><guid>1</guid></item></channel></rss>"
	tests := []struct{ name, doc, title string }{
		{"latin-1 read as windows-1252", latin1, "Café € “"},
		{"UTF-8 byte order mark", bom, "BOM"},
	}
	for _, tt := range tests {
		got, err := Parse(strings.NewReader(tt.doc))
		if err != nil || len(got) != 1 || got[0].Title != tt.title {
			t.Errorf("%s: got %+v, %v; want title %q", tt.name, got, err, tt.title)
		}
	}
	_, err := Parse(strings.NewReader(`<?xml version="1.0" encoding="Shift_JIS"?><rss/>`))
	if !errors.Is(err, ErrNotFeed) || !strings.Contains(err.Error(), "unsupported encoding") {
		t.Errorf("Shift_JIS: got %v, want ErrNotFeed naming the encoding", err)
	}
}

func TestParseRefusesNonFeeds(t *testing.T) {
	docs := map[string]string{
		"empty":           "",
		"html page":       "<!DOCTYPE html><html><head><title>x</title></head><body></body></html>",
		"json":            `{"items": []}`,
		"other xml":       `<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"/>`,
		"truncated":       `<rss><channel><item><title>cut`,
		"unclosed root":   `<rss><channel></channel>`,
		"bad entity":      `<rss><channel><item><title>&bogus;</title></item></channel></rss>`,
		"invalid utf-8":   "<rss><channel><item><title>\xff</title></item></channel></rss>",
		"atom look-alike": `<feed xmlns="urn:something-else"/>`,
	}
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			if got, err := Parse(strings.NewReader(doc)); !errors.Is(err, ErrNotFeed) {
				t.Errorf("got %v, %v; want ErrNotFeed", got, err)
			}
		})
	}
	if got, err := Parse(strings.NewReader(`<rss version="2.0"><channel><title>empty</title></channel></rss>`)); err != nil || len(got) != 0 {
		t.Errorf("feed without items: got %v, %v; want no entries and no error", got, err)
	}
}

func assertEntries(t *testing.T, got, want []Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if w.ID == "" {
			w.ID = g.ID // checked by the caller
		}
		if g.ID != w.ID || g.Title != w.Title || g.Link != w.Link || g.Author != w.Author || g.Summary != w.Summary || g.Content != w.Content || !g.Published.Equal(w.Published) {
			t.Errorf("entry %d:\n got %+v\nwant %+v", i, g, w)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{rss2, atom, rdf, "", "<rss/>", "<feed xmlns=\"http://www.w3.org/2005/Atom\"><entry><author><name>x</name></author></entry></feed>"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		entries, err := Parse(strings.NewReader(string(doc)))
		if err != nil {
			if entries != nil {
				t.Fatal("entries returned with an error")
			}
			return
		}
		for _, e := range entries {
			if e.ID == "" {
				t.Fatalf("entry without ID: %+v", e)
			}
			for _, s := range []string{e.ID, e.Title, e.Link, e.Author, e.Summary, e.Content} {
				if !utf8.ValidString(s) {
					t.Fatalf("invalid UTF-8 in %+v", e)
				}
			}
		}
	})
}
