package webdav

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/textguard"
)

// The sync of a WebDAV folder, in tasks:
//
//   - start lists the folder, collection by collection (PROPFIND Depth 1),
//     and plans against the stored items: a file whose provider id is
//     stored (same path, same ETag) is unchanged and not downloaded; a
//     stored item whose file is gone is removed; one whose ETag is listed
//     at another path was moved, and is re-keyed to its new path and name
//     without a download; a file the extractor does not read, or larger
//     than MaxFileSize, is stored from the listing alone; every other new
//     or changed file goes to a download task;
//   - download GETs a batch of files, extracts each and stores it,
//     removing the item of the version it replaces. Batches are bounded
//     (batchFiles, batchBytes).
//
// The listing's status (what the limits left out) is kept as the
// record's state and shown as its source's status.
const TaskDownload = "downloadFiles"

// Task payload keys and the kept state's key.
const (
	payloadFiles = "files"
	stateStatus  = "status"
)

// Bounds of a download task: files, and bytes of them downloaded.
const (
	batchFiles = 32
	batchBytes = 16 << 20
)

// maxPathBytes bounds a file's escaped path in its provider id, so that
// the id fits items.MaxProviderID; a file with a longer one is left out.
const maxPathBytes = 1700

// pidPrefix starts every provider id of this package.
const pidPrefix = "dav|"

// version is what tells a file's content from another's: its ETag
// ("e:" and the ETag), or without one its modification time and length
// ("m:unix:size").
func version(e entry) string {
	if e.etag != "" && len(e.etag) <= 200 && !strings.ContainsFunc(e.etag, func(r rune) bool { return r < 0x21 || r > 0x7e || r == '|' }) {
		return "e:" + e.etag
	}
	return "m:" + strconv.FormatInt(e.mtime.Unix(), 10) + ":" + strconv.FormatInt(e.size, 10)
}

// escapePath escapes each segment of p, so that no '|' nor control
// character is left.
func escapePath(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = strings.ReplaceAll(url.PathEscape(s), "|", "%7C")
	}
	return strings.Join(segs, "/")
}

// providerID is an item's provider id: "dav|version|escaped path".
func providerID(p, v string) string { return pidPrefix + v + "|" + escapePath(p) }

// parseProviderID splits a provider id of providerID's; ok is false for
// any other string.
func parseProviderID(pid string) (p, v string, ok bool) {
	rest, found := strings.CutPrefix(pid, pidPrefix)
	v, esc, found2 := strings.Cut(rest, "|")
	if !found || !found2 || v == "" {
		return "", "", false
	}
	p, err := url.PathUnescape(esc)
	if err != nil || p == "" {
		return "", "", false
	}
	return p, v, true
}

// connected is one connected WebDAV folder.
type connected struct {
	d      *dav
	cfg    Config
	ext    *extract.Extractor
	stored func() ([]string, error)
	known  func(string) bool
}

func newConnected(env integrations.Env, cfg Config) (integrations.Integration, error) {
	a, err := ParseFields(env.Credentials.Fields)
	if err != nil {
		return nil, fmt.Errorf("webdav: stored credentials: %w", err)
	}
	d, err := newDAV(a, env.Client, cfg, env.Now)
	if err != nil {
		return nil, err
	}
	c := &connected{d: d, cfg: cfg, ext: extract.New(cfg.Extract), stored: env.ProviderIDs, known: env.Known}
	if c.known == nil {
		c.known = func(string) bool { return false }
	}
	if c.stored == nil {
		c.stored = func() ([]string, error) { return nil, nil }
	}
	return c, nil
}

// Initialize has nothing to do: each request logs in (basic
// authentication).
func (c *connected) Initialize(context.Context) error { return nil }

// ValidateAuthentication lists the folder itself: a 401 means the app
// password no longer works.
func (c *connected) ValidateAuthentication(ctx context.Context) (bool, error) {
	err := c.d.check(ctx)
	var ae *integrations.APIError
	if errors.As(err, &ae) && ae.Unauthorized() {
		return false, nil
	}
	return err == nil, err
}

// Shutdown lets the idle connections go.
func (c *connected) Shutdown(context.Context) error {
	c.d.close()
	return nil
}

// RunTask runs start and download.
func (c *connected) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	var res integrations.TaskResult
	var err error
	switch task.Type {
	case integrations.TaskStart:
		res, err = c.start(ctx)
	case TaskDownload:
		var files []batchFile
		if json.Unmarshal([]byte(task.Payload[payloadFiles]), &files) != nil || len(files) == 0 || len(files) > batchFiles {
			return res, fmt.Errorf("webdav download: invalid payload: %w", integrations.ErrSkip)
		}
		res, err = c.download(ctx, files)
	default:
		return res, fmt.Errorf("webdav task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
	}
	return res, syncError(err)
}

