package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"time"
)

// TestBrowser's search steps, against the real GET /v1/search: the
// results shown, and what the app asked, observed on the network.

// The regatta items: two feed entries and two mails, by date newest first.
const (
	regattaDinner = "Re: regatta dinner on Saturday"  // mail, 14 Nov
	regattaWinter = "Winter regatta series announced" // entry, 9 Nov
	regattaCrew   = "Crew list for the regatta"       // mail, 20 Oct
	regattaAutumn = "Autumn regatta: the results"     // entry, 12 Oct
)

const (
	titlesJS = `[...document.querySelectorAll('.result h2 a')].map(a => a.textContent)`
	countJS  = `document.querySelector('main .count').textContent`
	// answeredJS holds once the search page has shown its answer.
	answeredJS = `(() => { const c = document.querySelector('main .count');
		return document.querySelector('main .notice') || (c && !c.textContent.startsWith('Searching')); })()`
)

// searchWait bounds the reloads of searchFor and openResult: it only ends
// a failing test, nothing is asserted about how long a search took.
const searchWait = 20 * time.Second

// searchFor opens the search page at path and waits for the results
// titled want. An item is findable once its sync batch is stored, which
// the page does not show, so the page is loaded again (as a person would
// reload it) until it shows them.
func (w *webTest) searchFor(path string, want []string) error {
	var got []string
	for deadline := time.Now().Add(searchWait); ; {
		if err := w.b.navigate(w.base + path); err != nil {
			return err
		}
		if err := w.b.waitFor("the search to answer", answeredJS); err != nil {
			return err
		}
		if err := w.b.eval(titlesJS, &got); err != nil {
			return err
		}
		if slices.Equal(got, want) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: got results %q, want %q", path, got, want)
		}
	}
}

// openResult searches word with the search box, as a person types it,
// and opens the result whose title contains title.
func (w *webTest) openResult(word, title string) error {
	b := w.b
	if err := b.click("nav a", "Search"); err != nil {
		return err
	}
	if err := b.waitFor("the search box", `document.querySelector('input#q')`); err != nil {
		return err
	}
	if err := b.fill("input#q", word); err != nil {
		return err
	}
	// An item is findable once its sync batch is stored, which the page
	// does not show, so the search is asked again (as a person would)
	// until it is found.
	found := `location.search === '?q=` + word + `' && [...document.querySelectorAll('.result mark')].some(m => m.textContent.toLowerCase() === '` + word + `')`
	for deadline := time.Now().Add(searchWait); ; {
		if err := b.click("form[role=search] button[type=submit]", "Search"); err != nil {
			return err
		}
		err := b.waitFor("the search to answer", answeredJS)
		if err == nil {
			var ok bool
			if err = b.eval(found, &ok); err == nil && ok {
				break
			}
		}
		if time.Now().After(deadline) {
			return b.waitFor("a highlighted result", found)
		}
		time.Sleep(100 * time.Millisecond) // the pace of waitFor's polls
	}
	if err := b.click(".result h2 a", title); err != nil {
		return err
	}
	return b.waitFor("the item", `location.pathname.startsWith('/items/') && document.querySelector('#item-text')`)
}

// lastSearch checks the query string of the app's latest GET /v1/search.
func (w *webTest) lastSearch(want url.Values) (sentRequest, error) {
	sent := w.b.requests("/v1/search")
	if len(sent) == 0 {
		return sentRequest{}, fmt.Errorf("the app sent no GET /v1/search")
	}
	r := sent[len(sent)-1]
	u, err := url.Parse(r.URL)
	if err != nil {
		return r, err
	}
	if r.Method != "GET" || u.Query().Encode() != want.Encode() {
		return r, fmt.Errorf("the app asked %s /v1/search?%s, want GET with %s", r.Method, u.RawQuery, want.Encode())
	}
	return r, nil
}

