package storage

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// coldBenchSession is a benchSession of a cold table.
type coldBenchSession struct {
	benchSession
	Cold ColdRef `json:"-"`
}

// newColdSessions registers the bench sessions, cold: the address, user
// agent and metadata stay in the log, as the service's sealed parts do.
func newColdSessions(dir string) (*Store, *Table[coldBenchSession]) {
	s := New(dir, Options{Sync: SyncNone, Now: func() time.Time { return epoch }})
	t := Register(s, "sessions", TableConfig[coldBenchSession]{
		ID:      func(s *coldBenchSession) string { return s.ID },
		Expired: func(s *coldBenchSession, now time.Time) bool { return !s.ExpiresAt.After(now) },
		Index:   map[string]func(*coldBenchSession) string{"user": func(s *coldBenchSession) string { return s.UserID }},
		Cold: &Cold[coldBenchSession]{
			Strip: func(s *coldBenchSession) {
				s.IPAddress, s.UserAgent, s.Metadata.LoginMethod, s.Metadata.DeviceName = "", "", "", ""
			},
			Ref: func(s *coldBenchSession) *ColdRef { return &s.Cold },
		},
	})
	return s, t
}

// BenchmarkColdSessions opens the 100,000 sessions of writeBenchStores as
// a cold table, and reports what that costs and saves against the same
// table kept whole (as in BenchmarkReplay, BenchmarkMemory): the open, the
// heap per session, reading one record back (Load), and a compaction,
// which copies the cold records' bytes from the old log.
func BenchmarkColdSessions(b *testing.B) {
	dir := b.TempDir()
	writeBenchStores(b, dir)
	benchSessionTable(b, "whole", func() (*Store, *Table[benchSession]) {
		bs := newBenchStores(dir, Options{Sync: SyncNone})
		return bs.sessions, bs.sess
	}, func(s benchSession) string { return s.UserAgent })
	benchSessionTable(b, "cold", func() (*Store, *Table[coldBenchSession]) {
		return newColdSessions(filepath.Join(dir, "sessions"))
	}, func(s coldBenchSession) string { return s.UserAgent })
}

func benchSessionTable[T any](b *testing.B, name string, open func() (*Store, *Table[T]), agent func(T) string) {
	b.Run(name+"/open", func(b *testing.B) {
		b.ReportAllocs()
		var perSession float64
		for b.Loop() {
			b.StopTimer()
			h0 := heapAfterGC()
			b.StartTimer()
			s, t := open()
			if err := s.Open(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if t.Len() != benchRecords {
				b.Fatalf("opened %d sessions, want %d", t.Len(), benchRecords)
			}
			perSession = float64(heapAfterGC()-h0) / benchRecords
			s.Close()
			b.StartTimer()
		}
		b.ReportMetric(perSession, "heap-bytes/session")
	})
	b.Run(name+"/load", func(b *testing.B) {
		s, t := open()
		if err := s.Open(); err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		ids := make([]string, 1024)
		for i := range ids {
			ids[i] = uuidish(2, i*97)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			v, err := t.Load(ids[i&1023])
			if err != nil || agent(v) == "" {
				b.Fatalf("Load: %+v, %v", v, err)
			}
			i++
		}
	})
	b.Run(name+"/compact", func(b *testing.B) {
		s, _ := open()
		if err := s.Open(); err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		b.ReportAllocs()
		for b.Loop() {
			if err := s.Compact(); err != nil {
				b.Fatal(fmt.Errorf("compact: %w", err))
			}
		}
	})
}
