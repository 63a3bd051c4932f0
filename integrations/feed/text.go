package feed

import (
	"html"
	"strings"
	"time"
	"unicode/utf8"
)

// dateLayouts are the date forms met in feeds: RFC 822/1123 with their
// common deviations (RSS), and RFC 3339 (Atom, Dublin Core).
var dateLayouts = []string{
	time.RFC1123Z, time.RFC1123, time.RFC822Z, time.RFC822,
	"Mon, 2 Jan 2006 15:04:05 -0700", "Mon, 2 Jan 2006 15:04:05 MST",
	"Mon, 2 Jan 2006 15:04 -0700", "Mon, 02 Jan 2006 15:04 -0700",
	"2 Jan 2006 15:04:05 -0700", "02 Jan 2006 15:04:05 -0700", "2 Jan 2006 15:04:05 MST",
	"Monday, 02 Jan 2006 15:04:05 -0700", "Mon, 2 January 2006 15:04:05 -0700",
	time.RFC3339Nano, time.RFC3339, "2006-01-02T15:04:05", "2006-01-02T15:04Z07:00", "2006-01-02 15:04:05", "2006-01-02",
}

// parseDate reads a feed date; an unreadable one gives the zero time.
func parseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return time.Time{}
	}
	for _, layout := range dateLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC()
		}
	}
	return time.Time{}
}

// htmlText turns an HTML fragment into plain text: tags, comments and the
// content of script and style elements removed, entities decoded,
// whitespace collapsed. A '<' that does not start a tag is kept.
func htmlText(s string) string {
	if !strings.ContainsAny(s, "<&") {
		return s
	}
	var b strings.Builder
	for len(s) > 0 {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		s = s[i:]
		if len(s) < 2 || !startsTag(s[1]) {
			b.WriteByte('<')
			s = s[1:]
			continue
		}
		if strings.HasPrefix(s, "<!--") {
			end := strings.Index(s, "-->")
			if end < 0 {
				break
			}
			s = s[end+3:]
			continue
		}
		end := strings.IndexByte(s, '>')
		if end < 0 {
			break
		}
		tag := strings.ToLower(s[1:end])
		s = s[end+1:]
		b.WriteByte(' ')
		for _, skip := range []string{"script", "style"} {
			if strings.HasPrefix(tag, skip) && (len(tag) == len(skip) || tag[len(skip)] == ' ') {
				if stop := strings.Index(strings.ToLower(s), "</"+skip); stop >= 0 {
					s = s[stop:]
				} else {
					s = ""
				}
			}
		}
	}
	text := html.UnescapeString(b.String())
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	return strings.Join(strings.Fields(text), " ")
}

// startsTag reports whether c, after '<', begins a tag, an end tag, a
// comment or a declaration.
func startsTag(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}
