package syncer

import (
	"strings"
	"time"

	"searchsvc/integrations"
)

// What a record's sync is doing, read from its queued tasks, for the
// record's view.

// The activities of a record's sync (Activity.State).
const (
	ActivityIdle        = "idle"        // nothing queued: waiting for the next scheduled sync
	ActivityListing     = "listing"     // asking the provider what is new or gone
	ActivityDownloading = "downloading" // fetching items, ItemsLeft to go
	ActivityWaiting     = "waiting"     // the next task waits until RetryAt (a failure, a rate limit)
	ActivityPaused      = "paused"      // progress could not be stored: syncing waits, for Paused, until RetryAt at the latest
)

// Why a record's syncing is paused (Activity.Paused).
const (
	PausedDiskFull = "disk_full" // the store refused writes for want of space: until there is room again
	PausedNotSaved = "not_saved" // the session's progress could not be stored for another reason
)

// Activity is what a record's sync is doing now.
type Activity struct {
	State string
	// Pending is the number of the record's queued tasks.
	Pending int
	// ItemsLeft is the number of items the record's queued tasks download:
	// one for each task whose type starts with "download" (downloadEmail),
	// and the items a task that downloads several says it holds (an IMAP
	// batch, integrations.Task.Items).
	ItemsLeft int
	// ItemsTotal is how many items the current sync has queued for
	// download so far, ItemsLeft among them: counted in memory since the
	// service started, so after a restart it counts from what was left
	// then. Zero when nothing is left to download.
	ItemsTotal int
	// RetryAt is when the waiting task runs again, or when a pause ends
	// at the latest; zero unless State is ActivityWaiting or
	// ActivityPaused.
	RetryAt time.Time
	// Paused says why the sync is paused; empty unless State is
	// ActivityPaused.
	Paused string
	// LastSyncAt is when an idle poll last finished, if that is not on
	// disk yet (idle.go): the record's view shows it as its lastSyncAt.
	// Zero otherwise.
	LastSyncAt time.Time
}

// Activity reads what the record's sync is doing from its queue. A
// record resting after a broken session is paused; else a queue whose
// first task waits for a later time makes it waiting, a queue with items
// left to download makes it downloading (a listing between two pages of
// downloads does not hide how many are left), and any other queue makes
// it listing.
func (s *Syncer) Activity(recordID string) Activity {
	ts := s.recordTasks(recordID)
	a := Activity{State: ActivityIdle, Pending: len(ts), ItemsLeft: itemsOf(ts)}
	s.mu.Lock()
	a.LastSyncAt = s.idle[recordID].at
	s.mu.Unlock()
	if a.ItemsLeft > 0 {
		s.mu.Lock()
		a.ItemsTotal = max(s.totals[recordID], a.ItemsLeft)
		s.mu.Unlock()
	}
	if r, _, ok := s.restingUntil(recordID, s.now()); ok {
		a.State, a.RetryAt, a.Paused = ActivityPaused, r.until.UTC(), PausedNotSaved
		if r.diskFull {
			a.Paused = PausedDiskFull
		}
		return a
	}
	switch {
	case len(ts) == 0:
	case ts[0].NotBefore.After(s.now()):
		a.State, a.RetryAt = ActivityWaiting, ts[0].NotBefore.UTC()
	case a.ItemsLeft > 0:
		a.State = ActivityDownloading
	default:
		a.State = ActivityListing
	}
	return a
}

// itemsOf is how many items the tasks ts download (Activity.ItemsLeft).
func itemsOf(ts []QueuedTask) int {
	n := 0
	for _, t := range ts {
		switch {
		case t.Items > 0:
			n += t.Items
		case strings.HasPrefix(t.Type, "download"):
			n++
		}
	}
	return n
}

// beginCount starts the count of a record's sync (Activity.ItemsTotal)
// when a session takes its queue: afresh when the queue begins with a
// start task, and from what the queue holds when the count is unknown
// (the first session since the service started).
func (s *Syncer) beginCount(recordID string, queue []QueuedTask) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.totals[recordID]; !ok || queue[0].Type == integrations.TaskStart {
		s.totals[recordID] = itemsOf(queue)
	}
}

// count adds the downloads of follow-up tasks just committed to the
// record's count; final (no task left) ends the count. It is memory only:
// a first sync of many mails writes nothing more for its progress.
func (s *Syncer) count(recordID string, follow []QueuedTask, final bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if final {
		delete(s.totals, recordID)
		return
	}
	if n := itemsOf(follow); n > 0 {
		s.totals[recordID] += n
	}
}

// displayName is the integration's name for a person ("Gmail"), or its
// domain if this build does not know it.
func (s *Syncer) displayName(domain string) string {
	if def, ok := s.cfg.Registry.Get(domain); ok && def.Manifest.DisplayName != "" {
		return def.Manifest.DisplayName
	}
	return domain
}
