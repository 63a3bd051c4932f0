package syncer

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// QueuedTask is a task waiting in the main store's "tasks" table, which is
// the sync queue: there is no other. A task leaves the table in the same
// log line that stores what it produced (its items, its follow-up tasks),
// so after a restart exactly the unfinished tasks run again, a half-listed
// mailbox continuing from the pageToken its pending task carries.
type QueuedTask struct {
	ID string `json:"id"`
	// Seq orders tasks: a record's tasks run one at a time in Seq order,
	// and a task that waits (NotBefore) holds back the ones behind it, so
	// a rate-limited provider is not asked again before its Retry-After.
	Seq         int64  `json:"seq"`
	RecordID    string `json:"recordId"`
	UserID      string `json:"userId"`
	Integration string `json:"integration"`
	Type        string `json:"type"`
	// Payload is the task's payload, sealed like credentials: message ids
	// and page tokens are the provider's data, kept out of the log.
	Payload []byte `json:"payload,omitempty"`
	// NotBefore is when the task may run again after a failure; zero: now.
	NotBefore time.Time `json:"notBefore,omitzero"`
	// Attempts counts the failed runs of the task.
	Attempts int `json:"attempts,omitempty"`
	// Items is how many items the task downloads (integrations.Task.Items),
	// kept beside its type so that a record's view counts what is left
	// without opening a payload.
	Items     int       `json:"items,omitempty"`
	CreatedAt time.Time `json:"createdAt"`
}

func (t *QueuedTask) aad() []byte {
	return vault.AAD(vault.TaskPayload, t.UserID, t.Integration, t.ID)
}

// newTask returns a task of rec's, its payload sealed.
func (s *Syncer) newTask(rec *records.Record, task integrations.Task, now time.Time) (QueuedTask, error) {
	t := QueuedTask{
		ID: uuid.New(), Seq: s.nextSeq(), RecordID: rec.ID, UserID: rec.UserID,
		Integration: rec.Integration, Type: task.Type, Items: max(task.Items, 0), CreatedAt: now.UTC(),
	}
	if len(task.Payload) > 0 {
		b, err := json.Marshal(task.Payload)
		if err != nil {
			return QueuedTask{}, err
		}
		t.Payload = s.vault.Seal(t.aad(), b)
	}
	return t, nil
}

// task opens what the integration is asked to run.
func (s *Syncer) task(t *QueuedTask) (integrations.Task, error) {
	out := integrations.Task{Type: t.Type}
	if len(t.Payload) == 0 {
		return out, nil
	}
	b, err := s.vault.Open(t.aad(), t.Payload)
	if err != nil {
		return integrations.Task{}, fmt.Errorf("open task payload: %w", err)
	}
	if err := json.Unmarshal(b, &out.Payload); err != nil {
		return integrations.Task{}, fmt.Errorf("decode task payload: %w", err)
	}
	return out, nil
}

// Index names of the tasks table.
const (
	taskIndexRecord = "record" // every task of a record
	taskIndexStart  = "start"  // a record's pending start task, at most one
)

// Tasks is the syncer's part of the main store: the task queue (the
// "tasks" table) and the values records keep between syncs (the
// "syncstate" table), both sealed with the vault. It is a peer of the
// records and the item store: the service's composition root builds all
// three on one store before it opens, and hands them to New; commands
// that only check or re-seal the stored data use it without a Syncer.
type Tasks struct {
	st    *storage.Store
	vault *vault.Vault
	tasks *storage.Table[QueuedTask]
	state *storage.Table[stateRow]
}

// NewTasks registers the "tasks" and "syncstate" tables on st, which must
// not be open yet; v seals the tasks' payloads and the kept values.
func NewTasks(st *storage.Store, v *vault.Vault) *Tasks {
	return &Tasks{st: st, vault: v, tasks: registerTasks(st), state: registerState(st)}
}

func registerTasks(st *storage.Store) *storage.Table[QueuedTask] {
	return storage.Register(st, "tasks", storage.TableConfig[QueuedTask]{
		ID: func(t *QueuedTask) string { return t.ID },
		Unique: map[string]func(*QueuedTask) string{
			// A second start for a record (the scheduler and a user's
			// "sync now" racing) fails its commit instead of queueing a
			// second run.
			taskIndexStart: func(t *QueuedTask) string {
				if t.Type != integrations.TaskStart {
					return ""
				}
				return t.RecordID
			},
		},
		Index: map[string]func(*QueuedTask) string{
			taskIndexRecord: func(t *QueuedTask) string { return t.RecordID },
		},
	})
}

// bySeq orders tasks for running.
func bySeq(a, b QueuedTask) int {
	switch {
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// recordTasks returns the record's tasks in running order.
func (s *Syncer) recordTasks(recordID string) []QueuedTask {
	ts := s.tasks.Find(taskIndexRecord, recordID)
	slices.SortFunc(ts, bySeq)
	return ts
}

// nextSeq hands out task sequence numbers, starting above the highest one
// in the table so that the order survives restarts.
func (s *Syncer) nextSeq() int64 {
	s.seqMu.Lock()
	defer s.seqMu.Unlock()
	if !s.seqLoaded {
		s.tasks.Scan(func(t QueuedTask) bool {
			s.seq = max(s.seq, t.Seq)
			return true
		})
		s.seqLoaded = true
	}
	s.seq++
	return s.seq
}

// Backoff of failed tasks.
const (
	// backoffBase is the wait after a task's first failure; it doubles
	// with each further failure.
	backoffBase = 30 * time.Second
	// backoffCap bounds the wait between two attempts of a task.
	backoffCap = time.Hour
	// maxAttempts is how often a task that failed for a reason other than
	// a temporary one (a 400 or 403, a malformed answer) is tried before
	// it is dropped.
	maxAttempts = 5
	// maxTemporaryAttempts is the same for temporary failures (429, 5xx,
	// network). With the backoff above it spans about ten hours; then the
	// task is dropped and the next scheduled start lists again, skipping
	// what is already stored.
	maxTemporaryAttempts = 15
)

// backoff is the wait after a task's attempts-th failure (1 for the
// first): backoffBase·2^(attempts-1), capped at backoffCap, of which a
// random second half is drawn ("equal jitter"). Full jitter could draw a
// wait near zero and hammer a provider that just refused us; half the
// ceiling is a floor that still grows.
func backoff(attempts int, rnd func(int64) int64) time.Duration {
	ceil := backoffCap
	if attempts <= 1 {
		ceil = backoffBase
	} else if attempts < 20 {
		ceil = min(backoffBase<<(attempts-1), backoffCap)
	}
	half := ceil / 2
	return half + time.Duration(rnd(int64(ceil-half)+1))
}

// cryptoRand returns a uniform number in [0, n) from crypto/rand, the only
// randomness the service uses. The modulo bias is below 2^-30 for the
// durations drawn here.
func cryptoRand(n int64) int64 {
	if n <= 1 {
		return 0
	}
	var b [8]byte
	rand.Read(b[:])
	return int64(binary.LittleEndian.Uint64(b[:]) % uint64(n))
}
