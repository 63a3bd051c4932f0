package index

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"searchsvc/storage"
)

const (
	userA = "user-a"
	userB = "user-b"
)

// A sync worker's Index returns while a catch-up of the same user is
// under way (the catch-up is held in its read of the store: if Index
// waited for it, the test would never release it), the item indexed
// meanwhile is found once the catch-up ends, and another user's change
// applies while the catch-up is still held.
func TestIndexDuringCatchUp(t *testing.T) {
	st := newStore()
	st.add(userA, "a1", "Alpha", "alpha text")
	st.add(userA, "a2", "Bravo", "bravo text")
	x := openTest(t, "", st)
	h := st.hold("live " + userA)
	run(t, x, storage.Position{Gen: 1, Seq: 1}) // a new index's checkpoint is not the store's: every user is caught up
	<-h.entered

	// Stored after the catch-up read the store: only the queued change
	// brings it to the index.
	x.Index(userA, []Item{st.add(userA, "a3", "Charlie", "charlie text")})
	x.Index(userB, []Item{st.add(userB, "b1", "Delta", "delta text")})
	x.idle(userB)
	want(t, x, userB, "delta", "b1")
	if ops, _, running := x.state(userA); len(ops) != 1 || !running {
		t.Errorf("while the catch-up is held: %d changes queued, catching up %v; want 1, true", len(ops), running)
	}
	if x.Behind() != 1 || x.CaughtUp() {
		t.Errorf("while the catch-up is held: Behind %d, CaughtUp %v; want 1, false", x.Behind(), x.CaughtUp())
	}

	close(h.release)
	x.Flush()
	want(t, x, userA, "charlie", "a3")
	want(t, x, userA, "alpha OR bravo", "a1", "a2")
	if x.Behind() != 0 || !x.CaughtUp() {
		t.Errorf("after the catch-up: Behind %d, CaughtUp %v; want 0, true", x.Behind(), x.CaughtUp())
	}
}

// A removal queued while a catch-up is under way applies after it: the
// catch-up read the item before it was removed, and adds it; the removal
// then takes it out again.
func TestRemoveDuringCatchUpAppliesAfter(t *testing.T) {
	st := newStore()
	st.add(userA, "a1", "Alpha", "alpha text")
	st.add(userA, "a2", "Bravo", "bravo text")
	x := openTest(t, "", st)
	h := st.hold("text a2")
	done := make(chan []string)
	go func() { done <- x.CatchUp([]string{userA}) }()
	<-h.entered

	st.remove(userA, "a2")
	x.Remove(userA, []string{"a2"})
	close(h.release)
	if failed := <-done; failed != nil {
		t.Fatalf("CatchUp: failed %v", failed)
	}
	x.Flush()
	want(t, x, userA, "bravo")
	want(t, x, userA, "alpha", "a1")
}

// RemoveUser drops what is queued for the user.
func TestRemoveUserDropsQueued(t *testing.T) {
	st := newStore()
	st.add(userA, "a1", "Alpha", "alpha text")
	x := openTest(t, "", st)
	h := st.hold("live " + userA)
	x.mark(userA)
	<-h.entered

	x.Index(userA, []Item{st.add(userA, "a2", "Bravo", "bravo text")})
	x.Index(userA, []Item{st.add(userA, "a3", "Charlie", "charlie text")})
	if ops, _, _ := x.state(userA); len(ops) != 2 {
		t.Fatalf("queued: %d changes, want 2", len(ops))
	}
	st.removeUser(userA)
	x.RemoveUser(userA)
	if ops, _, _ := x.state(userA); len(ops) != 1 || ops[0].kind != opRemoveUser {
		t.Errorf("queued after RemoveUser: %+v, want the removal of the user's index alone", ops)
	}
	close(h.release)
	x.Flush()
	if users := x.Search().Users(); slices.Contains(users, userA) {
		t.Errorf("index users after RemoveUser: %v, want no %s", users, userA)
	}
	want(t, x, userA, "alpha OR bravo OR charlie")
}

// Changes made while a catch-up waits to begin are not queued: the store
// it will read holds them. A removed user's catch-up removes the index.
func TestChangesBeforeCatchUpDropped(t *testing.T) {
	st := newStore()
	st.add(userA, "a1", "Alpha", "alpha text")
	st.add(userB, "b1", "Bravo", "bravo text")
	x := openTest(t, "", st)
	x.Index(userB, []Item{{ID: "b1", Title: "Bravo", Text: "bravo text"}})
	x.Flush()
	h := st.hold("live " + userA)
	x.mark(userA)
	<-h.entered
	// A's catch-up holds the one slot: B's waits to begin.
	x.mark(userB)
	x.Index(userB, []Item{st.add(userB, "b2", "Charlie", "charlie text")})
	if ops, due, _ := x.state(userB); len(ops) != 0 || !due {
		t.Errorf("B's changes while its catch-up is due: %d queued, due %v; want 0, true", len(ops), due)
	}
	want(t, x, userB, "charlie")
	st.removeUser(userB)
	x.RemoveUser(userB)
	if ops, due, _ := x.state(userB); len(ops) != 0 || !due {
		t.Errorf("B's changes after RemoveUser: %d queued, due %v; want 0, true", len(ops), due)
	}
	close(h.release)
	x.Flush()
	if users := x.Search().Users(); !slices.Equal(users, []string{userA}) {
		t.Errorf("index users: %v, want [%s]", users, userA)
	}
}

// A user's queue stays within MaxQueueBytes: past it, the queue is
// dropped for a catch-up, which indexes what the dropped changes held.
func TestQueueBound(t *testing.T) {
	st := newStore()
	st.add(userA, "a0", "Zero", "zero")
	x := openTest(t, "", st, func(c *Config) { c.MaxQueueBytes = 4 << 10 })
	h := st.hold("live " + userA)
	x.mark(userA)
	<-h.entered

	text := strings.Repeat("harbour ", 128) // 1 KiB
	var ids []string
	for i := range 10 {
		id := fmt.Sprintf("a%d", i+1)
		ids = append(ids, id)
		x.Index(userA, []Item{st.add(userA, id, "Entry", text)})
		x.mu.Lock()
		q := x.queues[userA]
		if q.bytes > x.maxQueue {
			t.Errorf("after %d changes: %d bytes queued, bound %d", i+1, q.bytes, x.maxQueue)
		}
		x.mu.Unlock()
	}
	if ops, due, _ := x.state(userA); len(ops) != 0 || !due {
		t.Errorf("past the bound: %d changes queued, catch-up due %v; want 0, true", len(ops), due)
	}
	if x.Behind() != 1 {
		t.Errorf("Behind %d, want 1 (the catch-up under way and the one due are one user)", x.Behind())
	}
	close(h.release)
	x.Flush()
	slices.Sort(ids)
	want(t, x, userA, "harbour", ids...)
	want(t, x, userA, "zero", "a0")
}
