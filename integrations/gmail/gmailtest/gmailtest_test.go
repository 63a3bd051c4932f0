package gmailtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// The fake answers as Gmail does: these tests hold it to that, since the
// sync's tests trust it.

func (s *Server) call(t *testing.T, path, token string) (int, map[string]any, http.Header) {
	t.Helper()
	req, err := http.NewRequest("GET", s.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	json.NewDecoder(resp.Body).Decode(&body)
	return resp.StatusCode, body, resp.Header
}

func TestHistoryChecks(t *testing.T) {
	s := New(t, Options{Messages: 3})
	start := strconv.FormatUint(s.HistoryID(), 10)
	s.Add(2)
	s.Delete(1)
	tests := []struct {
		name, path, token string
		status            int
		records           int
		next              bool
	}{
		{"no token", "/gmail/v1/users/me/history?startHistoryId=" + start, "", 401, 0, false},
		{"wrong token", "/gmail/v1/users/me/history?startHistoryId=" + start, "nope", 401, 0, false},
		{"no startHistoryId", "/gmail/v1/users/me/history", s.AccessToken, 400, 0, false},
		{"startHistoryId not a number", "/gmail/v1/users/me/history?startHistoryId=abc", s.AccessToken, 400, 0, false},
		{"startHistoryId before the history kept", "/gmail/v1/users/me/history?startHistoryId=5", s.AccessToken, 404, 0, false},
		{"unknown historyTypes", "/gmail/v1/users/me/history?startHistoryId=" + start + "&historyTypes=everything", s.AccessToken, 400, 0, false},
		{"all changes", "/gmail/v1/users/me/history?startHistoryId=" + start, s.AccessToken, 200, 3, false},
		{"only deletions", "/gmail/v1/users/me/history?startHistoryId=" + start + "&historyTypes=messageDeleted", s.AccessToken, 200, 1, false},
		{"paged", "/gmail/v1/users/me/history?startHistoryId=" + start + "&maxResults=2", s.AccessToken, 200, 2, true},
		{"bad page token", "/gmail/v1/users/me/history?startHistoryId=" + start + "&pageToken=x", s.AccessToken, 400, 0, false},
		{"deleted message", "/gmail/v1/users/me/messages/" + ID(1) + "?format=raw", s.AccessToken, 404, 0, false},
		{"bad list page token", "/gmail/v1/users/me/messages?pageToken=x", s.AccessToken, 400, 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body, _ := s.call(t, tc.path, tc.token)
			if status != tc.status {
				t.Fatalf("status: got %d, want %d (%v)", status, tc.status, body)
			}
			if status != 200 {
				e, _ := body["error"].(map[string]any)
				if e == nil || e["code"] != float64(status) {
					t.Errorf("error body: got %v, want Google's error shape with code %d", body, status)
				}
				return
			}
			h, _ := body["history"].([]any)
			_, next := body["nextPageToken"]
			if len(h) != tc.records || next != tc.next || body["historyId"] != strconv.FormatUint(s.HistoryID(), 10) {
				t.Errorf("got %d records, next %v, historyId %v; want %d, %v, %d", len(h), next, body["historyId"], tc.records, tc.next, s.HistoryID())
			}
		})
	}

	// The page token continues where the page stopped.
	_, body, _ := s.call(t, "/gmail/v1/users/me/history?startHistoryId="+start+"&maxResults=2", s.AccessToken)
	_, rest, _ := s.call(t, "/gmail/v1/users/me/history?startHistoryId="+start+"&maxResults=2&pageToken="+body["nextPageToken"].(string), s.AccessToken)
	if h, _ := rest["history"].([]any); len(h) != 1 || h[0].(map[string]any)["messagesDeleted"] == nil {
		t.Errorf("second page: got %v, want the deletion", rest)
	}
}

func TestFaults(t *testing.T) {
	s := New(t, Options{Messages: 1})
	s.Fail(1, 429, "30")
	s.Fail(1, 503, "")
	status, _, h := s.call(t, "/gmail/v1/users/me/profile", s.AccessToken)
	if status != 429 || h.Get("Retry-After") != "30" {
		t.Errorf("first: got %d Retry-After %q, want 429 and 30", status, h.Get("Retry-After"))
	}
	if status, _, _ := s.call(t, "/gmail/v1/users/me/history?startHistoryId=1001", s.AccessToken); status != 503 {
		t.Errorf("second: got %d, want 503", status)
	}
	status, body, _ := s.call(t, "/gmail/v1/users/me/profile", s.AccessToken)
	if status != 200 || body["historyId"] != "1001" {
		t.Errorf("profile: got %d %v, want 200 and historyId 1001", status, body)
	}
	if c := s.Counts(); c != (Counts{Profiles: 2, Histories: 1}) {
		t.Errorf("counts: got %+v", c)
	}
}

func TestListOrderIsByDate(t *testing.T) {
	s := New(t, Options{Messages: 5})
	seq := s.AddDated(Date(2).Add(-30 * time.Second))
	s.Delete(4)
	_, body, _ := s.call(t, "/gmail/v1/users/me/messages?maxResults=3", s.AccessToken)
	_, rest, _ := s.call(t, "/gmail/v1/users/me/messages?maxResults=3&pageToken="+body["nextPageToken"].(string), s.AccessToken)
	var got []string
	for _, page := range []map[string]any{body, rest} {
		for _, m := range page["messages"].([]any) {
			got = append(got, m.(map[string]any)["id"].(string))
		}
	}
	want := []string{ID(5), ID(3), ID(2), ID(seq), ID(1)}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