// moreResults searches a word 22 entries share: the first page holds 20,
// "More results" asks for the next with the answer's cursor and appends
// the last two. The logs tie on relevance, so the newer comes first.
func (w *webTest) moreResults() error {
	var want []string
	for day := harbourLogs; day >= 1; day-- {
		want = append(want, fmt.Sprintf("Harbour log, day %d", day))
	}
	if err := w.searchFor("/search?q=harbour", want[:20]); err != nil {
		return err
	}
	if err := w.eq("the count", countJS, "22 results for harbour (showing 20)"); err != nil {
		return err
	}
	first, err := w.lastSearch(url.Values{"q": {"harbour"}, "limit": {"20"}})
	if err != nil {
		return err
	}
	raw, err := w.b.responseBody(first)
	if err != nil {
		return err
	}
	var page struct {
		Count, Total int
		NextCursor   string
	}
	if err := json.Unmarshal(raw, &page); err != nil {
		return err
	}
	if page.Count != 20 || page.Total != 22 || page.NextCursor == "" {
		return fmt.Errorf("the first page: got count %d, total %d, cursor %q; want 20, 22 and a cursor", page.Count, page.Total, page.NextCursor)
	}
	n := len(w.b.requests("/v1/search"))
	if err := w.b.click(".more button", "More results"); err != nil {
		return err
	}
	if err := w.waitValue("both pages", titlesJS, want); err != nil {
		return err
	}
	if got := len(w.b.requests("/v1/search")); got != n+1 {
		return fmt.Errorf("searches after More results: got %d, want %d", got, n+1)
	}
	if _, err := w.lastSearch(url.Values{"q": {"harbour"}, "limit": {"20"}, "cursor": {page.NextCursor}}); err != nil {
		return err
	}
	for _, c := range []struct{ what, expr, want string }{
		{"the count", countJS, "22 results for harbour"},
		{"the More button", `document.querySelector('.more button') ? 'there' : 'gone'`, "gone"},
		{"focus, on the first new result", `document.activeElement.textContent`, "Harbour log, day 2"},
	} {
		if err := w.eq(c.what, c.expr, c.want); err != nil {
			return err
		}
	}

	// Back from a result shows both pages again (the second asked for
	// with the same cursor), with the focus on the result opened.
	if err := w.b.click(".result:nth-child(21) h2 a", "Harbour log, day 2"); err != nil { // of the second page
		return err
	}
	if err := w.waitValue("the item's page", `location.pathname.startsWith('/items/')`, true); err != nil {
		return err
	}
	n = len(w.b.requests("/v1/search"))
	if err := w.b.eval("history.back()", nil); err != nil {
		return err
	}
	if err := w.waitValue("both pages, back from the item", titlesJS, want); err != nil {
		return err
	}
	if err := w.waitValue("focus, back from the item", `document.activeElement.textContent`, "Harbour log, day 2"); err != nil {
		return err
	}
	if got := len(w.b.requests("/v1/search")); got != n+2 {
		return fmt.Errorf("searches back from the item: got %d, want %d (both pages)", got, n+2)
	}
	if _, err := w.lastSearch(url.Values{"q": {"harbour"}, "limit": {"20"}, "cursor": {page.NextCursor}}); err != nil {
		return err
	}
	return w.eq("the count, back from the item", countJS, "22 results for harbour")
}

// filtersAndOrder searches "regatta" and changes the order, the kind, the
// service and the dates in the form, as a person would: each change is a
// new address (so back returns to the one before) and a new search.
func (w *webTest) filtersAndOrder() error {
	all := []string{regattaDinner, regattaWinter, regattaCrew, regattaAutumn}
	if err := w.searchFor("/search?q=regatta", byRelevance); err != nil {
		return err
	}
	if _, err := w.lastSearch(url.Values{"q": {"regatta"}, "limit": {"20"}}); err != nil {
		return err
	}
	if err := w.b.click("details.filterbox summary", "Filters and order"); err != nil {
		return err
	}
	// shows waits for the page at search with the results titled want,
	// and checks what the app asked for them.
	shows := func(search string, want []string, asked url.Values) error {
		s, _ := json.Marshal(search)
		if err := w.b.waitFor("the address "+search, "location.search === "+string(s)); err != nil {
			return err
		}
		if err := w.waitValue(search, titlesJS, want); err != nil {
			return err
		}
		_, err := w.lastSearch(asked)
		return err
	}
	ask := func(q string, more ...string) url.Values {
		v := url.Values{"q": {q}, "limit": {"20"}, "sort": {"date"}}
		for i := 0; i < len(more); i += 2 {
			v.Set(more[i], more[i+1])
		}
		return v
	}
	var feedID string
	if err := w.b.eval(`[...document.querySelectorAll('select[name=integrationId] option')].find(o => o.textContent === 'RSS or Atom feed').value`, &feedID); err != nil {
		return err
	}
	submit := func() error { return w.b.click("form[role=search] button[type=submit]", "Search") }
	for _, c := range []struct {
		what   string
		do     func() error
		search string
		want   []string
		asked  url.Values
	}{
		{"newest first", func() error { return w.b.fill("select[name=sort]", "date") },
			"?q=regatta&sort=date", all, ask("regatta")},
		{"only mail", func() error { return w.b.fill("select[name=kind]", "email") },
			"?q=regatta&sort=date&kind=email", []string{regattaDinner, regattaCrew}, ask("(regatta) kind:email")},
		{"only feed entries", func() error { return w.b.fill("select[name=kind]", "entry") },
			"?q=regatta&sort=date&kind=entry", []string{regattaWinter, regattaAutumn}, ask("(regatta) kind:entry")},
		{"every kind", func() error { return w.b.fill("select[name=kind]", "") },
			"?q=regatta&sort=date", all, ask("regatta")},
		{"only the feed", func() error { return w.b.fill("select[name=integrationId]", feedID) },
			"?q=regatta&sort=date&integrationId=" + feedID, []string{regattaWinter, regattaAutumn}, ask("regatta", "integrationId", feedID)},
		{"every service", func() error { return w.b.fill("select[name=integrationId]", "") },
			"?q=regatta&sort=date", all, ask("regatta")},
		{"from a date", func() error {
			if err := w.b.fill("input[name=after]", "2026-11-01"); err != nil {
				return err
			}
			return submit()
		}, "?q=regatta&sort=date&after=2026-11-01", []string{regattaDinner, regattaWinter}, ask("(regatta) after:2026-11-01")},
		{"before a date", func() error {
			if err := w.b.fill("input[name=after]", ""); err != nil {
				return err
			}
			if err := w.b.fill("input[name=before]", "2026-11-01"); err != nil {
				return err
			}
			return submit()
		}, "?q=regatta&sort=date&before=2026-11-01", []string{regattaCrew, regattaAutumn}, ask("(regatta) before:2026-11-01")},
		{"back", func() error { return w.b.eval("history.back()", nil) },
			"?q=regatta&sort=date&after=2026-11-01", []string{regattaDinner, regattaWinter}, ask("(regatta) after:2026-11-01")},
	} {
		if err := c.do(); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
		if err := shows(c.search, c.want, c.asked); err != nil {
			return fmt.Errorf("%s: %w", c.what, err)
		}
	}
	return nil
}

