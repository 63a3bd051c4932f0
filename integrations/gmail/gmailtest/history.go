package gmailtest

import (
	"net/http"
	"slices"
	"strconv"
)

// users.getProfile and users.history.list.

// ServeProfile serves users.getProfile.
func (s *Server) ServeProfile(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts.Profiles++
	total, current := s.total-len(s.deleted), s.historyID
	s.mu.Unlock()
	if s.check(w, r) {
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"emailAddress":  "me@example.com",
		"messagesTotal": total,
		"threadsTotal":  total,
		"historyId":     strconv.FormatUint(current, 10),
	})
}

// historyList serves users.history.list: the changes after
// startHistoryId, oldest first, of the historyTypes asked for (all when
// none is), maxResults records a page (default 100), and the mailbox's
// current historyId. Its page token is the id of the page's first record.
func (s *Server) historyList(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.counts.Histories++
	s.mu.Unlock()
	if s.check(w, r) {
		return
	}
	q := r.URL.Query()
	start, err := strconv.ParseUint(q.Get("startHistoryId"), 10, 64)
	size := pageSize(r, 100)
	if err != nil || size == 0 {
		writeError(w, http.StatusBadRequest, "")
		return
	}
	types := q["historyTypes"]
	for _, t := range types {
		if t != "messageAdded" && t != "messageDeleted" && t != "labelAdded" && t != "labelRemoved" {
			writeError(w, http.StatusBadRequest, "")
			return
		}
	}
	want := func(c change) bool {
		name := "messageAdded"
		if c.deleted {
			name = "messageDeleted"
		}
		return len(types) == 0 || slices.Contains(types, name)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if start < s.oldest {
		writeError(w, http.StatusNotFound, "")
		return
	}
	from := start + 1
	if tok := q.Get("pageToken"); tok != "" {
		n, err := strconv.ParseUint(tok, 10, 64)
		if err != nil || n <= start || n > s.historyID+1 {
			writeError(w, http.StatusBadRequest, "")
			return
		}
		from = n
	}
	type added struct {
		Message ref `json:"message"`
	}
	type record struct {
		ID              string  `json:"id"`
		Messages        []ref   `json:"messages"`
		MessagesAdded   []added `json:"messagesAdded,omitempty"`
		MessagesDeleted []added `json:"messagesDeleted,omitempty"`
	}
	page := struct {
		History       []record `json:"history,omitempty"`
		NextPageToken string   `json:"nextPageToken,omitempty"`
		HistoryID     string   `json:"historyId"`
	}{HistoryID: strconv.FormatUint(s.historyID, 10)}
	for _, c := range s.history {
		if c.id < from || !want(c) {
			continue
		}
		if len(page.History) == size {
			page.NextPageToken = strconv.FormatUint(c.id, 10)
			break
		}
		m := ref{ID: ID(c.seq), ThreadID: s.threadID(c.seq)}
		rec := record{ID: strconv.FormatUint(c.id, 10), Messages: []ref{m}}
		if c.deleted {
			rec.MessagesDeleted = []added{{m}}
		} else {
			m.LabelIDs = []string{"INBOX", "UNREAD"}
			rec.MessagesAdded = []added{{m}}
		}
		page.History = append(page.History, rec)
	}
	writeJSON(w, http.StatusOK, page)
}
