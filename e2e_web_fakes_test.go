package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// The services TestBrowser connects: a feed of a sailing club (with a
// hostile entry) and a mailbox of three mails, served by httptest.

// The hostile entry's title and text as the feed parser makes them: markup
// that would set window.__pwned if it were ever parsed as HTML.
const (
	hostileTitle = `<script>window.__pwned=1</script>Quokka <img src=x onerror="window.__pwned=2">`
	hostileText  = `Quokka <img src=x onerror="window.__pwned=3"> <script>window.__pwned=4</script> is not HTML.`
)

// reversedTitle is a title that, shown raw, reads as a picture's name:
// U+202E (right-to-left override) turns "gnp.exe" into "exe.png" on screen.
// The app shows it isolated and without the override, as "gnp.exe".
const reversedTitle = "\u202Egnp.exe"

// harbourLogs is how many feed entries share the word "harbour": more than
// the app's page of 20 results, so the search for it has a second page.
const harbourLogs = 22

// feedEntry is one entry of the fake feed; html entries' title and text
// are escaped twice, as a feed carries markup inside a title.
type feedEntry struct {
	title, link, guid, author, text string
	date                            time.Time
	html                            bool
}

// feedEntries are the fake feed's entries: the zeppelin (whose link, not
// its guid, is its address), the hostile one, the reversed one, two about
// the regatta and the harbour logs.
func feedEntries(base string) []feedEntry {
	es := []feedEntry{
		{title: "Zeppelin over the lake", link: base + "/zeppelin", guid: "zeppelin-entry-1", author: "pilot@example.org (Pilot)",
			date: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC), text: "The zeppelin crossed the lake at dawn."},
		{title: hostileTitle, guid: "javascript:window.__pwned=5", date: time.Date(2026, 11, 3, 9, 0, 0, 0, time.UTC), text: hostileText, html: true},
		{title: reversedTitle, guid: "kestrel-entry", author: "\u200Fnoom@example.org", date: time.Date(2026, 8, 15, 9, 0, 0, 0, time.UTC),
			text: "A kestrel photo, or so its name says."},
		{title: "Autumn regatta: the results", link: base + "/autumn-regatta", guid: base + "/autumn-regatta", author: "commodore@example.org (Commodore)",
			date: time.Date(2026, 10, 12, 8, 30, 0, 0, time.UTC),
			text: "Forty boats sailed the autumn regatta in a steady north-westerly breeze."},
		{title: "Winter regatta series announced", link: base + "/winter-series", guid: base + "/winter-series", author: "commodore@example.org (Commodore)",
			date: time.Date(2026, 11, 9, 18, 0, 0, 0, time.UTC),
			text: "The winter regatta series starts on 6 December; entries open next week."},
	}
	for day := 1; day <= harbourLogs; day++ {
		es = append(es, feedEntry{title: fmt.Sprintf("Harbour log, day %d", day), guid: fmt.Sprintf("%s/log/%d", base, day),
			date: time.Date(2026, 9, day, 7, 0, 0, 0, time.UTC),
			text: fmt.Sprintf("The tide gauge read %.1f m at noon and every mooring was checked.", 1+float64(day%7)/10)})
	}
	return es
}

// feedItems is how many items the feed syncs: every entry.
var feedItems = strconv.Itoa(len(feedEntries("")))

// fakeFeed is an httptest RSS feed. The hostile entry's guid is a
// javascript: address the app must not link. While refuse is set it
// answers 401, as a feed that has come to need a password does. Each
// fetch is told on fetched, unless fetches already wait there.
type fakeFeed struct {
	*httptest.Server
	fetched chan struct{}
	refuse  atomic.Bool
}

func newFakeFeed(t *testing.T) *fakeFeed {
	t.Helper()
	f := &fakeFeed{fetched: make(chan struct{}, 16)}
	esc := func(s string) string { // XML's escaping of text
		s = strings.ReplaceAll(s, "&", "&amp;")
		s = strings.ReplaceAll(s, "<", "&lt;")
		return strings.ReplaceAll(s, ">", "&gt;")
	}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/feed.xml" {
			http.NotFound(w, r)
			return
		}
		select {
		case f.fetched <- struct{}{}:
		default:
		}
		if f.refuse.Load() {
			w.Header().Set("WWW-Authenticate", `Basic realm="members"`)
			http.Error(w, "members only", http.StatusUnauthorized)
			return
		}
		var b strings.Builder
		fmt.Fprintf(&b, `<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Lakeside Sailing Club</title><link>%s/</link>
`, f.URL)
		for _, e := range feedEntries(f.URL) {
			title, text := esc(e.title), esc(e.text)
			if e.html {
				title, text = esc(title), esc(text)
			}
			b.WriteString("<item><title>" + title + "</title>")
			if e.link != "" {
				b.WriteString("<link>" + e.link + "</link>")
			}
			if strings.HasPrefix(e.guid, "http") {
				b.WriteString("<guid>" + e.guid + "</guid>")
			} else {
				b.WriteString(`<guid isPermaLink="false">` + e.guid + "</guid>")
			}
			if e.author != "" {
				b.WriteString("<author>" + e.author + "</author>")
			}
			b.WriteString("<pubDate>" + e.date.Format(time.RFC1123Z) + "</pubDate><description>" + text + "</description></item>\n")
		}
		b.WriteString("</channel></rss>")
		w.Header().Set("Content-Type", "application/rss+xml")
		fmt.Fprint(w, b.String())
	}))
	t.Cleanup(f.Close)
	return f
}

// mails are the fake mailbox's messages, by Gmail's seq (1 the oldest).
var mails = []struct{ from, subject, body string }{
	{"Maria Lopez <maria@example.org>", "Crew list for the regatta",
		"Hi Ann, here is the crew list for the regatta: Tom on the jib, you at the helm.\n\nMaria"},
	{"Lakeside Marina <billing@marina.example>", "Mooring invoice for November",
		"Your invoice for berth 14 in November is attached. Amount due: 120.00 EUR."},
	{"Tom Becker <tom@example.org>", "Re: regatta dinner on Saturday",
		"Count me in for the regatta dinner. I can bring last year's trophies.\n\nTom"},
}

// mailDates are the mails' dates, by seq.
var mailDates = []time.Time{
	time.Date(2026, 10, 20, 14, 5, 0, 0, time.UTC),
	time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC),
	time.Date(2026, 11, 14, 19, 40, 0, 0, time.UTC),
}

// invoiceAttachment is the text file attached to the invoice (seq 2).
const invoiceAttachment = "Berth 14: 120.00 EUR. Pay by bank transfer before 30 November."

// mail returns message seq of the fake mailbox as RFC 5322 with CRLF; the
// invoice carries its text as an attachment.
func mail(seq int) []byte {
	m := mails[seq-1]
	s := fmt.Sprintf("From: %s\nTo: Ann <ann@example.org>\nSubject: %s\nDate: %s\nMessage-ID: <%d@example.org>\nMIME-Version: 1.0\n",
		m.from, m.subject, mailDates[seq-1].Format(time.RFC1123Z), seq)
	if seq == 2 {
		s += "Content-Type: multipart/mixed; boundary=\"part\"\n\n--part\nContent-Type: text/plain; charset=utf-8\n\n" + m.body +
			"\n--part\nContent-Type: text/plain; charset=utf-8\nContent-Disposition: attachment; filename=\"invoice-november.txt\"\n\n" +
			invoiceAttachment + "\n--part--\n"
	} else {
		s += "Content-Type: text/plain; charset=utf-8\n\n" + m.body + "\n"
	}
	return []byte(strings.ReplaceAll(s, "\n", "\r\n"))
}