// syncError words for the record what the server did wrong; an answer
// the sync refuses to read is tried again at the next sync, not sooner.
func syncError(err error) error {
	var he *hostileError
	if errors.As(err, &he) {
		return &integrations.ExplainedError{Message: "The WebDAV server " + he.what + ". The next sync tries again.",
			Err: fmt.Errorf("%w: %w", integrations.ErrNextSync, err)}
	}
	return err
}

// listing is what start learnt of the folder.
type listing struct {
	files    []entry
	entries  int  // files and folders kept
	tooMany  bool // MaxEntries left some out
	tooDeep  int  // folders past MaxDepth, not listed
	tooLong  int  // files whose path is too long for a provider id
	maxDepth int
}

// list lists the folder, collection by collection, breadth first.
func (c *connected) list(ctx context.Context) (listing, error) {
	l := listing{maxDepth: c.d.lim.MaxDepth}
	queue := []string{""}
	for len(queue) > 0 && !l.tooMany {
		rel := queue[0]
		queue = queue[1:]
		room := c.d.lim.MaxEntries - l.entries + 1 // and the collection's own entry
		es, err := c.d.propfind(ctx, rel, "1", room+1)
		var ae *integrations.APIError
		if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusGone) {
			if rel == "" {
				// Said on the record: a 404 alone would drop the task
				// in silence.
				return l, &hostileError{"has no folder at the connected address any more (it answered " + strconv.Itoa(ae.Status) + ")"}
			}
			continue // removed since its parent was listed
		}
		if err != nil {
			return l, err
		}
		for _, e := range es {
			if e.rel == rel || !strings.HasPrefix(e.rel, rel) || e.rel == "" {
				continue // the collection itself
			}
			if l.entries == c.d.lim.MaxEntries {
				l.tooMany = true
				break
			}
			l.entries++
			switch {
			case e.dir && strings.Count(e.rel, "/") > c.d.lim.MaxDepth:
				l.tooDeep++
			case e.dir:
				queue = append(queue, e.rel)
			case len(escapePath(e.rel)) > maxPathBytes:
				l.tooLong++
			default:
				l.files = append(l.files, e)
			}
		}
	}
	return l, ctx.Err()
}

