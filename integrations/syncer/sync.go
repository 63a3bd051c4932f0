// Package syncer runs the integrations' tasks: the task queue (the main
// store's "tasks" table, see Tasks), the scheduler and its workers, the
// batches that store what tasks produce, the failure classes that decide
// what a failed task does to its record, and the start-up sweep. It
// changes records through records' ops and items through the item store,
// both given to it, and tells an optional Indexer about every item stored
// or removed.
package syncer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// Defaults of SyncConfig.
const (
	DefaultPollInterval  = 15 * time.Minute
	DefaultSyncWorkers   = 2
	DefaultShutdownGrace = 10 * time.Second
)

// defaultTimeout bounds each outbound request of a Syncer built without
// an HTTP client.
const defaultTimeout = 30 * time.Second

// Limits of a sync session: how long one worker keeps one record before
// the others get their turn, and how long one task may run.
const (
	sessionTasks = 500
	taskTimeout  = 5 * time.Minute
	// maxWait bounds the scheduler's sleep, so that a clock that jumps
	// (a Pi that syncs NTP late) is noticed within a minute.
	maxWait = time.Minute
	// disconnectHold is how long a disconnect in progress holds back a
	// record's commits if the disconnect itself never lands.
	disconnectHold = time.Minute
)

// Config configures a Syncer.
type Config struct {
	// Records, Items and Tasks are the tables the syncer changes. They
	// live on one store, so that a batch commits a record's progress, its
	// items and its next tasks in one log line.
	Records  *records.Records
	Items    *items.Store
	Tasks    *Tasks
	Registry *integrations.Registry
	// Getenv reads the OAuth client configuration (<P>_OAUTH_CLIENT_ID…).
	Getenv func(string) string
	// Client makes the integrations' outbound requests. Nil: a client
	// with a 30-second timeout.
	Client *http.Client
	// ManualClient makes the requests of manual integrations (a feed URL
	// a user typed); nil: Client. Production passes a client that cannot
	// reach the server's own network (a netguard.Dialer's Client).
	ManualClient *http.Client
	// PollInterval is the time between two runs of a connected record
	// (POLL_INTERVAL). 0: DefaultPollInterval.
	PollInterval time.Duration
	// Workers is how many records sync at once (SYNC_WORKERS); each runs
	// one task at a time. 0: DefaultSyncWorkers.
	Workers int
	// ShutdownGrace is how long in-flight tasks may finish once Run's
	// context is done; then they are cancelled and stay queued. 0:
	// DefaultShutdownGrace.
	ShutdownGrace time.Duration
	// Now is the clock. Nil: time.Now.
	Now func() time.Time
	// Rand returns a uniform number in [0, n), for backoff jitter. Nil:
	// crypto/rand.
	Rand func(n int64) int64
	// Logger receives the syncer's events. Nil: discard.
	Logger *slog.Logger
	// Indexer is told about every item stored or removed (see Indexer).
	// Nil: no index.
	Indexer Indexer
}

// Syncer runs the integrations' tasks: it schedules a start for every
// connected record each PollInterval, runs the tasks and their follow-ups
// with a small pool of workers, stores the items they produce, and keeps
// each record's status, lastError, lastSyncAt and itemsSynced.
//
// Its queue is the main store's tasks table, so a restart resumes where it
// stopped. A record's tasks run one at a time on one worker, which also
// does any token refresh they need: a refresh never races a task, or
// another refresh, of the same record.
type Syncer struct {
	cfg     Config
	records *records.Records
	st      *storage.Store
	vault   *vault.Vault // seals the tasks' payloads and the kept values
	tasks   *storage.Table[QueuedTask]
	state   *storage.Table[stateRow]
	items   *items.Store
	index   Indexer
	log     *slog.Logger
	now     func() time.Time
	rand    func(int64) int64
	wake    chan struct{}

	seqMu     sync.Mutex
	seq       int64
	seqLoaded bool

	mu      sync.Mutex
	started bool
	busy    map[string]bool  // records a worker holds
	served  map[string]int64 // when each record was last handed to a worker, in dispatches
	turns   int64
	gates   map[string]*sync.Mutex // per record: held while its sync commits
	closing map[string]time.Time   // records being disconnected, since when
	resting map[string]rest        // records whose last session broke
	// totals counts, per record with a sync under way, the items its
	// sync queued for download (Activity.ItemsTotal); memory only.
	totals map[string]int
	// polls are the scheduled starts not yet taken by a session, and
	// idle the times of idle polls not yet on disk (idle.go); memory only.
	polls map[string]QueuedTask
	idle  map[string]idleSync

	// outcomes are by integration domain, fixed at New, so read without
	// a lock; unknown counts the tasks of records whose integration is not
	// in this build.
	outcomes map[string]*taskOutcomes
	unknown  taskOutcomes
}

