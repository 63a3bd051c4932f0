package feed

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Entry is one item of a feed.
type Entry struct {
	// ID identifies the entry within its feed: the RSS guid or Atom id,
	// else the link, else a hash of title, date and summary.
	ID        string
	Title     string
	Link      string
	Published time.Time // zero when the feed gives no readable date
	Author    string
	Summary   string // plain text: markup removed, entities decoded
	// Content is the entry's full content (Atom content, RSS
	// content:encoded), as plain text like Summary; empty when the feed
	// gives only a summary.
	Content string
}

// ErrNotFeed is returned by Parse for a document that is not an RSS (0.9x,
// 1.0 or 2.0) or Atom feed, or is not well-formed XML.
var ErrNotFeed = errors.New("not an RSS or Atom feed")

// XML namespaces the parser recognises.
const (
	nsAtom    = "http://www.w3.org/2005/Atom"
	nsAtom03  = "http://purl.org/atom/ns#"
	nsRSS1    = "http://purl.org/rss/1.0/"
	nsRSS09   = "http://my.netscape.com/rdf/simple/0.9/"
	nsDC      = "http://purl.org/dc/elements/1.1/"
	nsContent = "http://purl.org/rss/1.0/modules/content/"
)

// Parse reads an RSS or Atom feed and returns its entries in document
// order. It reads r to the end; callers bound what r can deliver. The
// document may be UTF-8, US-ASCII, ISO-8859-1 or Windows-1252.
func Parse(r io.Reader) ([]Entry, error) {
	f, err := parseFeed(r)
	return f.Entries, err
}

// Feed is a parsed feed: its own title (the RSS channel's, the Atom
// feed's, as plain text; empty when it has none) and its entries.
type Feed struct {
	Title   string
	Entries []Entry
}

// parseFeed is Parse with the feed's title.
func parseFeed(r io.Reader) (Feed, error) {
	dec := xml.NewDecoder(r)
	dec.Entity = xml.HTMLEntity // &nbsp; and friends, common in feeds
	dec.CharsetReader = charsetReader
	root, err := firstElement(dec)
	if err != nil {
		return Feed{}, err
	}
	var atom bool
	switch {
	case root.Name.Local == "rss" || (root.Name.Local == "RDF" && root.Name.Space != nsAtom):
	case root.Name.Local == "feed" && (root.Name.Space == nsAtom || root.Name.Space == nsAtom03 || root.Name.Space == ""):
		atom = true
	default:
		return Feed{}, fmt.Errorf("%w: root element is <%s>", ErrNotFeed, root.Name.Local)
	}
	p := &parser{dec: dec, atom: atom}
	if err := p.walk(); err != nil {
		return Feed{}, err
	}
	title := p.title
	if !atom || p.titleHTML {
		title = htmlText(title) // RSS titles are (escaped) HTML by custom
	}
	return Feed{Title: title, Entries: p.entries}, nil
}

// firstElement returns the document's root element.
func firstElement(dec *xml.Decoder) (xml.StartElement, error) {
	for {
		tok, err := dec.Token()
		if err != nil {
			return xml.StartElement{}, notFeed(err)
		}
		if se, ok := tok.(xml.StartElement); ok {
			return se, nil
		}
	}
}

// notFeed wraps a decoding error; the end of the input is the end of a
// truncated document.
func notFeed(err error) error {
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", ErrNotFeed, err)
}

type parser struct {
	dec        *xml.Decoder
	atom       bool
	feedAuthor string // Atom: the feed's author, for entries without one
	entries    []Entry
	// title is the feed's own: the first title outside an item or entry
	// (the channel's comes before its image's); titleHTML says an Atom
	// title is of type html.
	title     string
	titleHTML bool
}

// walk reads the rest of the document, parsing each item or entry.
func (p *parser) walk() error {
	for {
		tok, err := p.dec.Token()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return notFeed(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch {
		case p.atom && se.Name.Local == "entry":
			e, err := p.item(se)
			if err != nil {
				return err
			}
			p.add(e)
		case se.Name.Local == "title" && p.title == "" && (p.atom || rssSpace(se.Name.Space)):
			typ := attr(se, "type")
			if p.title, err = p.text(se); err != nil {
				return err
			}
			p.titleHTML = typ == "html" || typ == "text/html"
		case p.atom && se.Name.Local == "author":
			if p.feedAuthor, err = p.author(se); err != nil {
				return err
			}
		case !p.atom && se.Name.Local == "item" && rssSpace(se.Name.Space):
			e, err := p.item(se)
			if err != nil {
				return err
			}
			p.add(e)
		}
	}
}

// rssSpace reports whether ns is one an RSS element can be in.
func rssSpace(ns string) bool { return ns == "" || ns == nsRSS1 || ns == nsRSS09 }

// fields are an item's raw values, before choosing among them.
type fields struct {
	title, link, guid, id, author, summary, content string
	pubDate, dcDate, published, updated             string
	atomLinks                                       []atomLink
}

type atomLink struct{ href, rel string }

// item reads one RSS item or Atom entry, up to its end tag.
func (p *parser) item(start xml.StartElement) (Entry, error) {
	var f fields
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return Entry{}, notFeed(err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return p.entry(f), nil
		case xml.StartElement:
			if err := p.field(&f, t); err != nil {
				return Entry{}, err
			}
		}
	}
}

