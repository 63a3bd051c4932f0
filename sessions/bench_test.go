package sessions

import (
	"fmt"
	"runtime"
	"testing"

	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// heapAfterGC returns the live heap after a full collection.
func heapAfterGC() uint64 {
	var ms runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// BenchmarkOpen opens a session store of 100,000 sessions of 10,000
// users, as the service does at start, and reports the heap it holds per
// session afterwards, indexes included.
func BenchmarkOpen(b *testing.B) {
	const sessions, users = 100_000, 10_000
	e := newEnv(b, Config{})
	const chunk = 1000
	for i := 0; i < sessions; i += chunk {
		ops := make([]storage.Op, 0, chunk)
		now := e.clk.Now()
		for k := range chunk {
			s := Session{
				ID: uuid.New(), UserID: fmt.Sprintf("00000000-0000-4000-8000-%012d", (i+k)%users), CreatedAt: now,
				LastAccessedAt: now, ExpiresAt: now.Add(DefaultMaxAge), IPAddress: homeIP.String(),
				UserAgent: "Mozilla/5.0 (X11; Linux aarch64) Firefox/140.0", Metadata: Metadata{LoginMethod: LoginPassword},
			}
			ops = append(ops, e.m.tab.Insert(e.m.seal(s)))
		}
		if err := e.store.Commit(ops...); err != nil {
			b.Fatalf("Commit: %v", err)
		}
	}
	if err := e.store.Close(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var perSession float64
	for b.Loop() {
		b.StopTimer()
		h0 := heapAfterGC()
		b.StartTimer()
		st := storage.New(e.dir, storage.Options{Sync: storage.SyncNone, Now: e.clk.Now})
		m, err := New(st, e.cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := st.Open(); err != nil {
			b.Fatal(err)
		}
		m.LoadSeen()
		b.StopTimer()
		if n := m.tab.Len(); n != sessions {
			b.Fatalf("opened %d sessions, want %d", n, sessions)
		}
		perSession = float64(heapAfterGC()-h0) / sessions
		runtime.KeepAlive(m)
		st.Close()
		b.StartTimer()
	}
	b.ReportMetric(perSession, "heap-bytes/session")
}

// BenchmarkValidateFirst validates sessions met for the first time since
// start: the record's sealed part is opened (and read back from the log,
// which holds it).
func BenchmarkValidateFirst(b *testing.B) {
	e, ids := benchEnv(b, 100_000)
	e.reopen()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(ids) { // every session met: forget them, as a restart would
			b.StopTimer()
			e.m.mu.Lock()
			clear(e.m.entries)
			clear(e.m.keyOf)
			e.m.mu.Unlock()
			i = 0
			b.StartTimer()
		}
		if _, _, err := e.m.Validate(ids[i], home2IP); err != nil {
			b.Fatal(err)
		}
		i++
	}
}