// taskOutcomes counts one integration's tasks by how they ended, and its
// sync runs (sessions) by runOutcomes.
type taskOutcomes struct {
	ok, retried, dropped, skipped, reauth, parked atomic.Int64
	runs                                          [len(runOutcomes)]atomic.Int64
}

// runOutcomes are how a sync run (one session of a record) ends: every
// task it ran finished; a task's failure became the record's error; the
// provider refused the authorization; or shutdown or a failed commit
// stopped it, to resume later.
var runOutcomes = [...]string{"ok", "error", "reauth", "interrupted"}

const (
	runOK = iota
	runError
	runReauth
	runInterrupted
)

func (o *taskOutcomes) add(to map[string]int64) {
	to["ok"] += o.ok.Load()
	to["retried"] += o.retried.Load()
	to["dropped"] += o.dropped.Load()
	to["skipped"] += o.skipped.Load()
	to["reauth"] += o.reauth.Load()
	to["parked"] += o.parked.Load()
}

// RunsByIntegration counts the sync runs of each integration of the
// registry, by domain and by how they ended: ok, error (a task's failure
// is the record's error), reauth, interrupted (by shutdown or a failed
// commit). Every domain and outcome is present.
func (s *Syncer) RunsByIntegration() map[string]map[string]int64 {
	out := make(map[string]map[string]int64, len(s.outcomes))
	for d, o := range s.outcomes {
		m := make(map[string]int64, len(runOutcomes))
		for i, k := range runOutcomes {
			m[k] = o.runs[i].Load()
		}
		out[d] = m
	}
	return out
}

// outcomesOf returns the counters of domain's tasks.
func (s *Syncer) outcomesOf(domain string) *taskOutcomes {
	if o, ok := s.outcomes[domain]; ok {
		return o
	}
	return &s.unknown
}

// Outcomes counts the tasks run since start by how they ended: ok,
// retried (failed, will run again), dropped (failed for good), skipped
// (the item is gone), reauth (the record needs reconnecting), parked
// (stopped by shutdown, resumed at the next start).
func (s *Syncer) Outcomes() map[string]int64 {
	out := make(map[string]int64, 6)
	s.unknown.add(out)
	for _, o := range s.outcomes {
		o.add(out)
	}
	return out
}

// OutcomesByIntegration is Outcomes for each integration of the registry,
// by domain: every domain and outcome is present, zero or not. Tasks of
// records whose integration is not in this build count only in Outcomes.
func (s *Syncer) OutcomesByIntegration() map[string]map[string]int64 {
	out := make(map[string]map[string]int64, len(s.outcomes))
	for d, o := range s.outcomes {
		m := make(map[string]int64, 6)
		o.add(m)
		out[d] = m
	}
	return out
}

