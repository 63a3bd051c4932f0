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
	// ItemsLeft is the number of queued tasks that each fetch one item
	// (their type starts with "download", as downloadEmail).
	ItemsLeft int
	// RetryAt is when the waiting task runs again, or when a pause ends
	// at the latest; zero unless State is ActivityWaiting or
	// ActivityPaused.
	RetryAt time.Time
	// Paused says why the sync is paused; empty unless State is
	// ActivityPaused.
	Paused string
}

// Activity reads what the record's sync is doing from its queue. A
// record resting after a broken session is paused; else a listing task
// anywhere in the queue makes it listing, and a queue whose first task
// waits for a later time makes it waiting.
func (s *Syncer) Activity(recordID string) Activity {
	ts := s.recordTasks(recordID)
	a := Activity{State: ActivityIdle, Pending: len(ts)}
	if r, _, ok := s.restingUntil(recordID, s.now()); ok {
		a.State, a.RetryAt, a.Paused = ActivityPaused, r.until.UTC(), PausedNotSaved
		if r.diskFull {
			a.Paused = PausedDiskFull
		}
		for _, t := range ts {
			if strings.HasPrefix(t.Type, "download") {
				a.ItemsLeft++
			}
		}
		return a
	}
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
