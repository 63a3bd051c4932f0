package imap

import (
	"slices"
	"strings"
)

// Mailbox is one mailbox of a LIST answer.
type Mailbox struct {
	// Name is the mailbox name as the server spells it (modified UTF-7
	// for non-ASCII names), to be sent back as is; "INBOX" in any case is
	// normalised to "INBOX".
	Name string
	// Delim is the hierarchy delimiter, "" if the server has none.
	Delim string
	// Attrs are the name attributes (\Noselect, \HasNoChildren) and the
	// special-use attributes of RFC 6154 (\Junk, \Sent), as sent.
	Attrs []string
}

// Has reports whether m carries the attribute attr (case-insensitive,
// with its backslash: `\Junk`).
func (m Mailbox) Has(attr string) bool {
	return slices.ContainsFunc(m.Attrs, func(a string) bool { return strings.EqualFold(a, attr) })
}

// Use is the special use of m that in: names (docs/search.md): inbox,
// sent, drafts, archive, junk or trash, from its special-use attribute,
// else from its name as servers without those attributes spell it; ""
// for any other mailbox.
func (m Mailbox) Use() string {
	if m.Name == "INBOX" {
		return "inbox"
	}
	for attr, use := range map[string]string{`\Sent`: "sent", `\Drafts`: "drafts", `\Archive`: "archive", `\Junk`: "junk", `\Trash`: "trash"} {
		if m.Has(attr) {
			return use
		}
	}
	last := strings.ToLower(m.Name)
	if m.Delim != "" {
		if i := strings.LastIndex(last, strings.ToLower(m.Delim)); i >= 0 {
			last = last[i+len(m.Delim):]
		}
	}
	return usesByName[last]
}

// usesByName are the names servers without special-use attributes give
// the special mailboxes (the last level of the name, lower case).
var usesByName = map[string]string{
	"sent": "sent", "sent items": "sent", "sent messages": "sent", "sent mail": "sent",
	"drafts": "drafts", "draft": "drafts",
	"archive": "archive", "archives": "archive",
	"junk": "junk", "spam": "junk", "junk e-mail": "junk", "junk email": "junk",
	"trash": "trash", "deleted items": "trash", "deleted messages": "trash", "bin": "trash",
}

// skippedUses are the special-use attributes of mailboxes that are not
// synced: junk and deleted mail, and the virtual mailboxes that hold
// copies of mail kept in other mailboxes (Gmail's "All Mail", "Starred"
// and "Important"), which would index every message twice.
var skippedUses = []string{`\Junk`, `\Trash`, `\All`, `\Flagged`, `\Important`}

// specialUses are every special-use attribute (RFC 6154, RFC 8457).
var specialUses = []string{`\All`, `\Archive`, `\Drafts`, `\Flagged`, `\Junk`, `\Sent`, `\Trash`, `\Important`}

// skippedNames are the names, compared case-insensitively with the last
// level of a mailbox name or with the whole name, that servers without
// special-use attributes give to the same mailboxes.
var skippedNames = []string{
	"spam", "junk", "junk e-mail", "junk email", "bulk mail",
	"trash", "deleted items", "deleted messages", "bin",
	"[gmail]/all mail", "[gmail]/spam", "[gmail]/trash", "[gmail]/starred", "[gmail]/important",
	"[google mail]/all mail", "[google mail]/spam", "[google mail]/bin", "[google mail]/trash",
	"[google mail]/starred", "[google mail]/important",
}

// SyncedFolders returns the mailboxes of a LIST answer that a sync reads:
// every selectable mailbox except junk, trash and virtual ones, as their
// special-use attributes say; when no mailbox carries any, as their names
// say. INBOX is always included, first; the others keep the server's
// order. A name listed twice is returned once.
func SyncedFolders(list []Mailbox) []Mailbox {
	useAttrs := slices.ContainsFunc(list, func(m Mailbox) bool {
		return slices.ContainsFunc(specialUses, m.Has)
	})
	out := []Mailbox{{Name: "INBOX"}}
	seen := map[string]bool{"INBOX": true}
	for _, m := range list {
		if m.Name == "INBOX" {
			out[0] = m
			continue
		}
		if seen[m.Name] || m.Has(`\Noselect`) || m.Has(`\NonExistent`) {
			continue
		}
		if useAttrs && slices.ContainsFunc(skippedUses, m.Has) {
			continue
		}
		if !useAttrs && skippedName(m) {
			continue
		}
		seen[m.Name] = true
		out = append(out, m)
	}
	return out
}

// skippedName reports whether m's name is one of skippedNames.
func skippedName(m Mailbox) bool {
	name := strings.ToLower(m.Name)
	last := name
	if m.Delim != "" {
		if i := strings.LastIndex(name, strings.ToLower(m.Delim)); i >= 0 {
			last = name[i+len(m.Delim):]
		}
	}
	return slices.Contains(skippedNames, name) || slices.Contains(skippedNames, last)
}
