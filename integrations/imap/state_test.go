package imap

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	"searchsvc/integrations"
)

// TestFolderDoneKeepsState: folderDone gives the folder's state as the
// task's sync state, committed with its batch, and saves nothing in the
// credentials.
func TestFolderDoneKeepsState(t *testing.T) {
	m := &mailbox{creds: integrations.Credentials{Fields: map[string]string{"host": "h"}}, save: func(context.Context, integrations.Credentials) error {
		t.Fatal("folderDone saved the credentials")
		return nil
	}}
	st := FolderState{Name: "INBOX", UIDValidity: 7, UIDNext: 12, HighestUID: 11}
	b, _ := json.Marshal(st)
	res, err := m.RunTask(context.Background(), integrations.Task{Type: TaskFolderDone, Payload: map[string]string{payloadState: string(b)}})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.State, map[string]string{"folder:INBOX": string(b)}; !maps.Equal(got, want) {
		t.Errorf("state: got %v, want %v", got, want)
	}
	m.kept = func(k string) string { return res.State[k] }
	if got := m.state("INBOX"); got != st {
		t.Errorf("state read back: got %+v, want %+v", got, st)
	}
}

// TestMigrateStates: folder states that earlier versions kept in the
// credentials leave them in one save and become kept state, unless a
// kept state is already there.
func TestMigrateStates(t *testing.T) {
	inbox, _ := json.Marshal(FolderState{Name: "INBOX", UIDValidity: 7})
	arch, _ := json.Marshal(FolderState{Name: "Archive", UIDValidity: 8})
	var saves []integrations.Credentials
	m := &mailbox{
		creds: integrations.Credentials{Fields: map[string]string{"host": "h", "state:INBOX": string(inbox), "state:Archive": string(arch)}},
		save: func(_ context.Context, c integrations.Credentials) error {
			saves = append(saves, c)
			return nil
		},
		kept: func(k string) string {
			if k == "folder:Archive" {
				return "newer"
			}
			return ""
		},
	}
	got, err := m.migrateStates(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"folder:INBOX": string(inbox)}; !maps.Equal(got, want) {
		t.Errorf("migrated: got %v, want %v", got, want)
	}
	if len(saves) != 1 || !maps.Equal(saves[0].Fields, map[string]string{"host": "h"}) {
		t.Fatalf("saves: got %v, want one of the host only", saves)
	}
	if got, err := m.migrateStates(context.Background()); err != nil || got != nil || len(saves) != 1 {
		t.Errorf("second migration: got %v, %v, %d saves; want nothing", got, err, len(saves))
	}
}
