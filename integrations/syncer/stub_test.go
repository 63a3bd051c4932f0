package syncer

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
)

// A scripted integration: each task type maps to what it returns, and
// what the instance saw of the sync state is noted.

type stubScript struct {
	mu     sync.Mutex
	run    func(env integrations.Env, t integrations.Task) (integrations.TaskResult, error)
	states []string // Env.State("s") as each task saw it
}

func (s *stubScript) definition() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{Domain: "stub", DisplayName: "Stub Mail", Kind: integrations.KindEmail, AuthType: integrations.AuthManual,
			Fields: []integrations.Field{{Name: "x", Label: "X", Type: integrations.FieldText}}},
		ValidateManual: func(context.Context, map[string]string, *http.Client) (integrations.Credentials, error) {
			return integrations.Credentials{}, nil
		},
		New: func(env integrations.Env) (integrations.Integration, error) {
			return &stubInstance{s: s, env: env}, nil
		},
	}
}

type stubInstance struct {
	s   *stubScript
	env integrations.Env
}

func (i *stubInstance) Initialize(context.Context) error                     { return nil }
func (i *stubInstance) ValidateAuthentication(context.Context) (bool, error) { return true, nil }
func (i *stubInstance) Shutdown(context.Context) error                       { return nil }
func (i *stubInstance) RunTask(_ context.Context, t integrations.Task) (integrations.TaskResult, error) {
	i.s.mu.Lock()
	i.s.states = append(i.s.states, t.Type+"="+i.env.State("s"))
	i.s.mu.Unlock()
	return i.s.run(i.env, t)
}

func (s *stubScript) seen() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.states
	s.states = nil
	return out
}

func newStubFixture(t *testing.T, s *stubScript) (*syncFixture, records.Record) {
	t.Helper()
	f := newLocalFixture(t, 1)
	reg, err := integrations.NewRegistry(s.definition())
	if err != nil {
		t.Fatal(err)
	}
	f.reg = reg
	f.reopen()
	rec, err := f.records.Connect("u1", "stub", integrations.Credentials{Fields: map[string]string{"x": "y"}})
	if err != nil {
		t.Fatal(err)
	}
	return f, rec
}

func TestUnsupportedTaskIsLoud(t *testing.T) {
	s := &stubScript{run: func(env integrations.Env, t integrations.Task) (integrations.TaskResult, error) {
		return integrations.TaskResult{}, fmt.Errorf("stub task %q: %w", t.Type, integrations.ErrUnsupportedTask)
	}}
	f, rec := newStubFixture(t, s)
	f.runOnce()
	f.wantStatus(rec, records.StatusError, "This version of searchsvc cannot run a step of the Stub Mail sync. This is a bug: please report it.")
	logs := f.logs.String()
	if !strings.Contains(logs, "level=ERROR") || !strings.Contains(logs, "task type not supported by this build") || strings.Contains(logs, "task dropped") {
		t.Errorf("log: got\n%s\nwant an error line, not a dropped task", logs)
	}
	if n := f.syncer.Pending(rec.ID); n != 0 {
		t.Errorf("pending: got %d, want the task gone", n)
	}
}

func TestNextSyncFailureStaysShown(t *testing.T) {
	s := &stubScript{run: func(env integrations.Env, t integrations.Task) (integrations.TaskResult, error) {
		switch t.Type {
		case integrations.TaskStart:
			return integrations.TaskResult{Tasks: []integrations.Task{{Type: "one"}, {Type: "two"}, {Type: "three"}}}, nil
		case "two":
			return integrations.TaskResult{}, fmt.Errorf("%w: %w", integrations.ErrNextSync,
				&integrations.ValidationError{Message: "the feed number 2 of 3 could not be fetched"})
		}
		return integrations.TaskResult{Output: []integrations.Item{{ProviderID: t.Type, Title: t.Type}}}, nil
	}}
	f, rec := newStubFixture(t, s)
	f.runOnce()
	got := f.wantStatus(rec, records.StatusError, "Stub Mail: the feed number 2 of 3 could not be fetched. The next sync tries again.")
	if got.ItemsSynced != 2 || got.LastSyncAt == nil || f.syncer.Pending(rec.ID) != 0 {
		t.Errorf("record: itemsSynced %d, lastSyncAt %v, pending %d; want the 2 others stored, the sync over", got.ItemsSynced, got.LastSyncAt, f.syncer.Pending(rec.ID))
	}
}

func TestActivity(t *testing.T) {
	block := make(chan struct{})
	s := &stubScript{run: func(env integrations.Env, t integrations.Task) (integrations.TaskResult, error) {
		switch t.Type {
		case integrations.TaskStart:
			return integrations.TaskResult{Tasks: []integrations.Task{{Type: "downloadX"}, {Type: "downloadY"}, {Type: "getList"}}}, nil
		case "getList":
			return integrations.TaskResult{}, &integrations.APIError{Status: 503, RetryAfter: time.Hour}
		}
		<-block
		return integrations.TaskResult{}, nil
	}}
	f, rec := newStubFixture(t, s)
	if a := f.syncer.Activity(rec.ID); a != (Activity{State: ActivityIdle}) {
		t.Errorf("before: got %+v, want idle", a)
	}
	// Queue the three tasks as a start would, then look.
	close(block)
	f.runOnce()
	a := f.syncer.Activity(rec.ID)
	if a.State != ActivityWaiting || a.Pending != 1 || a.ItemsLeft != 0 || !a.RetryAt.Equal(f.clock.Now().Add(time.Hour)) {
		t.Errorf("after a 503: got %+v, want waiting an hour with the listing task pending", a)
	}
	f.clock.Advance(2 * time.Hour)
	if a := f.syncer.Activity(rec.ID); a.State != ActivityListing {
		t.Errorf("retry due: got %+v, want listing", a)
	}
}

// TestTaskSeesSyncState: a task sees through Env.State what the task
// before it returned, in the same sync, sealed in the log; after a
// restart the next sync starts from what was stored.
func TestTaskSeesSyncState(t *testing.T) {
	s := &stubScript{run: func(env integrations.Env, t integrations.Task) (integrations.TaskResult, error) {
		switch t.Type {
		case integrations.TaskStart:
			return integrations.TaskResult{State: map[string]string{"s": "cursor-secret-1"}, Tasks: []integrations.Task{{Type: "next"}}}, nil
		case "next":
			return integrations.TaskResult{State: map[string]string{"s": env.State("s") + "+next"},
				Output: []integrations.Item{{ProviderID: "a", Title: "A", Link: "https://x.example/a"}}}, nil
		}
		return integrations.TaskResult{}, integrations.ErrUnsupportedTask
	}}
	f, rec := newStubFixture(t, s)
	f.runOnce()
	if got, want := strings.Join(s.seen(), " "), "start= next=cursor-secret-1"; got != want {
		t.Errorf("states seen: got %q, want %q (a task sees what the one before it returned)", got, want)
	}
	f.wantStatus(rec, records.StatusConnected, "")
	f.assertNothingPlain("cursor-secret-1", "https://x.example/a")

	f.reopen()
	f.clock.Advance(syncPoll)
	f.runOnce()
	if got, want := strings.Join(s.seen(), " "), "start=cursor-secret-1+next next=cursor-secret-1"; got != want {
		t.Errorf("after a restart: got %q, want %q", got, want)
	}
}