// status says what the limits left out; "ok" when nothing.
func (l listing) status() string {
	var parts []string
	if l.tooMany {
		parts = append(parts, "the folder holds more than "+strconv.Itoa(l.entries)+" files and folders; the rest is not searched")
	}
	if l.tooDeep > 0 {
		parts = append(parts, plural(l.tooDeep, "folder")+" nested deeper than "+strconv.Itoa(l.maxDepth)+" levels "+isAre(l.tooDeep)+" not searched")
	}
	if l.tooLong > 0 {
		parts = append(parts, plural(l.tooLong, "file")+" with a path too long "+isAre(l.tooLong)+" not searched")
	}
	if parts == nil {
		return "ok"
	}
	return strings.Join(parts, "; ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

// start lists the folder and plans the sync.
func (c *connected) start(ctx context.Context) (integrations.TaskResult, error) {
	l, err := c.list(ctx)
	if err != nil {
		return integrations.TaskResult{}, err
	}
	pids, err := c.stored()
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("webdav: read stored items: %w", err)
	}
	res := plan(l.files, pids, c.cfg)
	res.State = map[string]string{stateStatus: l.status()}
	return res, nil
}

// storedFile is a stored item's file as its provider id says, and
// whether the plan has accounted for it.
type storedFile struct {
	path, version string
	used          bool
}

// batchFile is one file of a download task.
type batchFile struct {
	Path     string `json:"p"` // escaped
	Version  string `json:"v"`
	Size     int64  `json:"s"`
	Mtime    int64  `json:"m"` // Unix seconds
	Replaces string `json:"r,omitempty"`
}

// plan compares a listing with the stored provider ids (see the task
// list above). It downloads nothing.
func plan(files []entry, storedIDs []string, cfg Config) integrations.TaskResult {
	var res integrations.TaskResult
	stored := make(map[string]*storedFile, len(storedIDs))
	var order []string
	for _, pid := range storedIDs {
		p, v, ok := parseProviderID(pid)
		if !ok {
			res.Removed = append(res.Removed, pid) // not this package's
			continue
		}
		stored[pid] = &storedFile{path: p, version: v}
		order = append(order, pid)
	}
	var fresh []entry
	for _, e := range files {
		if o, ok := stored[providerID(e.rel, version(e))]; ok {
			o.used = true
			continue
		}
		fresh = append(fresh, e)
	}
	fresh = rekeyMoved(fresh, stored, order, &res)
	byPath := map[string]string{}
	for _, pid := range order {
		if !stored[pid].used {
			byPath[stored[pid].path] = pid
		}
	}
	var batch []batchFile
	var bytes int64
	flush := func() {
		if len(batch) > 0 {
			raw, _ := json.Marshal(batch)
			res.Tasks = append(res.Tasks, integrations.Task{Type: TaskDownload, Payload: map[string]string{payloadFiles: string(raw)}, Items: len(batch)})
			batch, bytes = nil, 0
		}
	}
	for _, e := range fresh {
		var replaces string
		if r, ok := byPath[e.rel]; ok && !stored[r].used {
			stored[r].used = true
			replaces = r
		}
		if e.size > cfg.MaxFileSize || extract.TypeOf(e.rel) == extract.TypeOther {
			res.Output = append(res.Output, item(e.rel, version(e), e.mtime, e.size, ""))
			if replaces != "" {
				res.Removed = append(res.Removed, replaces)
			}
			continue
		}
		if len(batch) == batchFiles || (len(batch) > 0 && bytes+e.size > batchBytes) {
			flush()
		}
		batch = append(batch, batchFile{Path: escapePath(e.rel), Version: version(e), Size: e.size, Mtime: e.mtime.Unix(), Replaces: replaces})
		bytes += e.size
	}
	flush()
	for _, pid := range order {
		if !stored[pid].used {
			res.Removed = append(res.Removed, pid)
		}
	}
	return res
}

// rekeyMoved re-keys the stored items of files listed at another path
// with the same ETag (moved or renamed), and returns the fresh files
// that are not such. Files without an ETag are never taken for moved.
func rekeyMoved(fresh []entry, stored map[string]*storedFile, order []string, res *integrations.TaskResult) []entry {
	byVersion := map[string][]string{}
	for _, pid := range order {
		if o := stored[pid]; !o.used && strings.HasPrefix(o.version, "e:") {
			byVersion[o.version] = append(byVersion[o.version], pid)
		}
	}
	if len(byVersion) == 0 {
		return fresh
	}
	out := fresh[:0:0]
	for _, e := range fresh {
		v := version(e)
		var moved string
		for _, pid := range byVersion[v] {
			if !stored[pid].used {
				moved = pid
				break
			}
		}
		if moved == "" {
			out = append(out, e)
			continue
		}
		stored[moved].used = true
		res.Rekeyed = append(res.Rekeyed, integrations.Rekey{From: moved, To: providerID(e.rel, v),
			Title: cleanName(path.Base(e.rel)), Path: cleanName(e.rel)})
	}
	return out
}

// item is the item of the file p: its name as title, its path inside the
// folder, its modification time as date; its text the path and what the
// extractor read.
func item(p, v string, mtime time.Time, size int64, text string) integrations.Item {
	shown := cleanName(p)
	if text != "" {
		shown += "\n\n" + text
	}
	return integrations.Item{ProviderID: providerID(p, v), Title: cleanName(path.Base(p)), Path: cleanName(p),
		Date: mtime.UTC(), Size: size, Text: shown}
}

// download GETs a batch of files and extracts each. A file gone since
// the listing removes the version it replaces; any other failure fails
// the task, which is retried (a 401 makes the record needs_reauth; a
// 5xx, a 507 or a 429 waits for Retry-After or the backoff).
func (c *connected) download(ctx context.Context, files []batchFile) (integrations.TaskResult, error) {
	var res integrations.TaskResult
	for _, bf := range files {
		p, err := url.PathUnescape(bf.Path)
		if err != nil || p == "" {
			continue
		}
		it := item(p, bf.Version, time.Unix(bf.Mtime, 0), bf.Size, "")
		data, err := c.get(ctx, p)
		var ae *integrations.APIError
		switch {
		case errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusGone):
			if bf.Replaces != "" {
				res.Removed = append(res.Removed, bf.Replaces)
			}
			continue
		case err != nil:
			return integrations.TaskResult{}, err
		}
		if data != nil {
			if r := c.ext.Extract(path.Base(p), data); r.Err == nil {
				it = item(p, bf.Version, time.Unix(bf.Mtime, 0), bf.Size, r.Text)
			}
		}
		if it.ProviderID != bf.Replaces && !c.known(it.ProviderID) {
			res.Output = append(res.Output, it)
		}
		if bf.Replaces != "" && bf.Replaces != it.ProviderID {
			res.Removed = append(res.Removed, bf.Replaces)
		}
	}
	return res, nil
}

// get downloads the file p; nil data (no error) for one larger than
// MaxFileSize, which is then stored by name.
func (c *connected) get(ctx context.Context, p string) ([]byte, error) {
	resp, err := c.d.do(ctx, http.MethodGet, c.d.urlOf(p), "", nil)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.cfg.MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > c.cfg.MaxFileSize {
		return nil, nil
	}
	return data, nil
}

// cleanName replaces in a name shown to users the characters that could
// mislead (controls, bidirectional overrides, invalid UTF-8), as the
// folder integration does.
func cleanName(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f, r >= 0x80 && r < 0xa0,
			r == 0x061c, r == 0x200e, r == 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			return utf8.RuneError
		}
		return r
	}, strings.ToValidUTF8(s, string(utf8.RuneError)))
}
