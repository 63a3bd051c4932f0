package main

import (
	"bytes"
	"expvar"
	"net/http"
	"os"
	"runtime"
	rtmetrics "runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"searchsvc/httpx"
	"searchsvc/httpx/promtext"
	"searchsvc/integrations/records"
	"searchsvc/storage"
)

// metrics are the service's counters, gauges and histograms. Administrators
// read them as one JSON object at GET /v1/admin/metrics; METRICS_ADDR serves
// them at /metrics in the Prometheus text format (docs/operations.md,
// "Health and metrics"). The JSON is kept in expvar values of its own (not
// the process-wide expvar registry, so tests and commands do not share
// them). Labels hold route patterns, status classes, integration domains,
// store names and outcomes: never a user id, an email or a query.
type metrics struct {
	requests *expvar.Map // by status class: 2xx, 3xx, 4xx, 5xx
	logins   *expvar.Map // ok, failed, throttled
	all      *expvar.Map

	routes    routeCounts
	durations *promtext.DurationHistogram // of every request
	queries   *promtext.DurationHistogram // of every search query
	dataDir   string                      // whose file system's free bytes are reported
}

// routeCounts counts requests by route pattern and status class. The
// patterns are those of the routes (and "" for none), a fixed set, so the
// map stops growing after the first request of each; a request then only
// takes the read lock and adds atomically.
type routeCounts struct {
	mu sync.RWMutex
	m  map[string]*[len(statusClasses)]atomic.Uint64
}

func (rc *routeCounts) add(pattern string, class int) {
	rc.mu.RLock()
	c, ok := rc.m[pattern]
	rc.mu.RUnlock()
	if !ok {
		rc.mu.Lock()
		if c, ok = rc.m[pattern]; !ok {
			c = new([len(statusClasses)]atomic.Uint64)
			rc.m[pattern] = c
		}
		rc.mu.Unlock()
	}
	c[class].Add(1)
}

// loginPattern is the route whose answers count as login outcomes.
const loginPattern = "POST /v1/auth/login"

// The histograms' buckets, in seconds: a request from a fast API answer to
// a slow login hash or upload; a query from the index's usual milliseconds
// to a cold read on an SD card.
var (
	requestBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}
	queryBuckets   = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}
)

// newMetrics returns the counters, before the app they describe is built
// (the search index is told of the query histogram as it opens); attach
// adds the app's gauges.
func newMetrics(dataDir string) *metrics {
	m := &metrics{requests: new(expvar.Map).Init(), logins: new(expvar.Map).Init(), all: new(expvar.Map).Init(),
		routes:    routeCounts{m: make(map[string]*[len(statusClasses)]atomic.Uint64)},
		durations: promtext.NewDurationHistogram(requestBuckets...),
		queries:   promtext.NewDurationHistogram(queryBuckets...),
		dataDir:   dataDir,
	}
	for _, k := range loginOutcomes {
		m.logins.Add(k, 0)
	}
	return m
}

var loginOutcomes = [...]string{"ok", "failed", "throttled"}

