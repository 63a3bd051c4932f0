package syncer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/records"
)

// errStoreContent wraps a failure to write item content on this server.
var errStoreContent = errors.New("store item content")

// run is one worker's hold on one record: the instance built from its
// credentials and the finished tasks waiting for their commit.
type run struct {
	s    *Syncer
	rec  records.Record
	def  integrations.Definition
	log  *slog.Logger
	inst integrations.Integration

	// refreshed is set once a refresh was forced after the provider
	// refused an access token that had not expired.
	refreshed bool
	// broken is set once a commit failed: nothing more is committed;
	// brokenBy is why.
	broken   bool
	brokenBy error
	// failed is set once a task's failure was recorded on the record:
	// later successes of the session leave its error showing.
	failed bool
	// reauth and parked are set once a task ended so: the run's outcome.
	reauth, parked bool
	// mem holds the ids of the session's tasks kept in memory only
	// (idle.go): its scheduled start and the listing tasks that followed
	// from it, until a commit stores those still queued.
	mem    map[string]bool
	stored int64 // items stored by this session
	// streams marks a run built for Fetch, whose instance may stream a
	// file for longer than one request of a sync may take.
	streams bool

	mu     sync.Mutex               // Save and Known may be called from the instance's goroutines
	sealed []byte                   // the record's sealed credentials as last seen or saved
	creds  integrations.Credentials // the newest credentials, opened or refreshed
	opened bool                     // creds holds them
	kept   map[string]string        // the record's committed sync state, once read
	b      batch
}

// session runs the due tasks of one record, in order, until none is due,
// sessionTasks have run, or stop is done. Tasks run under hard.
func (s *Syncer) session(stop, hard context.Context, recordID string) {
	poll, scheduled := s.takePoll(recordID)
	rec, ok := s.records.ByID(recordID)
	if !ok || rec.Status == records.StatusNeedsReauth {
		return
	}
	queue := s.recordTasks(recordID)
	if len(queue) > 0 {
		scheduled = false // stored tasks (a user's start, downloads) come first and list anyway
	} else if scheduled {
		queue = []QueuedTask{poll}
	}
	if len(queue) == 0 || queue[0].NotBefore.After(s.now()) {
		return
	}
	s.beginCount(recordID, queue)
	r := &run{
		s: s, rec: rec, sealed: rec.Credentials,
		log: s.log.With("record_id", rec.ID, "integration", rec.Integration),
		b:   batch{seen: make(map[string]bool)},
	}
	if scheduled {
		r.mem = map[string]bool{poll.ID: true}
	}
	defer r.shutdown(hard)
	defer func() {
		if r.broken {
			s.rest(recordID, r.brokenBy)
		}
		s.outcomesOf(rec.Integration).runs[r.outcome()].Add(1)
	}()
	if err := r.open(hard, false); err != nil {
		r.fail(hard, queue[0], err)
		return
	}
	ran, queue := r.runQueue(stop, hard, queue)
	if ran > 0 {
		r.flush(len(queue) == 0)
	}
	if r.stored > 0 {
		r.log.Info("items synced", "items", r.stored, "tasks", ran, "pending", len(queue))
	}
}

// runQueue runs the queue's due tasks in order, batching what they
// stage, until none is due, sessionTasks have run, stop is done or the
// run broke; it returns how many ran and the tasks left.
func (r *run) runQueue(stop, hard context.Context, queue []QueuedTask) (ran int, left []QueuedTask) {
	for len(queue) > 0 && ran < sessionTasks && stop.Err() == nil && !r.broken {
		t := queue[0]
		if t.NotBefore.After(r.s.now()) {
			break
		}
		res, err := r.runTask(hard, t)
		ran++
		if err != nil {
			var ae *integrations.APIError
			if errors.As(err, &ae) && ae.Unauthorized() && !r.refreshed && r.def.OAuth != nil {
				// The provider refused an access token that had not
				// expired (revoked, or rotated elsewhere): refresh once
				// and run the task again before giving up on it.
				if r.flush(false) != nil {
					break
				}
				if err = r.open(hard, true); err == nil {
					continue
				}
				r.fail(hard, t, err) // without an instance, the session ends here
				break
			}
			if r.flush(false) != nil {
				break
			}
			if r.failKeeping(hard, t, err, res.State) {
				break
			}
			queue = queue[1:]
			continue
		}
		if r.staged(res.Removed) && r.flush(false) != nil {
			break // an item staged in this batch is removed: store it first
		}
		follow, err := r.stage(t, res)
		if err != nil {
			r.discard()
			r.fail(hard, t, err)
			break
		}
		r.s.outcomesOf(r.rec.Integration).ok.Add(1)
		queue = append(queue[1:], follow...)
		if r.keepInMemory(t, follow) || len(r.b.done) >= batchTasks || r.b.bytes >= batchBytes {
			r.flush(len(queue) == 0)
		}
	}
	return ran, queue
}

