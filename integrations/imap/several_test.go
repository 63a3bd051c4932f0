package imap_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/records"
)

// TestSeveralMailboxes: one user connects several mailboxes, each its
// own record with its own label, named by its host without one, each
// saying its source (the username at the host) and never its password;
// at most 10; a Reconnect names its record and updates that one only;
// a label longer than 64 characters is a field error.
func TestSeveralMailboxes(t *testing.T) {
	srv := imaptest.New(t)
	fill(srv, "INBOX", 0, 2)
	f := newE2E(t, srv, imap.Dialer{})
	const path = "/v1/user-integrations/imap/credentials"
	withLabel := func(label string) map[string]any {
		form := f.form(imaptest.Password)
		if label != "" {
			form["fields"].(map[string]any)["label"] = label
		}
		return form
	}
	host := srv.Host + ":" + srv.Port
	source := imaptest.Username + " on " + host

	status, body := f.do("POST", path, withLabel("Work mail"))
	work := body["result"].(map[string]any)
	if status != http.StatusCreated || work["label"] != "Work mail" || work["source"] != source {
		t.Fatalf("first mailbox: got %d %v, want 201 labelled Work mail from %q", status, body, source)
	}
	status, body = f.do("POST", path, withLabel(""))
	home := body["result"].(map[string]any)
	if status != http.StatusCreated || home["id"] == work["id"] || home["label"] != host || home["source"] != source {
		t.Fatalf("second mailbox: got %d %v, want 201, a second record named %q", status, body, host)
	}
	for _, id := range []any{work["id"], home["id"]} {
		_, got := f.do("GET", "/v1/user-integrations/"+fmt.Sprint(id), nil)
		if b, _ := json.Marshal(got); strings.Contains(string(b), imaptest.Password) {
			t.Errorf("record %v shows the password: %s", id, b)
		}
	}
	if n := len(f.recs.ForUser("u1")); n != 2 {
		t.Errorf("records: got %d, want 2", n)
	}
	// Each syncs into its own items; the label does not reach the login.
	f.runOnce()
	for _, id := range []any{work["id"], home["id"]} {
		if n := len(f.live(fmt.Sprint(id))); n != 2 {
			t.Errorf("record %v: %d items, want 2", id, n)
		}
		f.wantView(fmt.Sprint(id), records.StatusConnected, 2, "", true)
	}

	// A Reconnect names its record: that one is updated, 200.
	form := withLabel("Work, again")
	form["recordId"] = work["id"]
	status, body = f.do("POST", path, form)
	if res, _ := body["result"].(map[string]any); status != http.StatusOK || res["id"] != work["id"] || res["label"] != "Work, again" {
		t.Errorf("reconnect: got %d %v, want 200 on %v relabelled", status, body, work["id"])
	}
	form["recordId"] = "0d9f4c8e-4b1c-4a43-9d5e-1f2a3b4c5d6e"
	status, body = f.do("POST", path, form)
	if e, _ := body["error"].(map[string]any); status != http.StatusNotFound || e["code"] != "integration_record_not_found" || e["message"] != "integration record not found" {
		t.Errorf("reconnect of an unknown record: got %d %v, want 404", status, body)
	}

	// A label past 64 characters.
	status, body = f.do("POST", path, withLabel(strings.Repeat("é", 65)))
	if e, _ := body["error"].(map[string]any); status != http.StatusBadRequest ||
		fmt.Sprint(e["details"]) != "[map[field:fields.label message:must be at most 64 characters, on one line]]" {
		t.Errorf("long label: got %d %v", status, body)
	}

	// Up to 10 mailboxes; the 11th is refused, and nothing is stored.
	for i := 3; i <= 10; i++ {
		if status, body := f.do("POST", path, withLabel(fmt.Sprint("Box ", i))); status != http.StatusCreated {
			t.Fatalf("mailbox %d: got %d %v, want 201", i, status, body)
		}
	}
	status, body = f.do("POST", path, withLabel("Box 11"))
	e, _ := body["error"].(map[string]any)
	if status != http.StatusConflict || e["code"] != "too_many_connections" || e["message"] != "at most 10 connections of IMAP mailbox; disconnect one first" {
		t.Errorf("11th mailbox: got %d %v, want 409 too_many_connections", status, body)
	}
	n := 0
	for _, r := range f.recs.ForUser("u1") {
		if r.Status == records.StatusConnected {
			n++
		}
	}
	if n != 10 {
		t.Errorf("records after the 11th: got %d connected, want 10", n)
	}
}