// attach makes the JSON object of GET /v1/admin/metrics read a's stores,
// syncer and index.
func (m *metrics) attach(a *app) {
	m.all.Set("requests", m.requests)
	m.all.Set("logins", m.logins)
	m.all.Set("sessions_active", expvar.Func(func() any { return a.sessionStore.Stats().LiveRecords }))
	m.all.Set("store_main", storeVar(a.mainStore))
	m.all.Set("store_sessions", storeVar(a.sessionStore))
	m.all.Set("sync_tasks", expvar.Func(func() any { return a.syncer.Outcomes() }))
	m.all.Set("search", searchVar(a))
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

// observe counts one finished request (httpx.Config.Observe). It
// allocates nothing once its route has been seen.
func (m *metrics) observe(pattern string, status int, elapsed time.Duration) {
	m.durations.Observe(elapsed)
	if c := status / 100; c >= 1 && c <= 5 {
		m.requests.Add(statusClasses[c-1], 1)
		m.routes.add(pattern, c-1)
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

// rawJSON is JSON text written as it is by encoding/json.
type rawJSON string

func (j rawJSON) MarshalJSON() ([]byte, error) { return []byte(j), nil }

// promContentType is the text exposition format's media type.
const promContentType = "text/plain; version=0.0.4; charset=utf-8"

// prometheus serves the metrics in the Prometheus text format, for
// METRICS_ADDR's /metrics.
func (m *metrics) prometheus(a *app) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var b bytes.Buffer
		if err := promtext.Write(&b, m.families(a)); err != nil {
			// A bug of this file: a name or label promtext refuses.
			http.Error(w, "metrics: "+err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", promContentType)
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
		w.Write(b.Bytes())
	})
}

// families gathers every metric of the text format, read now.
func (m *metrics) families(a *app) []promtext.Family {
	one := func(name, help string, t promtext.Type, v float64) promtext.Family {
		return promtext.Family{Name: name, Help: help, Type: t, Samples: []promtext.Sample{{Value: v}}}
	}
	fams := []promtext.Family{
		{Name: "searchsvc_build_info", Help: "The running build: its version and Go's; the value is 1.", Type: promtext.Gauge,
			Samples: []promtext.Sample{{Labels: []promtext.Label{{Name: "version", Value: version}, {Name: "goversion", Value: runtime.Version()}}, Value: 1}}},
		m.requestFamily(),
		{Name: "searchsvc_http_request_duration_seconds", Help: "Time to answer an HTTP request.", Type: promtext.Histogram,
			Samples: []promtext.Sample{{Hist: m.durations.Snapshot()}}},
		m.loginFamily(),
		one("searchsvc_sessions_active", "Sessions not expired nor revoked.", promtext.Gauge, float64(a.sessionStore.Stats().LiveRecords)),
	}
	stores := []struct {
		name string
		st   *storage.Store
	}{{"main", a.mainStore}, {"sessions", a.sessionStore}}
	bytesF := promtext.Family{Name: "searchsvc_store_bytes", Help: "Size of a store's log files.", Type: promtext.Gauge}
	recordsF := promtext.Family{Name: "searchsvc_store_records", Help: "Live records in a store.", Type: promtext.Gauge}
	for _, s := range stores {
		st := s.st.Stats()
		l := []promtext.Label{{Name: "store", Value: s.name}}
		bytesF.Samples = append(bytesF.Samples, promtext.Sample{Labels: l, Value: float64(st.FileBytes)})
		recordsF.Samples = append(recordsF.Samples, promtext.Sample{Labels: l, Value: float64(st.LiveRecords)})
	}
	fams = append(fams, bytesF, recordsF, itemsFamily(a))
	fams = append(fams, syncFamilies(a)...)
	s := a.index.Stats()
	fams = append(fams,
		one("searchsvc_search_queries_total", "Search queries answered or refused.", promtext.Counter, float64(s.Queries)),
		promtext.Family{Name: "searchsvc_search_query_duration_seconds", Help: "Time to run a search query over the index.",
			Type: promtext.Histogram, Samples: []promtext.Sample{{Hist: m.queries.Snapshot()}}},
		one("searchsvc_index_documents", "Live documents in the search index.", promtext.Gauge, float64(s.Docs)),
		one("searchsvc_index_bytes", "Size of the search index's segment files.", promtext.Gauge, float64(s.BytesOnDisk)),
		one("searchsvc_go_heap_bytes", "Bytes of live and not yet collected Go heap objects.", promtext.Gauge, heapBytes()),
	)
	if free, ok := diskFree(m.dataDir); ok {
		fams = append(fams, one("searchsvc_disk_free_bytes", "Bytes free for the service under DATA_DIR.", promtext.Gauge, float64(free)))
	}
	if rss, ok := residentBytes(); ok {
		fams = append(fams, one("searchsvc_process_resident_memory_bytes", "Resident memory of the process.", promtext.Gauge, float64(rss)))
	}
	return fams
}

func (m *metrics) requestFamily() promtext.Family {
	f := promtext.Family{Name: "searchsvc_http_requests_total", Help: "HTTP requests answered, by route pattern and status class.", Type: promtext.Counter}
	m.routes.mu.RLock()
	defer m.routes.mu.RUnlock()
	for pattern, counts := range m.routes.m {
		if pattern == "" {
			pattern = "(unmatched)" // as the access log names it
		}
		for i := range counts {
			if n := counts[i].Load(); n > 0 {
				f.Samples = append(f.Samples, promtext.Sample{Value: float64(n),
					Labels: []promtext.Label{{Name: "route", Value: pattern}, {Name: "class", Value: statusClasses[i]}}})
			}
		}
	}
	return f
}

func (m *metrics) loginFamily() promtext.Family {
	f := promtext.Family{Name: "searchsvc_logins_total", Help: "Answers of POST /v1/auth/login by outcome.", Type: promtext.Counter}
	for _, k := range loginOutcomes {
		var n int64
		if v, ok := m.logins.Get(k).(*expvar.Int); ok {
			n = v.Value()
		}
		f.Samples = append(f.Samples, promtext.Sample{Labels: []promtext.Label{{Name: "outcome", Value: k}}, Value: float64(n)})
	}
	return f
}

// syncFamilies count the sync runs, and their tasks, by integration
// domain and outcome.
func syncFamilies(a *app) []promtext.Family {
	runs := promtext.Family{Name: "searchsvc_sync_runs_total", Help: "Sync runs (one session of a connection) finished, by integration and outcome.", Type: promtext.Counter}
	tasks := promtext.Family{Name: "searchsvc_sync_tasks_total", Help: "Tasks of sync runs finished, by integration and outcome.", Type: promtext.Counter}
	for f, by := range map[*promtext.Family]map[string]map[string]int64{
		&runs: a.syncer.RunsByIntegration(), &tasks: a.syncer.OutcomesByIntegration()} {
		for domain, o := range by {
			for outcome, n := range o {
				f.Samples = append(f.Samples, promtext.Sample{Value: float64(n),
					Labels: []promtext.Label{{Name: "integration", Value: domain}, {Name: "outcome", Value: outcome}}})
			}
		}
	}
	return []promtext.Family{runs, tasks}
}

// itemsFamily sums the items synced by the live connections of each
// integration domain.
func itemsFamily(a *app) promtext.Family {
	by := make(map[string]int64)
	for domain := range a.syncer.OutcomesByIntegration() { // every domain of the registry
		by[domain] = 0
	}
	a.records.All(func(r records.Record) bool {
		by[r.Integration] += r.ItemsSynced
		return true
	})
	f := promtext.Family{Name: "searchsvc_items", Help: "Items synced by live connections, by integration.", Type: promtext.Gauge}
	for domain, n := range by {
		f.Samples = append(f.Samples, promtext.Sample{Labels: []promtext.Label{{Name: "integration", Value: domain}}, Value: float64(n)})
	}
	return f
}

// heapBytes reads the Go heap's objects, live and not yet swept, without
// stopping the world as runtime.ReadMemStats would.
func heapBytes() float64 {
	s := []rtmetrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindUint64 {
		return 0
	}
	return float64(s[0].Value.Uint64())
}

// diskFree reports the bytes an unprivileged writer may still use on the
// file system holding dir.
func diskFree(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false
	}
	return uint64(st.Bavail) * uint64(st.Bsize), true
}

// residentBytes reads the process's resident set from /proc (Linux only;
// elsewhere the metric is left out).
func residentBytes() (uint64, bool) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, false
	}
	f := strings.Fields(string(b))
	if len(f) < 2 {
		return 0, false
	}
	pages, err := strconv.ParseUint(f[1], 10, 64)
	if err != nil {
		return 0, false
	}
	return pages * uint64(os.Getpagesize()), true
}
