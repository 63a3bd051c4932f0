package imap_test

import (
	"bytes"
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
	"searchsvc/integrations/mail/mailtest"
)

// corpusMessages returns the first n messages of the shared corpus
// (mailtest.Corpus), without their mbox separator line and with CRLF line
// ends, as an IMAP server sends them, or skips b.
func corpusMessages(b *testing.B, n int) [][]byte {
	b.Helper()
	all := mailtest.Corpus(b)
	if len(all) < n {
		b.Skipf("corpus holds %d messages, want %d", len(all), n)
	}
	out := make([][]byte, n)
	for i, raw := range all[:n] {
		if bytes.HasPrefix(raw, []byte("From ")) {
			if j := bytes.IndexByte(raw, '\n'); j >= 0 {
				raw = raw[j+1:]
			}
		}
		var m bytes.Buffer
		for line := range bytes.Lines(raw) {
			m.Write(bytes.TrimRight(line, "\r\n"))
			m.WriteString("\r\n")
		}
		out[i] = m.Bytes()
	}
	return out
}

// peakHeap samples the live heap while a sync runs.
type peakHeap struct {
	sample []metrics.Sample
	peak   atomic.Uint64
	stop   chan struct{}
	wg     sync.WaitGroup
}

func startPeak() *peakHeap {
	p := &peakHeap{
		sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}},
		stop:   make(chan struct{}),
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > p.peak.Load() {
				p.peak.Store(v)
			}
			select {
			case <-p.stop:
				return
			case <-t.C:
			}
		}
	}()
	return p
}

func (p *peakHeap) end() uint64 {
	close(p.stop)
	p.wg.Wait()
	return p.peak.Load()
}

func heapNow() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// idStore keeps only the provider ids a sync stored, as the sync task
// system does once an item is written out: memory is the client's.
type idStore struct {
	ids    map[string]bool
	states map[string]imap.FolderState
	items  int
	// live, when set, is called with each batch still referenced.
	live func()
}

func (s *idStore) apply(_ context.Context, ch changes) error {
	if s.live != nil {
		s.live()
	}
	for _, id := range ch.Delete {
		delete(s.ids, id.String())
	}
	for _, r := range ch.Rekey {
		delete(s.ids, r.From.String())
		s.ids[r.To.String()] = true
	}
	for _, it := range ch.Items {
		s.ids[it.ProviderID] = true
		s.items++
	}
	if ch.State != nil {
		s.states[ch.Folder] = *ch.State
	}
	return nil
}

func (s *idStore) sync(b *testing.B, c *imap.Client) {
	ctx := context.Background()
	boxes, err := c.List(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range imap.SyncedFolders(boxes) {
		var stored []imap.ID
		for pid := range s.ids {
			if id, err := imap.ParseID(pid); err == nil && id.Folder == m.Name {
				stored = append(stored, id)
			}
		}
		state, ok := s.states[m.Name]
		if !ok {
			state = imap.FolderState{Name: m.Name}
		}
		if _, err := syncFolder(ctx, c, state, stored, imap.Limits{}, s.apply); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSyncFolder5000 syncs a folder of 5,000 corpus mails from the
// test server over TLS on loopback, from nothing: the first sync. It
// reports the heap's peak above what was live before (the server's copy
// of the mails included in neither), sampled every millisecond, which
// depends on the collector's pace; the peak of the live heap, collected
// at each batch; and the second sync's cost in commands and downloads,
// which must be one EXAMINE and nothing fetched.
func BenchmarkSyncFolder5000(b *testing.B) {
	const n = 5000
	msgs := corpusMessages(b, n)
	srv := imaptest.New(b)
	var bytesTotal int64
	for i, m := range msgs {
		srv.Append("INBOX", m, epoch.Add(time.Duration(i)*time.Minute))
		bytesTotal += int64(len(m))
	}
	msgs = nil
	a, err := imap.ParseFields(srv.Fields())
	if err != nil {
		b.Fatal(err)
	}
	d := dialer(srv)
	ctx := context.Background()
	b.ReportAllocs()
	b.SetBytes(bytesTotal)
	var peak, base uint64
	var second imaptest.Stats
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		st := &idStore{ids: map[string]bool{}, states: map[string]imap.FolderState{}}
		base = heapNow()
		p := startPeak()
		b.StartTimer()
		c, err := d.Dial(ctx, a)
		if err != nil {
			b.Fatal(err)
		}
		st.sync(b, c)
		b.StopTimer()
		peak = max(peak, p.end()-min(base, p.peak.Load()))
		if st.items != n {
			b.Fatalf("synced %d items, want %d", st.items, n)
		}
		srv.ResetStats()
		st.sync(b, c)
		second = srv.Stats()
		c.Logout(ctx)
		b.StartTimer()
	}
	b.StopTimer()
	// Once more, untimed, with a collection at each batch while its items
	// are still referenced: the live heap, whatever the collector's pace.
	st := &idStore{ids: map[string]bool{}, states: map[string]imap.FolderState{}}
	base = heapNow()
	var live uint64
	st.live = func() { live = max(live, heapNow()-min(base, heapNow())) }
	c, err := d.Dial(ctx, a)
	if err != nil {
		b.Fatal(err)
	}
	st.sync(b, c)
	c.Logout(ctx)
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(live)/(1<<20), "peak-live-MB")
	b.ReportMetric(float64(second.Commands["EXAMINE"]+second.Commands["UID SEARCH"]+second.Commands["UID FETCH"]), "2nd-sync-folder-cmds")
	b.ReportMetric(float64(second.Bodies+second.Headers+second.Envelopes), "2nd-sync-downloads")
}