// New returns the syncer of the tables in cfg. It may be built before
// or after their store opens; start it with Run once the store is open.
func New(cfg Config) (*Syncer, error) {
	if cfg.Records == nil || cfg.Items == nil || cfg.Tasks == nil || cfg.Registry == nil {
		return nil, errors.New("sync: Records, Items, Tasks and Registry are required")
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: defaultTimeout}
	}
	if cfg.ManualClient == nil {
		cfg.ManualClient = cfg.Client
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.Workers <= 0 {
		cfg.Workers = DefaultSyncWorkers
	}
	if cfg.ShutdownGrace <= 0 {
		cfg.ShutdownGrace = DefaultShutdownGrace
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Rand == nil {
		cfg.Rand = cryptoRand
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	outcomes := make(map[string]*taskOutcomes)
	for _, m := range cfg.Registry.List() {
		outcomes[m.Domain] = new(taskOutcomes)
	}
	return &Syncer{
		outcomes: outcomes,
		cfg:      cfg,
		records:  cfg.Records,
		st:       cfg.Tasks.st,
		vault:    cfg.Tasks.vault,
		tasks:    cfg.Tasks.tasks,
		state:    cfg.Tasks.state,
		items:    cfg.Items,
		index:    cfg.Indexer,
		log:      log,
		now:      cfg.Now,
		rand:     cfg.Rand,
		wake:     make(chan struct{}, 1),
		busy:     make(map[string]bool),
		served:   make(map[string]int64),
		gates:    make(map[string]*sync.Mutex),
		closing:  make(map[string]time.Time),
		resting:  make(map[string]rest),
		totals:   make(map[string]int),
		polls:    make(map[string]QueuedTask),
		idle:     make(map[string]idleSync),
	}, nil
}

// Items is the item store the syncer fills (Config.Items).
func (s *Syncer) Items() *items.Store { return s.items }

// ErrNeedsReauth is returned by SyncNow for a record whose authorization
// was refused: the user must connect it again before it can sync. The
// error returned is a *NeedsReauthError, which names the integration.
var ErrNeedsReauth = errors.New("integration needs to be reconnected")

// NeedsReauthError is ErrNeedsReauth for one integration.
type NeedsReauthError struct{ Integration string }

func (e *NeedsReauthError) Error() string { return e.Integration + ": " + ErrNeedsReauth.Error() }

// Is makes errors.Is(err, ErrNeedsReauth) true.
func (e *NeedsReauthError) Is(target error) bool { return target == ErrNeedsReauth }

// SyncNow queues a start for the user's live record now, unless it has
// tasks pending already, and wakes the scheduler. Another user's record
// is records.ErrNotFound.
func (s *Syncer) SyncNow(userID, recordID string) error {
	rec, err := s.records.Get(userID, recordID)
	if err != nil {
		return err
	}
	if rec.Status == records.StatusNeedsReauth {
		return &NeedsReauthError{Integration: rec.Integration}
	}
	defer s.signal()
	// Asked for by a person: a rest after a broken session does not hold
	// it back (if the cause is still there, the session breaks and rests
	// again).
	s.endRest(recordID)
	if s.Pending(recordID) > 0 {
		return nil
	}
	return s.queueStart(rec)
}

// Connected queues a first sync of a record that was just connected or
// reconnected (by the manual form or the OAuth callback).
func (s *Syncer) Connected(rec records.Record) {
	if err := s.SyncNow(rec.UserID, rec.ID); err != nil {
		s.log.Warn("queue first sync", "record_id", rec.ID, "err", err)
	}
}

// Pending returns the number of tasks queued for the record.
func (s *Syncer) Pending(recordID string) int {
	return len(s.tasks.Find(taskIndexRecord, recordID))
}

// queueStart inserts a start task for rec. A start already queued is not
// an error.
func (s *Syncer) queueStart(rec records.Record) error {
	t, err := s.newTask(&rec, integrations.Task{Type: integrations.TaskStart}, s.now())
	if err != nil {
		return err
	}
	err = s.st.Commit(s.tasks.Insert(t))
	if errors.Is(err, storage.ErrUnique) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("queue sync: %w", err)
	}
	return nil
}

// gate returns the lock held while the record's sync commits.
func (s *Syncer) gate(recordID string) *sync.Mutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	g := s.gates[recordID]
	if g == nil {
		g = new(sync.Mutex)
		s.gates[recordID] = g
	}
	return g
}

// commitFor commits ops of the record's sync, unless the record is being
// disconnected.
func (s *Syncer) commitFor(recordID string, ops ...storage.Op) error {
	g := s.gate(recordID)
	g.Lock()
	defer g.Unlock()
	s.mu.Lock()
	_, closing := s.closing[recordID]
	s.mu.Unlock()
	if closing {
		return records.ErrNotFound
	}
	return s.st.Commit(ops...)
}

func (s *Syncer) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Run schedules and runs tasks until ctx is done. Then it takes no new
// task, gives those in flight ShutdownGrace to finish, cancels the rest
// (they stay queued for the next start), shuts the instances down and
// returns nil.
func (s *Syncer) Run(ctx context.Context) error {
	return s.loop(ctx, false)
}

// RunOnce runs one scheduling pass, then every task that is due and the
// follow-ups that become due, on up to Workers workers, until none is
// due; it returns without waiting for anything in the future. It is the
// scheduler's loop without its clock, for tests and tools. Run and RunOnce
// must not run at the same time.
func (s *Syncer) RunOnce(ctx context.Context) error {
	return s.loop(ctx, true)
}

// Sweep runs the start's sweep now, if it has not run: the leftovers of
// disconnected records purged, each record's item count set to what it
// holds, the content files swept. Run and RunOnce sweep at their start
// unless Sweep ran before them. serve sweeps as a step of the start,
// before it listens, so that the sweep's code does not run beside the
// first requests' (docs/development.md, "The start's peak at 100,000
// items").
func (s *Syncer) Sweep() {
	s.mu.Lock()
	first := !s.started
	s.started = true
	s.mu.Unlock()
	if first {
		s.sweep()
	}
}