// field reads one child element of an item into f.
func (p *parser) field(f *fields, se xml.StartElement) error {
	n := se.Name
	if n.Local == "link" && (p.atom || n.Space == nsAtom) {
		l := atomLink{href: attr(se, "href"), rel: attr(se, "rel")}
		if p.atom {
			f.atomLinks = append(f.atomLinks, l)
		}
		return p.dec.Skip()
	}
	if p.atom && n.Local == "author" {
		var err error
		f.author, err = p.author(se)
		return err
	}
	text, err := p.text(se)
	if err != nil {
		return err
	}
	if typ := attr(se, "type"); p.atom && (typ == "html" || typ == "text/html") {
		text = htmlText(text)
	}
	var dst *string
	switch {
	case n.Space == nsDC:
		dst = map[string]*string{"creator": &f.author, "date": &f.dcDate}[n.Local]
	case n.Space == nsContent && n.Local == "encoded":
		dst = &f.content
	case p.atom:
		dst = map[string]*string{"title": &f.title, "id": &f.id, "summary": &f.summary, "content": &f.content,
			"published": &f.published, "issued": &f.published, "updated": &f.updated, "modified": &f.updated}[n.Local]
	case rssSpace(n.Space):
		dst = map[string]*string{"title": &f.title, "link": &f.link, "guid": &f.guid, "author": &f.author,
			"description": &f.summary, "pubDate": &f.pubDate}[n.Local]
	}
	if dst != nil && *dst == "" {
		*dst = text
	}
	return nil
}

// author reads an Atom author (or contributor) element: its name, else its
// email.
func (p *parser) author(start xml.StartElement) (string, error) {
	var name, email string
	for {
		tok, err := p.dec.Token()
		if err != nil {
			return "", notFeed(err)
		}
		switch t := tok.(type) {
		case xml.EndElement:
			if name == "" {
				name = email
			}
			return name, nil
		case xml.StartElement:
			text, err := p.text(t)
			if err != nil {
				return "", err
			}
			switch t.Name.Local {
			case "name":
				name = text
			case "email":
				email = text
			}
		}
	}
}

// text returns the character data inside se and its descendants, with
// whitespace collapsed, and consumes se's end tag. Descendant tags (Atom's
// xhtml content) separate words.
func (p *parser) text(se xml.StartElement) (string, error) {
	var b strings.Builder
	for depth := 1; depth > 0; {
		tok, err := p.dec.Token()
		if err != nil {
			return "", notFeed(err)
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.StartElement:
			depth++
			b.WriteByte(' ')
		case xml.EndElement:
			depth--
			b.WriteByte(' ')
		}
	}
	return strings.Join(strings.Fields(b.String()), " "), nil
}

// entry chooses an entry's values among the fields an item had.
func (p *parser) entry(f fields) Entry {
	e := Entry{Title: f.title, Link: f.link, Author: f.author, Summary: f.summary, Content: f.content}
	if p.atom {
		// Atom text constructs say their type; html ones were turned
		// into text as they were read.
		e.Link = atomHref(f.atomLinks)
		if e.Author == "" {
			e.Author = p.feedAuthor
		}
	} else {
		// RSS titles and descriptions are (escaped) HTML by custom.
		e.Title = htmlText(e.Title)
		e.Summary = htmlText(e.Summary)
		e.Content = htmlText(e.Content)
	}
	e.Published = parseDate(first(f.pubDate, f.published, f.dcDate, f.updated))
	e.ID = first(f.guid, f.id, e.Link)
	if text := first(e.Summary, e.Content); e.ID == "" && (e.Title != "" || text != "") {
		sum := sha256.Sum256([]byte(e.Title + "\x00" + e.Published.String() + "\x00" + text))
		e.ID = "sha256:" + hex.EncodeToString(sum[:16])
	}
	return e
}

// add keeps e if it holds anything at all.
func (p *parser) add(e Entry) {
	if e.ID != "" {
		p.entries = append(p.entries, e)
	}
}

// atomHref picks an entry's alternate link, else its first link.
func atomHref(links []atomLink) string {
	for _, l := range links {
		if (l.rel == "" || l.rel == "alternate") && l.href != "" {
			return l.href
		}
	}
	for _, l := range links {
		if l.href != "" {
			return l.href
		}
	}
	return ""
}

func attr(se xml.StartElement, name string) string {
	for _, a := range se.Attr {
		if a.Name.Local == name && a.Name.Space == "" {
			return a.Value
		}
	}
	return ""
}

func first(values ...string) string {
	for _, v := range values {
		if v != "" {
			return v
		}
	}
	return ""
}
