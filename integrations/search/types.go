// Package search is the sealed full-text index over a user's synced items:
// analysis (text to terms), immutable segments sealed in blocks, merges,
// the query language, execution, BM25 ranking and snippets.
//
// The files follow the pipeline: analyze.go and stem.go turn text into
// terms; query.go parses the query language into a tree of the nodes
// below; segment.go writes and reads one immutable segment; merge.go
// merges them; exec.go runs a tree over postings; rank.go scores;
// snippet.go cuts fragments around the best passage.
package search

import "time"

// Field is the part of an item a term was found in.
type Field uint8

// The indexed fields. Title is an email's subject, a file's name, an
// entry's title; From is the sender (name and address); To the
// recipients (to and cc); Text the extracted body.
const (
	FieldTitle Field = iota
	FieldFrom
	FieldTo
	FieldText
	numFields
	// FieldAny in a query node means every field.
	FieldAny Field = 255
)

// Token is one term of an analyzed text.
type Token struct {
	Term  string // folded and stemmed: what the index stores
	Word  string // folded, not stemmed: what prefix queries also match
	Pos   int    // position within the field: phrases need adjacent positions
	Start int    // byte offset of the token in the analyzed text
	End   int    // byte offset just past it
}

// Node is a node of a parsed query.
type Node interface{ node() }

// And matches items matched by every child.
type And struct{ Children []Node }

// Or matches items matched by any child.
type Or struct {
	Children []Node
	// langs marks the Or expandLangs makes of one word: its terms in
	// the user's languages, which proximity counts as one word.
	langs bool
}

// Not matches items the child does not match; it appears as a child of
// And (a query of only exclusions matches everything else).
type Not struct{ Child Node }

// Term matches an analyzed term in a field (FieldAny: any field). With
// Prefix, every term or word starting with Text matches; with Fuzzy above
// zero, every term or word within Fuzzy edits of Text (a word as typed,
// unstemmed) that starts with its first letter.
//
// Word, when set, is the word as written in the query: a search also
// looks it up under its stem in each language of the user's items
// (lang.go). Without it, Text alone is looked up.
type Term struct {
	Field  Field
	Text   string
	Prefix bool
	Fuzzy  int
	Word   string
}

// Phrase matches the terms at consecutive positions of one field. Words,
// when set, are the words as written, one per term, as Term's Word.
type Phrase struct {
	Field Field
	Terms []string
	Words []string
}

// Kind matches items of one kind: email, message, file, entry.
type Kind struct{ Kind string }

// Integration matches items of one integration domain (gmail, slack…).
type Integration struct{ Integration string }

// DateRange matches items dated in [After, Before); a zero bound is open.
type DateRange struct{ After, Before time.Time }

func (And) node()         {}
func (Or) node()          {}
func (Not) node()         {}
func (Term) node()        {}
func (Phrase) node()      {}
func (Kind) node()        {}
func (Integration) node() {}
func (DateRange) node()   {}

// Doc is what the index learns of one item.
type Doc struct {
	ID          string // the item's id (a UUID)
	RecordID    string // the user-integration record that synced it
	Integration string // gmail, imap, slack, dropbox, feed
	Kind        string // email, message, file, entry
	Title       string
	From        string   // "Name <address>" or a name
	To          []string // recipients, to and cc
	Text        string
	Date        time.Time
	// Thread names the item's conversation (integrations.Item.Thread),
	// kept with its stored fields for collapse=thread; Refs are the ids
	// that link it to the others (integrations.Item.Refs), indexed as
	// RefTerms so that a conversation's items are found by them.
	Thread string
	Refs   []string
	// Names are the names of the item's attachments, or of the file it
	// is, whose words filename: finds; Attached says the item has
	// attachments (has:attachment).
	Names    []string
	Attached bool
	// Folders are what in: finds the item by: its mailbox's or its
	// folders' names, lower case, and UseValue of a special use.
	Folders []string
}
