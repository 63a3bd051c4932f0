package imap

import (
	"context"
	"encoding/json"
	"maps"
	"testing"

	"searchsvc/integrations"
)

// TestFolderDoneKeepsState: folderDone gives the folder's state as the
// task's sync state, committed with its batch (the mailbox cannot save
// the credentials: TestSyncerIMAP checks they stay as connected).
func TestFolderDoneKeepsState(t *testing.T) {
	m := &mailbox{}
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