func (s *Syncer) loop(ctx context.Context, once bool) error {
	s.Sweep()
	// Tasks run under hard, which outlives ctx by the grace period.
	hard, cancelHard := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHard()
	stopGrace := context.AfterFunc(ctx, func() {
		time.AfterFunc(s.cfg.ShutdownGrace, cancelHard)
	})
	defer stopGrace()

	done := make(chan string, s.cfg.Workers)
	running := 0
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for pass := 0; ; pass++ {
		due, next := s.pass(!once || pass == 0)
		for _, id := range due {
			if running == s.cfg.Workers || ctx.Err() != nil {
				break
			}
			s.claim(id)
			running++
			go func() {
				defer func() { done <- id }()
				s.session(ctx, hard, id)
			}()
		}
		if once && running == 0 {
			return nil
		}
		wait := maxWait
		if !next.IsZero() {
			wait = min(max(next.Sub(s.now()), 0), maxWait)
		}
		timer.Reset(wait)
		var timeout <-chan time.Time
		if !once {
			timeout = timer.C
		}
		select {
		case id := <-done:
			s.release(id)
			running--
		case <-s.wake:
		case <-timeout:
		case <-ctx.Done():
			for ; running > 0; running-- {
				s.release(<-done)
			}
			if err := s.Close(); err != nil {
				s.log.Error("store the times of idle polls", "err", err)
			}
			return nil
		}
		timer.Stop()
	}
}

func (s *Syncer) claim(id string) {
	s.mu.Lock()
	s.busy[id] = true
	s.turns++
	s.served[id] = s.turns
	s.mu.Unlock()
}

// brokenRest is how long a record whose session broke (its progress could
// not be stored: item files or the store refused writes) waits before its
// next session. Without it the same batch would be fetched and refused in
// a tight loop; the task's own backoff only covers failures of the task.
const brokenRest = 5 * time.Minute

// rest is why and until when a record's syncing waits after a session
// whose progress could not be stored.
type rest struct {
	until time.Time
	// diskFull: the session broke for want of space (the store's or the
	// item files'), which is what the record says.
	diskFull bool
	// storeFull: the store refused the session's commit for want of
	// space. The rest then ends as soon as the store takes writes again,
	// which its CheckSpace finds out. (Item files that found the disk
	// full leave no such state to ask: their rest lasts brokenRest.)
	storeFull bool
}

// rest keeps the record out of the next passes for brokenRest, or until
// the store takes writes again if err is its refusal for want of space.
func (s *Syncer) rest(id string, err error) {
	storeFull := errors.Is(err, storage.ErrDiskFull)
	r := rest{until: s.now().Add(brokenRest), storeFull: storeFull,
		diskFull: storeFull || errors.Is(err, syscall.ENOSPC)}
	s.mu.Lock()
	s.resting[id] = r
	s.mu.Unlock()
}

// spaceProbe is how soon a pass looks again at a record that waits for
// the store to take writes: the store probes for space at most this
// often (storage's CheckSpace).
const spaceProbe = time.Second

// restingUntil returns the record's rest and when the next pass should
// look at it again, and forgets a rest that is over: its time passed, or
// the disk it waited for has room again.
func (s *Syncer) restingUntil(id string, now time.Time) (r rest, next time.Time, ok bool) {
	r, ok = s.restOf(id)
	if !ok {
		return rest{}, time.Time{}, false
	}
	if now.Before(r.until) && !(r.storeFull && s.st.CheckSpace() == nil) {
		next = r.until
		if r.storeFull && now.Add(spaceProbe).Before(next) {
			next = now.Add(spaceProbe)
		}
		return r, next, true
	}
	s.mu.Lock()
	if s.resting[id] == r {
		delete(s.resting, id)
	}
	s.mu.Unlock()
	return rest{}, time.Time{}, false
}

// restOf is the record's rest, if it has one.
func (s *Syncer) restOf(id string) (rest, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.resting[id]
	return r, ok
}

// endRest ends the record's rest: a person asked for a sync.
func (s *Syncer) endRest(id string) {
	s.mu.Lock()
	delete(s.resting, id)
	s.mu.Unlock()
}

func (s *Syncer) release(id string) {
	s.mu.Lock()
	delete(s.busy, id)
	s.mu.Unlock()
}