// byRelevance is the regatta items as the search ranks them.
var byRelevance = []string{regattaWinter, regattaAutumn, regattaDinner, regattaCrew}

// searchPicture is the search page of the README: a few results, with
// their highlighted snippets, and no caret in the box.
func (w *webTest) searchPicture() error {
	if err := w.searchFor("/search?q=regatta", byRelevance); err != nil {
		return err
	}
	if err := w.eq("the matches", `[...document.querySelectorAll('.result')].map(r => [...r.querySelectorAll('mark')].map(m => m.textContent).join(',')).join('|')`,
		"regatta|regatta|regatta|regatta"); err != nil {
		return err
	}
	return w.b.eval("document.activeElement.blur()", nil)
}

// press types one key as a person does, down and up, through DevTools.
func (w *webTest) press(key string) error {
	k := map[string]struct {
		code, text string
		vk         int
	}{"/": {"Slash", "/", 191}, "j": {"KeyJ", "j", 74}, "k": {"KeyK", "k", 75},
		"Enter": {"Enter", "\r", 13}, "Escape": {"Escape", "", 27}}[key]
	if k.code == "" {
		return fmt.Errorf("press: no key %q", key)
	}
	down := map[string]any{"type": "keyDown", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk}
	if k.text != "" {
		down["text"] = k.text
	}
	if _, err := w.b.call(w.b.session, "Input.dispatchKeyEvent", down); err != nil {
		return err
	}
	_, err := w.b.call(w.b.session, "Input.dispatchKeyEvent", map[string]any{"type": "keyUp", "key": key, "code": k.code, "windowsVirtualKeyCode": k.vk})
	return err
}

// keyboard walks the results with the keys the help lists: / to the box,
// Escape out of it, j and k down and up the results, Enter to open one,
// Escape back to the results, where that result has the focus again.
func (w *webTest) keyboard() error {
	if err := w.b.navigate(w.base + "/search?q=harbour"); err != nil {
		return err
	}
	if err := w.b.waitFor("the search to answer", answeredJS); err != nil {
		return err
	}
	const focused = `(() => { const a = document.activeElement, links = [...document.querySelectorAll('.result h2 a')];
		return a.id === 'q' ? 'box ' + a.value : links.includes(a) ? 'result ' + links.indexOf(a) : a.tagName; })()`
	keys := []struct{ key, want string }{
		{"Escape", "BODY"}, {"/", "box harbour"}, {"Escape", "BODY"},
		{"j", "result 0"}, {"j", "result 1"}, {"k", "result 0"},
	}
	for i, k := range keys {
		if err := w.press(k.key); err != nil {
			return err
		}
		if err := w.eq(fmt.Sprintf("the focus after key %d (%s)", i+1, k.key), focused, k.want); err != nil {
			return err
		}
	}
	var first string
	if err := w.b.eval(`document.activeElement.getAttribute('href')`, &first); err != nil {
		return err
	}
	if err := w.press("Enter"); err != nil {
		return err
	}
	if err := w.b.waitFor("the item", `location.pathname + location.search === '`+first+`' && document.querySelector('#item-text')`); err != nil {
		return err
	}
	if err := w.press("Escape"); err != nil {
		return err
	}
	if err := w.b.waitFor("the results again", `location.search === '?q=harbour' && document.activeElement.getAttribute('href') === '`+first+`'`); err != nil {
		return err
	}
	return w.eq("the keys in the help", `[...document.querySelectorAll('.qhelp table.keys tr')].map(r => r.textContent).join('; ')`,
		"/to the search box; Escout of the box; on an item, back to the results; jknext, previous result; Enteropen the result")
}