// outcome says how the run ended, one of runOutcomes.
func (r *run) outcome() int {
	switch {
	case r.broken || r.parked:
		return runInterrupted
	case r.reauth:
		return runReauth
	case r.failed:
		return runError
	}
	return runOK
}

// open builds the record's instance and initializes it, which refreshes
// an access token about to expire. With force it makes the instance
// refresh the token whatever its expiry says.
func (r *run) open(ctx context.Context, force bool) error {
	r.shutdown(ctx)
	def, ok := r.s.cfg.Registry.Get(r.rec.Integration)
	if !ok {
		return fmt.Errorf("integration %q is not in this build: %w", r.rec.Integration, integrations.ErrUnsupportedTask)
	}
	r.def = def
	if force {
		r.refreshed = true
	}
	r.mu.Lock()
	if !r.opened {
		creds, err := r.s.records.Credentials(r.rec)
		if err != nil {
			r.mu.Unlock()
			return fmt.Errorf("open credentials: %w", err)
		}
		r.creds, r.opened = creds, true
	}
	creds := r.creds
	r.mu.Unlock()
	if force {
		if creds.RefreshToken == "" {
			return fmt.Errorf("access token refused: %w", integrations.ErrReauthRequired)
		}
		creds.ExpiresAt = r.s.now().Add(-time.Second)
	}
	env := integrations.Env{Credentials: creds, Client: r.s.cfg.Client, Now: r.s.now, Save: r.save, Known: r.known,
		State: r.stateValue, ProviderIDs: r.providerIDs}
	if def.OAuth == nil {
		env.Client = r.s.cfg.ManualClient // a target the user chose
	}
	if r.streams && env.Client != nil {
		// A download streams for as long as the file takes; the
		// client's bound on a whole request would cut a large one.
		// Fetch bounds the wait for the answer instead.
		c := *env.Client
		c.Timeout = 0
		env.Client = &c
	}
	if def.OAuth != nil {
		p, err := oauthclient.NewProvider(def, r.s.cfg.Getenv, r.s.cfg.Client)
		if err != nil {
			return err
		}
		p.Now = r.s.now
		env.Provider = p
	}
	inst, err := safeNew(def, env)
	if err != nil {
		return err
	}
	r.inst = inst
	ctx, cancel := context.WithTimeout(ctx, taskTimeout)
	defer cancel()
	return r.guard("initialize", func() error { return inst.Initialize(ctx) })
}

func safeNew(def integrations.Definition, env integrations.Env) (inst integrations.Integration, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("build %s instance: panic: %v", def.Manifest.Domain, p)
		}
	}()
	inst, err = def.New(env)
	if err == nil && inst == nil {
		err = fmt.Errorf("build %s instance: %w", def.Manifest.Domain, integrations.ErrUnsupportedTask)
	}
	return inst, err
}

// guard runs fn, turning a panic in an integration into an error, so that
// one provider's bug does not take the service down.
func (r *run) guard(what string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			r.log.Error("integration panicked", "in", what, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("%s panicked", what)
		}
	}()
	return fn()
}

func (r *run) runTask(ctx context.Context, t QueuedTask) (res integrations.TaskResult, err error) {
	ctx, cancel := context.WithTimeout(ctx, taskTimeout)
	defer cancel()
	task, err := r.s.task(&t)
	if err != nil {
		return integrations.TaskResult{}, err
	}
	err = r.guard("task "+t.Type, func() error {
		var err error
		res, err = r.inst.RunTask(ctx, task)
		return err
	})
	return res, err
}

// shutdown releases the instance, if any.
func (r *run) shutdown(ctx context.Context) {
	if r.inst == nil {
		return
	}
	inst := r.inst
	r.inst = nil
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := r.guard("shutdown", func() error { return inst.Shutdown(ctx) }); err != nil {
		r.log.Warn("shutdown integration", "err", err)
	}
}

// save stores credentials the instance refreshed, sealed to the record,
// unless the record's credentials changed since this run read them: a
// reconnect during a sync must not be overwritten with the old grant.
func (r *run) save(_ context.Context, c integrations.Credentials) error {
	sealed, err := r.s.records.SealCredentials(&r.rec, c)
	if err != nil {
		return fmt.Errorf("seal credentials: %w", err)
	}
	r.mu.Lock()
	prev := r.sealed
	r.mu.Unlock()
	err = r.s.commitFor(r.rec.ID, r.s.records.RefreshedOp(r.rec.ID, prev, sealed, r.s.now()))
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.sealed, r.creds = sealed, c
	r.mu.Unlock()
	return nil
}

// known reports whether the record holds, or this batch stages, the item
// with providerID.
func (r *run) known(providerID string) bool {
	r.mu.Lock()
	seen := r.b.seen[providerID]
	r.mu.Unlock()
	if seen {
		return true
	}
	return r.s.items.Known(r.rec.ID, providerID)
}

// breakOn marks the session broken by err (the first such error is kept):
// nothing more is committed, and the record rests when the session ends.
func (r *run) breakOn(err error) {
	if !r.broken {
		r.brokenBy = err
	}
	r.broken = true
}
