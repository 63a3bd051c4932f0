package index

import (
	"testing"

	"searchsvc/storage"
)

// Close applies what is queued, and records the store's position only
// when the index caught up: a catch-up that Close stopped leaves the next
// start to catch up again.
func TestCloseCheckpoint(t *testing.T) {
	pos := storage.Position{Gen: 1, Seq: 7}
	t.Run("caught up", func(t *testing.T) {
		dir := t.TempDir()
		st := newStore()
		st.add(userA, "a1", "Alpha", "alpha text")
		x := openTest(t, dir, st)
		if failed := x.CatchUp(nil); failed != nil {
			t.Fatalf("CatchUp: failed %v", failed)
		}
		x.Index(userA, []Item{st.add(userA, "a2", "Bravo", "bravo text")})
		if err := x.Close(pos); err != nil {
			t.Fatal(err)
		}
		x = openTest(t, dir, st)
		if x.Search().Checkpoint() != Checkpoint(pos) {
			t.Error("a caught-up index closed without the store's position")
		}
		want(t, x, userA, "alpha OR bravo", "a1", "a2")
		x.compare(pos)
		if x.Behind() != 0 || !x.CaughtUp() {
			t.Errorf("start at the recorded position: Behind %d, CaughtUp %v; want 0, true", x.Behind(), x.CaughtUp())
		}
	})
	t.Run("catch-up stopped", func(t *testing.T) {
		dir := t.TempDir()
		st := newStore()
		st.add(userA, "a1", "Alpha", "alpha text")
		st.add(userA, "a2", "Bravo", "bravo text")
		x := openTest(t, dir, st)
		h := st.hold("text a1")
		h2 := st.hold("text a2")
		run(t, x, storage.Position{})
		var held *hold
		select {
		case <-h.entered:
			held = h
		case <-h2.entered:
			held = h2
		}
		x.Index(userA, []Item{st.add(userA, "a3", "Charlie", "charlie text")})
		closed := make(chan error)
		go func() { closed <- x.Close(pos) }()
		// Close stops the catch-up; it gives up at its next item.
		<-x.ctx.Done()
		close(held.release)
		if h == held {
			close(h2.release)
		} else {
			close(h.release)
		}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		x = openTest(t, dir, st)
		if x.Search().Checkpoint() == Checkpoint(pos) {
			t.Error("an index whose catch-up was stopped recorded the store's position")
		}
		want(t, x, userA, "charlie", "a3") // queued after the catch-up began: applied at Close
	})
}
