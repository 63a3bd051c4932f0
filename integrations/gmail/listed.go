package gmail

import (
	"fmt"
	"strconv"
	"strings"
)

// A full listing keeps the ids of each page it read in a key of the sync
// state of its own ("listed.<page>"), so a page writes what it listed and
// nothing more, and a listing resumed after a restart still knows the
// pages before. At the last page, the stored messages no page listed are
// removed: they were deleted in Gmail while the history was out of reach
// (a 404 on the stored historyId), and no messageDeleted will say so.

// listedKey is the sync-state key of the ids of the listing's page n.
func listedKey(n int) string { return "listed." + strconv.Itoa(n) }

// forgetListed sets, in state, the keys of the first pages pages of a
// listing to "" (forgotten), and returns state.
func forgetListed(state map[string]string, pages int) map[string]string {
	if state == nil {
		state = make(map[string]string, pages)
	}
	for n := range pages {
		state[listedKey(n)] = ""
	}
	return state
}

// unlisted returns the stored messages that no page of the listing listed,
// the last page's ids being page; st.Pages pages came before it.
func (m *mailbox) unlisted(st syncState, page []string) ([]string, error) {
	if m.providerIDs == nil {
		return nil, nil
	}
	stored, err := m.providerIDs()
	if err != nil {
		return nil, fmt.Errorf("stored messages: %w", err)
	}
	if len(stored) == 0 {
		return nil, nil
	}
	listed := make(map[string]bool, len(stored))
	for _, id := range page {
		listed[id] = true
	}
	for n := range st.Pages {
		v := ""
		if m.state != nil {
			v = m.state(listedKey(n))
		}
		for id := range strings.SplitSeq(v, ",") {
			listed[id] = true
		}
	}
	var gone []string
	for _, id := range stored {
		if !listed[id] {
			gone = append(gone, id)
		}
	}
	return gone, nil
}

// afterPage returns the state a listing's page leaves, st being the state
// it found: the page's ids under their own key and the next page token,
// or, at the last page (next is ""), the listing done and every page's
// key forgotten.
func afterPage(st syncState, page []string, next string) map[string]string {
	if next == "" {
		done := syncState{HistoryID: st.HistoryID}
		return forgetListed(done.kept(), st.Pages)
	}
	n := st.Pages
	st.Listing, st.PageToken, st.Pages = true, next, n+1
	state := st.kept()
	state[listedKey(n)] = strings.Join(page, ",")
	return state
}
