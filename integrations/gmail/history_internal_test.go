package gmail

import (
	"strings"
	"testing"
)

// FuzzHistoryPage feeds history.list answers to the page reader: it never
// panics, and every id it asks to download or reports deleted is one that
// can be Gmail's, downloaded at most once.
func FuzzHistoryPage(f *testing.F) {
	f.Add([]byte(`{"history":[{"id":"5","messagesAdded":[{"message":{"id":"18f0000000000001","labelIds":["INBOX"]}}]},` +
		`{"id":"6","messagesDeleted":[{"message":{"id":"18f0000000000002"}}]}],"nextPageToken":"7","historyId":"9"}`))
	f.Add([]byte(`{"history":[{"messagesAdded":[{"message":{"id":"a","labelIds":["SPAM"]}},{"message":{"id":"a"}}],` +
		`"messagesDeleted":[{"message":{"id":"a"}}]}],"historyId":"12"}`))
	f.Add([]byte(`{"historyId":"x1"}`))
	f.Add([]byte(`{"history":[{"messagesAdded":[{"message":{"id":"../profile"}}]}]}`))
	f.Add([]byte(`null`))
	m := &mailbox{known: func(id string) bool { return id == "known" }}
	f.Fuzz(func(t *testing.T, body []byte) {
		res, page, err := m.historyChanges(body)
		if err != nil {
			return
		}
		if !validPageToken(page.NextPageToken) || !validHistoryID(page.HistoryID) {
			t.Fatalf("accepted page token %q, history id %q", page.NextPageToken, page.HistoryID)
		}
		seen := make(map[string]bool)
		for _, task := range res.Tasks {
			ids := strings.Split(task.Payload[payloadEmailIDs], ",")
			if task.Type != TaskDownloadEmails || task.Items != len(ids) || len(ids) > maxBatchIDs {
				t.Fatalf("task %+v", task)
			}
			for _, id := range ids {
				if !validID(id) || seen[id] || id == "known" {
					t.Fatalf("task %+v", task)
				}
				seen[id] = true
			}
		}
		for _, id := range res.Removed {
			if !validID(id) {
				t.Fatalf("removed %q", id)
			}
		}
	})
}

func TestSyncStateUnreadableIsNone(t *testing.T) {
	for _, raw := range []string{"", "garbage", `{"h":"12a"}`, `{"h":"1","p":"a b"}`, `[]`} {
		m := &mailbox{state: func(string) string { return raw }}
		if st := m.syncState(); st != (syncState{}) {
			t.Errorf("state %q: got %+v, want none", raw, st)
		}
	}
	m := &mailbox{state: func(string) string { return `{"h":"42","l":true,"p":"17"}` }}
	if st := m.syncState(); st != (syncState{HistoryID: "42", Listing: true, PageToken: "17"}) {
		t.Errorf("got %+v", st)
	}
}
