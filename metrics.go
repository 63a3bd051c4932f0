package main

import (
	"expvar"
	"fmt"
	"net/http"
	"time"

	"searchsvc/httpx"
	"searchsvc/storage"
)

// metrics are the service's counters and gauges, kept in expvar values of
// its own (not the process-wide expvar registry, so tests and commands do
// not share them) and served as one JSON object to administrators at
// GET /v1/admin/metrics, or to anyone who can reach METRICS_ADDR.
type metrics struct {
	requests *expvar.Map // by status class: 2xx, 3xx, 4xx, 5xx
	logins   *expvar.Map // ok, failed, throttled
	all      *expvar.Map
}

// loginPattern is the route whose answers count as login outcomes.
const loginPattern = "POST /v1/auth/login"

func newMetrics(a *app) *metrics {
	m := &metrics{requests: new(expvar.Map).Init(), logins: new(expvar.Map).Init(), all: new(expvar.Map).Init()}
	for _, k := range []string{"ok", "failed", "throttled"} {
		m.logins.Add(k, 0)
	}
	m.all.Set("requests", m.requests)
	m.all.Set("logins", m.logins)
	m.all.Set("sessions_active", expvar.Func(func() any { return a.sessionStore.Stats().LiveRecords }))
	m.all.Set("store_main", storeVar(a.mainStore))
	m.all.Set("store_sessions", storeVar(a.sessionStore))
	m.all.Set("sync_tasks", expvar.Func(func() any { return a.syncer.Outcomes() }))
	m.all.Set("search", searchVar(a))
	return m
}

// searchVar reports the search index: its size, what waits in memory to be written
// to a segment, the catch-up under way, and the queries answered with
// their total and mean time.
func searchVar(a *app) expvar.Func {
	return func() any {
		s := a.index.Stats()
		var mean float64
		if s.Queries > 0 {
			mean = float64(s.QueryNanos) / float64(s.Queries) / 1e6
		}
		return map[string]any{
			"users": s.Users, "documents": s.Docs, "pending": s.Pending, "segments": s.Segments,
			"bytes_on_disk": s.BytesOnDisk, "bytes_written": s.BytesWritten,
			"flushes": s.Flushes, "merges": s.Merges, "catch_up_users_left": a.indexer.Behind(),
			"queries": s.Queries, "query_ms_total": float64(s.QueryNanos) / 1e6, "query_ms_mean": mean,
			"cache_bytes": s.CacheBytes, "cache_hits": s.CacheHits, "cache_misses": s.CacheMisses,
		}
	}
}

// storeVar reports a store's size, compactions and write counters.
func storeVar(st *storage.Store) expvar.Func {
	return func() any {
		s := st.Stats()
		var last string
		if !s.LastCompaction.IsZero() {
			last = s.LastCompaction.UTC().Format(time.RFC3339)
		}
		failed := st.Err() != nil
		full := !failed && st.Writable() != nil
		return map[string]any{
			"file_bytes": s.FileBytes, "live_records": s.LiveRecords, "dead_records": s.DeadRecords,
			"commits": s.Commits, "fsyncs": s.Fsyncs, "bytes_written": s.BytesWritten,
			"compactions": s.Compactions, "last_compaction": last, "failed": failed,
			"disk_full": full,
		}
	}
}

var statusClasses = [...]string{"1xx", "2xx", "3xx", "4xx", "5xx"}

// observe counts one finished request (httpx.Config.Observe).
func (m *metrics) observe(pattern string, status int) {
	if c := status / 100; c >= 1 && c <= 5 {
		m.requests.Add(statusClasses[c-1], 1)
	}
	if pattern != loginPattern {
		return
	}
	switch {
	case status == http.StatusOK:
		m.logins.Add("ok", 1)
	case status == http.StatusTooManyRequests:
		m.logins.Add("throttled", 1)
	case status == http.StatusUnauthorized:
		m.logins.Add("failed", 1)
	}
}

// handler serves every metric as JSON, in the envelope for the admin route.
func (m *metrics) handler() http.Handler {
	return httpx.Handle("metrics.read", func(w http.ResponseWriter, r *http.Request) error {
		httpx.One(w, r, "metrics.read", rawJSON(m.all.String()))
		return nil
	})
}

// plain serves the metrics object alone, for METRICS_ADDR scrapers.
func (m *metrics) plain() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, m.all.String())
	})
}

// rawJSON is JSON text written as it is by encoding/json.
type rawJSON string

func (j rawJSON) MarshalJSON() ([]byte, error) { return []byte(j), nil }
