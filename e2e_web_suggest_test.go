package main

import (
	"fmt"
	"net/url"
)

// TestBrowser's did-you-mean step: a misspelled word finds nothing, the
// page offers the person's own word as a link, and the link searches it
// with the filters kept.
func (w *webTest) suggestionLink() error {
	b := w.b
	if err := b.navigate(w.base + "/search?q=regata&kind=entry&sort=date"); err != nil {
		return err
	}
	if err := b.waitFor("the search to answer", answeredJS); err != nil {
		return err
	}
	if err := w.waitValue("the count", countJS, "Nothing found for regata"); err != nil {
		return err
	}
	if err := w.waitValue("the suggestion", `document.querySelector('main .suggestion').textContent`, "Did you mean regatta?"); err != nil {
		return err
	}
	if _, err := w.lastSearch(url.Values{"q": {"(regata) kind:entry"}, "limit": {"20"}, "sort": {"date"}}); err != nil {
		return err
	}
	if err := b.click("main .suggestion a", "regatta"); err != nil {
		return err
	}
	if err := b.waitFor("the suggested search", `location.search === '?q=regatta&kind=entry&sort=date'`); err != nil {
		return err
	}
	if err := w.waitValue("the results", titlesJS, []string{regattaWinter, regattaAutumn}); err != nil {
		return fmt.Errorf("the suggested search: %w", err)
	}
	_, err := w.lastSearch(url.Values{"q": {"(regatta) kind:entry"}, "limit": {"20"}, "sort": {"date"}})
	return err
}

// relaxedShown: a question whose words no item holds all of shows the
// items with most of them, and says so.
func (w *webTest) relaxedShown() error {
	if err := w.searchFor("/search?q="+url.QueryEscape("did forty boats sail in winter"), []string{regattaAutumn}); err != nil {
		return err
	}
	if err := w.waitValue("the relaxed sentence", `document.querySelector('main .relaxed').textContent`,
		"No results with every word; showing results with most of them."); err != nil {
		return err
	}
	_, err := w.lastSearch(url.Values{"q": {"did forty boats sail in winter"}, "limit": {"20"}})
	return err
}
