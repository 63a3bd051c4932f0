package gmail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"searchsvc/integrations"
)

// The partial sync: users.history.list from the historyId the last sync
// stored, as Google recommends. It sees every message added to or deleted
// from the mailbox since, whatever the message's date: mail that arrives
// out of date order is not missed, and mail deleted in Gmail leaves the
// item store.

// TaskGetHistory lists a further page of the mailbox's history; its
// payload holds startHistoryId and pageToken.
const TaskGetHistory = "getHistory"

// HistoryPageSize is how many history records one history.list page asks
// for (Gmail's maxResults: at most 500).
const HistoryPageSize = 500

// Bounds of history answers.
const (
	maxHistoryBody = 4 << 20 // 500 records of a few ids each take about 150 KB
	maxHistoryID   = 20      // digits of a uint64
)

// syncState is the record's sync state (Env.State), as JSON.
type syncState struct {
	// HistoryID is where the next partial sync starts; during a full
	// listing, the mailbox's historyId taken before it began.
	HistoryID string `json:"h,omitempty"`
	// Listing is set while a full listing runs; PageToken is then the
	// page it goes on from ("" for the first page).
	Listing   bool   `json:"l,omitempty"`
	PageToken string `json:"p,omitempty"`
	// Pages is how many pages the listing read before PageToken; their
	// ids are kept under listedKey.
	Pages int `json:"n,omitempty"`
}

// stateKey is the name the mailbox's sync state is kept under
// (Env.State, TaskResult.State).
const stateKey = "mailbox"

func (st syncState) String() string {
	b, _ := json.Marshal(st)
	return string(b)
}

// kept is st as a TaskResult.State.
func (st syncState) kept() map[string]string { return map[string]string{stateKey: st.String()} }

// syncState reads the record's sync state. One that cannot be read (not
// this version's, or damaged) is no state: the next sync lists the
// mailbox in full, which downloads nothing already stored.
func (m *mailbox) syncState() syncState {
	var st syncState
	if m.state == nil {
		return st
	}
	if json.Unmarshal([]byte(m.state(stateKey)), &st) != nil || !validHistoryID(st.HistoryID) || !validPageToken(st.PageToken) {
		return syncState{}
	}
	return st
}

// historyID returns the mailbox's current historyId (users.getProfile).
func (m *mailbox) historyID(ctx context.Context) (string, error) {
	body, err := m.get(ctx, "/gmail/v1/users/me/profile", nil, maxListBody)
	if err != nil {
		return "", fmt.Errorf("profile: %w", err)
	}
	var p struct {
		HistoryID string `json:"historyId"`
	}
	if err := json.Unmarshal(body, &p); err != nil {
		return "", fmt.Errorf("profile: %w", badResponse(err))
	}
	if p.HistoryID == "" || !validHistoryID(p.HistoryID) {
		return "", fmt.Errorf("profile: %w: historyId", ErrBadResponse)
	}
	return p.HistoryID, nil
}

// historyPage is history.list's answer, with the parts the sync reads.
type historyPage struct {
	History []struct {
		MessagesAdded []struct {
			Message historyMessage `json:"message"`
		} `json:"messagesAdded"`
		MessagesDeleted []struct {
			Message historyMessage `json:"message"`
		} `json:"messagesDeleted"`
	} `json:"history"`
	NextPageToken string `json:"nextPageToken"`
	HistoryID     string `json:"historyId"`
}

type historyMessage struct {
	ID       string   `json:"id"`
	LabelIDs []string `json:"labelIds"`
}

// history runs one page of history.list after start: a downloadEmail task
// for each message added and not stored, the messages deleted as Removed,
// and a getHistory task for the next page, if any. The last page stores
// the mailbox's current historyId as the sync state. A 404 (Gmail keeps
// history for about a week) starts a full listing instead, which
// downloads only what is not stored.
func (m *mailbox) history(ctx context.Context, start, pageToken string) (integrations.TaskResult, error) {
	if start == "" || !validHistoryID(start) || !validPageToken(pageToken) {
		return integrations.TaskResult{}, fmt.Errorf("gmail getHistory: %w", ErrInvalidPayload)
	}
	query := url.Values{
		"startHistoryId": {start},
		"historyTypes":   {"messageAdded", "messageDeleted"},
		"maxResults":     {strconv.Itoa(HistoryPageSize)},
	}
	if pageToken != "" {
		query.Set("pageToken", pageToken)
	}
	body, err := m.get(ctx, "/gmail/v1/users/me/history", query, maxHistoryBody)
	var ae *integrations.APIError
	if errors.As(err, &ae) && ae.Status == http.StatusNotFound {
		return m.fullListing(ctx, "gmail history expired")
	}
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("gmail getHistory: %w", err)
	}
	res, page, err := m.historyChanges(body)
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("gmail getHistory: %w", err)
	}
	if page.NextPageToken != "" {
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskGetHistory,
			Payload: map[string]string{payloadStartHistoryID: start, payloadPageToken: page.NextPageToken}})
		return res, nil
	}
	if page.HistoryID != "" {
		res.State = syncState{HistoryID: page.HistoryID}.kept()
	}
	return res, nil
}

// historyChanges reads one history.list answer: a downloadEmail task for
// each message added and not stored, the messages deleted as Removed.
// The page's net effect counts, in order: a message added then deleted is
// not downloaded; one deleted then added again is.
func (m *mailbox) historyChanges(body []byte) (integrations.TaskResult, historyPage, error) {
	var page historyPage
	if err := json.Unmarshal(body, &page); err != nil {
		return integrations.TaskResult{}, page, badResponse(err)
	}
	if !validPageToken(page.NextPageToken) || !validHistoryID(page.HistoryID) {
		return integrations.TaskResult{}, page, fmt.Errorf("%w: nextPageToken or historyId", ErrBadResponse)
	}
	added := make(map[string]bool)
	var order []string
	var res integrations.TaskResult
	for _, h := range page.History {
		for _, a := range h.MessagesAdded {
			id := a.Message.ID
			if !validID(id) || hidden(a.Message.LabelIDs) {
				continue
			}
			if _, ok := added[id]; !ok {
				order = append(order, id)
			}
			added[id] = true
		}
		for _, d := range h.MessagesDeleted {
			id := d.Message.ID
			if !validID(id) {
				continue
			}
			if added[id] {
				added[id] = false
			}
			res.Removed = append(res.Removed, id)
		}
	}
	var fetch []string
	for _, id := range order {
		if added[id] && (m.known == nil || !m.known(id)) {
			fetch = append(fetch, id)
		}
	}
	res.Tasks = appendDownloads(res.Tasks, fetch)
	return res, page, nil
}

// hidden reports whether labels put a message in the spam or the trash,
// which messages.list leaves out too.
func hidden(labels []string) bool {
	for _, l := range labels {
		if l == "SPAM" || l == "TRASH" {
			return true
		}
	}
	return false
}

// validHistoryID reports whether h can be a Gmail history id: empty, or
// 1 to 20 decimal digits.
func validHistoryID(h string) bool {
	if len(h) > maxHistoryID {
		return false
	}
	for i := 0; i < len(h); i++ {
		if h[i] < '0' || h[i] > '9' {
			return false
		}
	}
	return true
}
