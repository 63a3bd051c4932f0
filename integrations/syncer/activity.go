package syncer

import (
	"strings"
	"time"
)

// What a record's sync is doing, read from its queued tasks, for the
// record's view.

// The activities of a record's sync (Activity.State).
const (
	ActivityIdle        = "idle"        // nothing queued: waiting for the next scheduled sync
	ActivityListing     = "listing"     // asking the provider what is new or gone
	ActivityDownloading = "downloading" // fetching items, ItemsLeft to go
	ActivityWaiting     = "waiting"     // the next task waits until RetryAt (a failure, a rate limit)
)

// Activity is what a record's sync is doing now.
type Activity struct {
	State string
	// Pending is the number of the record's queued tasks.
	Pending int
	// ItemsLeft is the number of queued tasks that each fetch one item
	// (their type starts with "download", as downloadEmail).
	ItemsLeft int
	// RetryAt is when the waiting task runs again; zero unless State is
	// ActivityWaiting.
	RetryAt time.Time
}

// Activity reads what the record's sync is doing from its queue. A
// listing task anywhere in the queue makes it listing; a queue whose
// first task waits for a later time makes it waiting.
func (s *Syncer) Activity(recordID string) Activity {
	ts := s.recordTasks(recordID)
	a := Activity{State: ActivityIdle, Pending: len(ts)}
	listing := false
	for _, t := range ts {
		if strings.HasPrefix(t.Type, "download") {
			a.ItemsLeft++
		} else {
			listing = true
		}
	}
	switch {
	case len(ts) == 0:
	case ts[0].NotBefore.After(s.now()):
		a.State, a.RetryAt = ActivityWaiting, ts[0].NotBefore.UTC()
	case listing:
		a.State = ActivityListing
	default:
		a.State = ActivityDownloading
	}
	return a
}

// displayName is the integration's name for a person ("Gmail"), or its
// domain if this build does not know it.
func (s *Syncer) displayName(domain string) string {
	if def, ok := s.cfg.Registry.Get(domain); ok && def.Manifest.DisplayName != "" {
		return def.Manifest.DisplayName
	}
	return domain
}
