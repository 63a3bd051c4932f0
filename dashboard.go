package main

import (
	"context"
	"io/fs"
	"math"
	"net/http"
	"path/filepath"
	"sync"
	"time"

	"searchsvc/httpx"
	"searchsvc/httpx/monitor"
	"searchsvc/integrations/items"
	"searchsvc/integrations/records"
)

// dashboard is what GET /v1/admin/dashboard reads beside the app's stores
// (docs/operations.md, "The dashboard"): when the service started, the
// last errors of its log, and the growth of its data under DATA_DIR,
// sampled every sampleEvery and kept in memory only.
type dashboard struct {
	started time.Time
	now     func() time.Time
	errors  *monitor.Errors
	growth  monitor.Growth
	items   *items.Store
	// diskFree reads the bytes free under DATA_DIR; itemsBytes the size
	// of the items' content files. Tests replace them.
	diskFree   func() (uint64, bool)
	itemsBytes func() int64

	mu       sync.Mutex
	measured time.Time // when itemsBytes was last read: zero before the first sample
	lastItem int64
}

// sampleEvery is how often the data's size is sampled: each sample walks
// DATA_DIR/items (a stat per content file), too much to do at every
// request on a Pi with 100,000 items.
const sampleEvery = 15 * time.Minute

// lastErrorsKept is how many distinct error sentences the dashboard
// shows.
const lastErrorsKept = 20

func newDashboard(dataDir string, its *items.Store) *dashboard {
	return &dashboard{
		started:    time.Now(),
		now:        time.Now,
		errors:     monitor.NewErrors(lastErrorsKept, nil),
		items:      its,
		diskFree:   func() (uint64, bool) { return diskFree(dataDir) },
		itemsBytes: func() int64 { return dirBytes(its.Dir()) },
	}
}

// sample notes the bytes of the stores, the items' content and the search
// index now.
func (d *dashboard) sample(a *app) {
	n := d.itemsBytes()
	now := d.now()
	d.mu.Lock()
	d.measured, d.lastItem = now, n
	d.mu.Unlock()
	total := n + a.mainStore.Stats().FileBytes + a.sessionStore.Stats().FileBytes + a.index.Stats().BytesOnDisk
	d.growth.Add(monitor.Sample{At: now, Bytes: total})
}

// run samples every sampleEvery until ctx ends. The first sample is
// serve's, a step of its start (startSteps).
func (d *dashboard) run(ctx context.Context, a *app) {
	t := time.NewTicker(sampleEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			d.sample(a)
		}
	}
}

// dirBytes is the size of the regular files under dir (0 for none).
func dirBytes(dir string) int64 {
	var n int64
	filepath.WalkDir(dir, func(_ string, e fs.DirEntry, err error) error {
		if err == nil && e.Type().IsRegular() {
			if info, err := e.Info(); err == nil {
				n += info.Size()
			}
		}
		return nil // a file removed meanwhile, an unreadable directory: counted as nothing
	})
	return n
}

// dashboardView is the answer of GET /v1/admin/dashboard: figures,
// states and counts, never a person's content, name or address (the
// users are ids, which GET /v1/admin/users names).
type dashboardView struct {
	Version       string         `json:"version"`
	StartedAt     time.Time      `json:"startedAt"`
	UptimeSeconds int64          `json:"uptimeSeconds"`
	Disk          diskView       `json:"disk"`
	Sizes         sizesView      `json:"sizes"`
	Users         []userLoadView `json:"users"`
	Errors        errorsView     `json:"errors"`
}

// diskView is the space under DATA_DIR and how long it lasts.
type diskView struct {
	// FreeBytes is null when DATA_DIR's file system cannot be read.
	FreeBytes *uint64 `json:"freeBytes"`
	// HistorySeconds is how long the samples of the data's size span
	// (at most monitor.Window).
	HistorySeconds int64 `json:"historySeconds"`
	// GrowthBytesPerDay is the data's growth over that span, a day; null
	// until it spans monitor.MinSpan: not enough history yet.
	GrowthBytesPerDay *int64 `json:"growthBytesPerDay"`
	// LastsDays is FreeBytes over that growth; null when either is null
	// or the data is not growing.
	LastsDays *float64 `json:"lastsDays"`
}

// sizesView are the sizes of the data, in bytes.
type sizesView struct {
	MainStoreBytes    int64 `json:"mainStoreBytes"`
	SessionStoreBytes int64 `json:"sessionStoreBytes"`
	// ItemsBytes are the items' content files as of ItemsMeasuredAt
	// (null before the first sample, a moment after the start).
	ItemsBytes      int64      `json:"itemsBytes"`
	ItemsMeasuredAt *time.Time `json:"itemsMeasuredAt"`
	IndexBytes      int64      `json:"indexBytes"`
	IndexDocuments  int        `json:"indexDocuments"`
}

// userLoadView is one user's items and live connections by state.
type userLoadView struct {
	ID          string         `json:"id"`
	Items       int            `json:"items"`
	Connections map[string]int `json:"connections"`
}

// errorsView are the last distinct error sentences, newest first, and
// how many error lines were logged since the start.
type errorsView struct {
	Total int64           `json:"total"`
	Last  []monitor.Error `json:"last"`
}

// handler serves GET /v1/admin/dashboard.
func (d *dashboard) handler(a *app) http.Handler {
	return httpx.Handle("dashboard.read", func(w http.ResponseWriter, r *http.Request) error {
		httpx.One(w, r, "dashboard.read", d.view(a))
		return nil
	})
}

func (d *dashboard) view(a *app) dashboardView {
	now := d.now()
	v := dashboardView{Version: version, StartedAt: d.started.UTC(), UptimeSeconds: int64(now.Sub(d.started) / time.Second)}
	if free, ok := d.diskFree(); ok {
		v.Disk.FreeBytes = &free
	}
	rate, span, ok := d.growth.Rate()
	v.Disk.HistorySeconds = int64(span / time.Second)
	if ok {
		perDay := int64(math.Round(rate))
		v.Disk.GrowthBytesPerDay = &perDay
		if v.Disk.FreeBytes != nil && perDay > 0 {
			days := math.Round(float64(*v.Disk.FreeBytes)/float64(perDay)*10) / 10
			v.Disk.LastsDays = &days
		}
	}
	st := a.index.Stats()
	v.Sizes = sizesView{MainStoreBytes: a.mainStore.Stats().FileBytes, SessionStoreBytes: a.sessionStore.Stats().FileBytes,
		IndexBytes: st.BytesOnDisk, IndexDocuments: st.Docs}
	d.mu.Lock()
	if !d.measured.IsZero() {
		at := d.measured.UTC()
		v.Sizes.ItemsBytes, v.Sizes.ItemsMeasuredAt = d.lastItem, &at
	}
	d.mu.Unlock()
	v.Users = d.users(a)
	v.Errors.Last, v.Errors.Total = d.errors.Last()
	return v
}

// users gives every live user's item count and live connections by
// state, oldest user first.
func (d *dashboard) users(a *app) []userLoadView {
	byUser := make(map[string]map[string]int)
	a.records.All(func(r records.Record) bool {
		if byUser[r.UserID] == nil {
			byUser[r.UserID] = map[string]int{}
		}
		byUser[r.UserID][r.Status]++
		return true
	})
	out := []userLoadView{}
	for _, id := range a.users.IDs() {
		conns := map[string]int{records.StatusConnected: 0, records.StatusError: 0, records.StatusNeedsReauth: 0}
		for state, n := range byUser[id] {
			conns[state] += n
		}
		out = append(out, userLoadView{ID: id, Items: d.items.Count(id), Connections: conns})
	}
	return out
}
