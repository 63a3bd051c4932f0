package syncer

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
)

// scripted is a manual integration whose tasks the test writes: run is
// called for every task with the instance's Env.
type scripted struct {
	env integrations.Env
	run func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error)
}

func (s *scripted) Initialize(context.Context) error                     { return nil }
func (s *scripted) ValidateAuthentication(context.Context) (bool, error) { return true, nil }
func (s *scripted) Shutdown(context.Context) error                       { return nil }
func (s *scripted) RunTask(_ context.Context, task integrations.Task) (integrations.TaskResult, error) {
	return s.run(s.env, task)
}

// newScriptedFixture is a sync fixture whose only integration is
// "scripted", running run.
func newScriptedFixture(t *testing.T, run func(integrations.Env, integrations.Task) (integrations.TaskResult, error)) *syncFixture {
	t.Helper()
	f := newLocalFixture(t, 1)
	reg, err := integrations.NewRegistry(integrations.Definition{
		Manifest: integrations.Manifest{Domain: "scripted", DisplayName: "Scripted", Kind: integrations.KindEmail,
			AuthType: integrations.AuthManual, Fields: []integrations.Field{{Name: "box", Label: "Box", Type: integrations.FieldText}}},
		ValidateManual: func(context.Context, map[string]string, *http.Client) (integrations.Credentials, error) {
			return integrations.Credentials{}, nil
		},
		New: func(env integrations.Env) (integrations.Integration, error) {
			return &scripted{env: env, run: run}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	f.reopen()
	return f
}

func item(pid string) integrations.Item {
	return integrations.Item{ProviderID: pid, Title: "title " + pid, Text: "text of " + pid, Date: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
}

// TestProviderIDsAndRekeys: Env.ProviderIDs lists what the finished tasks
// stored, those of the batch not yet committed included; a task's
// re-keys give items new provider ids, keeping their ids and content,
// and the Indexer hears of the removals only.
func TestProviderIDsAndRekeys(t *testing.T) {
	var listed []string
	f := newScriptedFixture(t, func(env integrations.Env, task integrations.Task) (integrations.TaskResult, error) {
		switch task.Type {
		case integrations.TaskStart:
			return integrations.TaskResult{Output: []integrations.Item{item("a"), item("b")},
				Tasks: []integrations.Task{{Type: "more"}, {Type: "look"}}}, nil
		case "more": // no follow-up: its item waits in the batch
			return integrations.TaskResult{Output: []integrations.Item{item("c")}}, nil
		case "look":
			ids, err := env.ProviderIDs()
			if err != nil {
				return integrations.TaskResult{}, err
			}
			listed = slices.Sorted(slices.Values(ids))
			return integrations.TaskResult{
				Removed: []string{"b"},
				Rekeyed: []integrations.Rekey{{From: "a", To: "a2"}, {From: "zz", To: "zz2"}, {From: "c", To: "new"}},
				Output:  []integrations.Item{item("new")},
			}, nil
		}
		return integrations.TaskResult{}, integrations.ErrUnsupportedTask
	})
	ix := &recordingIndexer{}
	f.syncer.index = ix
	rec, err := f.records.Connect("u1", "scripted", integrations.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	f.runOnce()

	if want := []string{"a", "b", "c"}; !slices.Equal(listed, want) {
		t.Errorf("ProviderIDs in a task: got %q, want %q", listed, want)
	}
	byPID := map[string]string{}
	for _, it := range f.liveItems(rec.ID) {
		m, err := f.syncer.items.OpenMeta(&it)
		if err != nil {
			t.Fatal(err)
		}
		byPID[m.ProviderID] = it.ID
		if text, _ := f.syncer.items.Text(&it); m.ProviderID == "a2" && (m.Title != "title a" || text != "text of a") {
			t.Errorf("re-keyed item: title %q, text %q; want a's", m.Title, text)
		}
	}
	// c is not re-keyed to "new": the batch stores a new item of that id.
	if len(byPID) != 3 || byPID["a2"] == "" || byPID["c"] == "" || byPID["new"] == "" {
		t.Errorf("live items by provider id: got %v, want a2, c and new", byPID)
	}
	// a and b with start, c when look asked for the ids (its task had
	// finished, uncommitted), new and b's removal with look.
	var bID string
	for id, it := range ix.items {
		if it.Title == "title b" {
			bID = id
		}
	}
	if got, want := ix.take(), []string{"index u1 2", "index u1 1", "index u1 1", "remove u1 " + bID}; !slices.Equal(got, want) {
		t.Errorf("indexer calls: got %q, want %q", got, want)
	}
	if got, _ := f.syncer.items.ProviderIDs(rec.ID); len(got) != 3 {
		t.Errorf("ProviderIDs after the sync: got %q, want 3", got)
	}
	if byPID["a2"] != ix.items[byPID["a2"]].ID {
		t.Errorf("the re-keyed item's id %s is not the one indexed", byPID["a2"])
	}
}

// TestExplainedFailure: an integration's words for a failure are the
// record's lastError; what the failure does follows the error it wraps
// (here a cut connection: retried).
func TestExplainedFailure(t *testing.T) {
	f := newScriptedFixture(t, func(integrations.Env, integrations.Task) (integrations.TaskResult, error) {
		return integrations.TaskResult{}, fmt.Errorf("fetch: %w",
			&integrations.ExplainedError{Message: "the server hung up; will retry", Err: io.ErrUnexpectedEOF})
	})
	rec, err := f.records.Connect("u1", "scripted", integrations.Credentials{})
	if err != nil {
		t.Fatal(err)
	}
	f.runOnce()
	got := f.wantStatus(rec, records.StatusError, "the server hung up; will retry")
	if got.LastError != "the server hung up; will retry" {
		t.Errorf("lastError: got %q", got.LastError)
	}
	if n := f.syncer.Outcomes()["retried"]; n != 1 {
		t.Errorf("retried: got %d, want 1", n)
	}
}
