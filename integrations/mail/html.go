package mail

import (
	"html"
	"strings"
)

// Elements whose content is not text (skipped), that break lines, and that
// sit inside a word ("<b>W</b>ord" reads "Word"). Any other tag separates
// words.
var (
	skipElements  = map[string]bool{"script": true, "style": true, "title": true, "template": true}
	blockElements = map[string]bool{
		"address": true, "article": true, "aside": true, "blockquote": true, "br": true, "dd": true,
		"div": true, "dl": true, "dt": true, "footer": true, "h1": true, "h2": true, "h3": true,
		"h4": true, "h5": true, "h6": true, "header": true, "hr": true, "li": true, "ol": true,
		"p": true, "pre": true, "section": true, "table": true, "tr": true, "ul": true,
	}
	inlineElements = map[string]bool{
		"a": true, "abbr": true, "b": true, "bdi": true, "bdo": true, "big": true, "cite": true,
		"code": true, "em": true, "font": true, "i": true, "kbd": true, "mark": true, "q": true,
		"s": true, "samp": true, "small": true, "span": true, "strike": true, "strong": true,
		"sub": true, "sup": true, "tt": true, "u": true, "var": true, "wbr": true,
	}
)

// htmlText turns an HTML document into plain text: comments, tags and the
// content of script, style and title elements removed, entities decoded,
// white space collapsed to single spaces within lines and block elements
// turned into line breaks. A '<' that does not start a tag is kept. It
// runs in time linear in len(s), whatever the input.
func htmlText(s string) string {
	text, _ := htmlTextRead(s)
	return text
}

// htmlTextRead is htmlText that also counts the bytes its scans read, all
// told: the work that must stay linear in len(s), which TestHTMLLinear
// checks by this count rather than by a clock.
func htmlTextRead(s string) (text string, read int) {
	lower := asciiLower(s) // same offsets as s
	var b strings.Builder
	b.Grow(len(s) / 2)
	var noQuote [2]bool // no closing ' or " after some earlier point
	for i := 0; i < len(s); {
		lt := strings.IndexByte(s[i:], '<')
		read += scanned(lt, len(s)-i, 1)
		if lt < 0 {
			b.WriteString(s[i:])
			break
		}
		b.WriteString(s[i : i+lt])
		i += lt
		if i+1 >= len(s) || !startsTag(s[i+1]) {
			b.WriteByte('<')
			i++
			continue
		}
		if strings.HasPrefix(s[i:], "<!--") {
			end := strings.Index(s[i+4:], "-->")
			read += scanned(end, len(s)-i-4, 3)
			if end < 0 {
				break
			}
			i += 4 + end + 3
			continue
		}
		end := tagEnd(s, i+1, &noQuote, &read)
		if end < 0 {
			break
		}
		closing := s[i+1] == '/'
		name := tagName(lower[i+1 : end])
		i = end + 1
		switch {
		case skipElements[name] && !closing:
			stop := strings.Index(lower[i:], "</"+name)
			read += scanned(stop, len(s)-i, 2+len(name))
			if stop < 0 {
				i = len(s)
			} else {
				i += stop // its end tag is read next, as a tag
			}
			b.WriteByte(' ')
		case blockElements[name]:
			b.WriteByte('\n')
		case inlineElements[name]:
		default:
			b.WriteByte(' ')
		}
	}
	return tidyLines(html.UnescapeString(b.String())), read
}

// scanned is what a search of n bytes read that found its needle of
// length w at k, or did not (k < 0).
func scanned(k, n, w int) int {
	if k < 0 {
		return n
	}
	return k + w
}

// startsTag reports whether c, after '<', begins a tag, an end tag, a
// comment or a declaration.
func startsTag(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '/' || c == '!' || c == '?'
}

// tagEnd returns the index of the '>' that ends the tag starting before
// s[i], or -1. A '>' inside a quoted attribute value does not end it.
// noQuote remembers, for ' and ", that no closing quote follows a point
// already passed, so that hostile input cannot make the scan quadratic.
// It adds the bytes it reads to read.
func tagEnd(s string, i int, noQuote *[2]bool, read *int) int {
	for i < len(s) {
		*read++
		switch s[i] {
		case '>':
			return i
		case '=':
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				*read++
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				q := 0
				if s[j] == '"' {
					q = 1
				}
				if !noQuote[q] {
					k := strings.IndexByte(s[j+1:], s[j])
					*read += scanned(k, len(s)-j-1, 1)
					if k >= 0 {
						i = j + 1 + k + 1
						continue
					}
					noQuote[q] = true
				}
				// An unclosed quote: let the first '>' end the tag.
			}
			i = j
			continue
		}
		i++
	}
	return -1
}

// tagName returns the element name at the start of a tag's inside
// ("/p class=x" gives "p"), lower-cased by the caller.
func tagName(t string) string {
	t = strings.TrimPrefix(t, "/")
	for i := 0; i < len(t); i++ {
		c := t[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == ':') {
			return t[:i]
		}
	}
	return t
}

// asciiLower lower-cases the ASCII letters of s, leaving every other byte
// where it is.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// tidyLines collapses white space within each line and drops blank lines.
func tidyLines(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for line := range strings.SplitSeq(s, "\n") {
		if line = collapse(line); line == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(line)
	}
	return b.String()
}

// HTMLText returns the plain text of an HTML document as Parse makes it of
// a text/html part: markup, scripts and styles removed, entities decoded,
// block elements on lines of their own. s should be valid UTF-8; the time
// it takes is linear in len(s).
func HTMLText(s string) string { return htmlText(s) }
