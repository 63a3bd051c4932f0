package folder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/textguard"
)

// The sync of a folder, in tasks:
//
//   - start walks the folder (walk) and plans against the stored items
//     (plan): a file whose provider id is stored is unchanged and not
//     opened; a stored item whose file is gone is removed; one whose file
//     is listed at another path with the same device, inode, size and
//     modification time was renamed or moved, and is re-keyed to its new
//     path and name without being read; every other new or changed file
//     goes to an extractFiles task;
//   - extractFiles opens a batch of files, reads and extracts each, and
//     stores it, removing the item of the version it replaces; a file the
//     extractor does not read, or larger than MaxFileSize, is stored by
//     name and path without being opened. Batches are bounded (batchFiles,
//     batchBytes), so a first scan of a large folder holds one batch's
//     items at a time, not the folder's.
//
// The listing's status (what the limits left out) is kept as the
// record's state and shown as its source's status.
const TaskExtractFiles = "extractFiles"

// Task payload keys and the kept state's key.
const (
	payloadFiles = "files"
	stateStatus  = "status"
)

// Bounds of an extractFiles task: files, and bytes of them read.
const (
	batchFiles = 64
	batchBytes = 16 << 20
)

// pidPrefix starts every provider id of this package.
const pidPrefix = "file|"

// providerID is an item's provider id:
// "file|device:inode|size|mtime|escaped path". A file whose content may
// have changed (its size or modification time) or that moved has a new
// one.
func providerID(p string, k fileKey) string {
	return pidPrefix + strconv.FormatUint(k.dev, 10) + ":" + strconv.FormatUint(k.ino, 10) + "|" +
		strconv.FormatInt(k.size, 10) + "|" + strconv.FormatInt(k.mtime, 10) + "|" + escapePath(p)
}

// parseProviderID splits a provider id of providerID's; ok is false for
// any other string.
func parseProviderID(pid string) (p string, k fileKey, ok bool) {
	rest, found := strings.CutPrefix(pid, pidPrefix)
	parts := strings.SplitN(rest, "|", 4)
	if !found || len(parts) != 4 {
		return "", k, false
	}
	dev, ino, ok1 := strings.Cut(parts[0], ":")
	var errs [4]error
	k.dev, errs[0] = strconv.ParseUint(dev, 10, 64)
	k.ino, errs[1] = strconv.ParseUint(ino, 10, 64)
	k.size, errs[2] = strconv.ParseInt(parts[1], 10, 64)
	k.mtime, errs[3] = strconv.ParseInt(parts[2], 10, 64)
	p, ok2 := unescapePath(parts[3])
	if !ok1 || !ok2 || p == "" || errors.Join(errs[:]...) != nil {
		return "", fileKey{}, false
	}
	return p, k, true
}

// batchFile is one file of an extractFiles task: its escaped path, and
// the provider id of the stored version it replaces, if any.
type batchFile struct {
	Path     string `json:"p"`
	Replaces string `json:"r,omitempty"`
	// NameOnly: a file the extractor does not read, or too large; it is
	// stored by name and path without being opened.
	NameOnly bool `json:"n,omitempty"`
}

// connected is one connected folder.
type connected struct {
	path   string
	cfg    Config
	ext    *extract.Extractor
	stored func() ([]string, error)
	known  func(string) bool
}

func newFolder(env integrations.Env, cfg Config) (integrations.Integration, error) {
	p := env.Credentials.Fields[FieldPath]
	if !filepath.IsAbs(p) {
		return nil, errors.New("folder: stored credentials hold no absolute path")
	}
	known := env.Known
	if known == nil {
		known = func(string) bool { return false }
	}
	stored := env.ProviderIDs
	if stored == nil {
		stored = func() ([]string, error) { return nil, nil }
	}
	return &connected{path: p, cfg: cfg, ext: extract.New(cfg.Extract), stored: stored, known: known}, nil
}

// errGone is the record's error when the folder cannot be opened: it is
// retried, since a NAS may be back at the next sync.
const errGone = "the folder cannot be read: it is gone, not mounted, or the service may not read it"

// errNotAllowed is the record's error when the folder is no longer under
// FOLDER_ROOTS.
const errNotAllowed = "the folder is no longer under the folders the administrator allows (" + Setting + ")"

// Initialize checks that the folder is still allowed.
func (c *connected) Initialize(context.Context) error {
	if _, ok := under(c.cfg.Roots, c.path); !ok {
		return &integrations.ExplainedError{Message: errNotAllowed, Err: integrations.ErrReauthRequired}
	}
	return nil
}

// ValidateAuthentication reports whether the folder is still under one
// of the roots; a folder that is not must be connected again.
func (c *connected) ValidateAuthentication(context.Context) (bool, error) {
	_, ok := under(c.cfg.Roots, c.path)
	return ok, nil
}

// Shutdown has nothing to release: each task opens and closes the folder.
func (c *connected) Shutdown(context.Context) error { return nil }

// RunTask runs start and extractFiles.
func (c *connected) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	root, err := os.OpenRoot(c.path)
	if err != nil {
		return integrations.TaskResult{}, &integrations.ExplainedError{Message: errGone, Err: err}
	}
	defer root.Close()
	switch task.Type {
	case integrations.TaskStart:
		return c.start(root)
	case TaskExtractFiles:
		var files []batchFile
		if err := json.Unmarshal([]byte(task.Payload[payloadFiles]), &files); err != nil || len(files) == 0 || len(files) > batchFiles {
			return integrations.TaskResult{}, fmt.Errorf("folder extractFiles: invalid payload: %w", integrations.ErrSkip)
		}
		return c.extractFiles(ctx, root, files), nil
	}
	return integrations.TaskResult{}, fmt.Errorf("folder task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
}

// start walks the folder and plans the sync.
func (c *connected) start(root *os.Root) (integrations.TaskResult, error) {
	w, err := walk(root, c.cfg.Walk)
	if err != nil {
		return integrations.TaskResult{}, &integrations.ExplainedError{Message: errGone, Err: err}
	}
	pids, err := c.stored()
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("folder: read stored items: %w", err)
	}
	res := plan(w.files, pids, c.cfg)
	res.State = map[string]string{stateStatus: w.status(c.cfg.Walk)}
	return res, nil
}

// plan compares a listing with the stored provider ids (see the task
// list above). It opens no file.
func plan(files []entry, storedIDs []string, cfg Config) integrations.TaskResult {
	var res integrations.TaskResult
	stored := make(map[string]*storedFile, len(storedIDs))
	var order []string // stored ids of this package, in the order given
	for _, pid := range storedIDs {
		p, k, ok := parseProviderID(pid)
		if !ok {
			res.Removed = append(res.Removed, pid) // not this package's: garbage
			continue
		}
		stored[pid] = &storedFile{path: p, key: k}
		order = append(order, pid)
	}
	var fresh []entry
	for _, e := range files {
		if o, ok := stored[providerID(e.path, e.key)]; ok {
			o.used = true
			continue
		}
		fresh = append(fresh, e)
	}
	// Moves first, so that a file moved away is re-keyed even when a new
	// file now stands at its old path.
	fresh = rekeyMoved(fresh, stored, order, &res)
	byPath := map[string]string{}
	for _, pid := range order {
		if !stored[pid].used {
			byPath[stored[pid].path] = pid
		}
	}
	b := batcher{res: &res}
	for _, e := range fresh {
		var replaces string
		if r, ok := byPath[e.path]; ok && !stored[r].used {
			stored[r].used = true
			replaces = r
		}
		b.add(e, replaces, e.key.size > cfg.MaxFileSize || extract.TypeOf(e.path) == extract.TypeOther)
	}
	b.flush()
	for _, pid := range order {
		if !stored[pid].used {
			res.Removed = append(res.Removed, pid)
		}
	}
	return res
}

// rekeyMoved re-keys the stored items of files listed at another path
// with the same device, inode, size and modification time (renamed or
// moved), and returns the fresh files that are not such.
func rekeyMoved(fresh []entry, stored map[string]*storedFile, order []string, res *integrations.TaskResult) []entry {
	byKey := map[fileKey][]string{}
	for _, pid := range order {
		if o := stored[pid]; !o.used && o.key.ino != 0 {
			byKey[o.key] = append(byKey[o.key], pid)
		}
	}
	if len(byKey) == 0 {
		return fresh
	}
	out := fresh[:0:0]
	for _, e := range fresh {
		moved := takeFirst(byKey[e.key], stored)
		if moved == "" {
			out = append(out, e)
			continue
		}
		stored[moved].used = true
		res.Rekeyed = append(res.Rekeyed, integrations.Rekey{From: moved, To: providerID(e.path, e.key),
			Title: cleanName(path.Base(e.path)), Path: cleanName(e.path)})
	}
	return out
}

// batcher puts the files to read into extractFiles tasks of at most
// batchFiles files and batchBytes bytes.
type batcher struct {
	res   *integrations.TaskResult
	files []batchFile
	bytes int64
}

// add puts e in the batch; nameOnly files are not read, and their bytes
// do not count.
func (b *batcher) add(e entry, replaces string, nameOnly bool) {
	size := e.key.size
	if nameOnly {
		size = 0
	}
	if len(b.files) == batchFiles || (len(b.files) > 0 && b.bytes+size > batchBytes) {
		b.flush()
	}
	b.files = append(b.files, batchFile{Path: escapePath(e.path), Replaces: replaces, NameOnly: nameOnly})
	b.bytes += size
}

func (b *batcher) flush() {
	if len(b.files) == 0 {
		return
	}
	raw, _ := json.Marshal(b.files)
	b.res.Tasks = append(b.res.Tasks, integrations.Task{Type: TaskExtractFiles, Payload: map[string]string{payloadFiles: string(raw)}, Items: len(b.files)})
	b.files, b.bytes = nil, 0
}

// storedFile is a stored item's file as its provider id says, and
// whether the plan has accounted for it.
type storedFile struct {
	path string
	key  fileKey
	used bool
}

// takeFirst returns the first of pids not yet used, "" if none.
func takeFirst(pids []string, stored map[string]*storedFile) string {
	for _, pid := range pids {
		if !stored[pid].used {
			return pid
		}
	}
	return ""
}

// item is the item of the file p: its name as title, its path inside the
// folder, its modification time as date; its text the path and what the
// extractor read.
func item(p string, k fileKey, text string) integrations.Item {
	shown := cleanName(p)
	if text != "" {
		shown += "\n\n" + text
	}
	return integrations.Item{
		ProviderID: providerID(p, k), Title: cleanName(path.Base(p)), Path: cleanName(p),
		Date: time.Unix(0, k.mtime).UTC(), Size: k.size, Text: shown,
	}
}

// extractFiles opens, reads and extracts a batch of files. A file gone
// since the listing removes the version it replaces; one that cannot be
// opened now is left for the next sync.
func (c *connected) extractFiles(ctx context.Context, root *os.Root, files []batchFile) integrations.TaskResult {
	var res integrations.TaskResult
	for _, bf := range files {
		if ctx.Err() != nil {
			break
		}
		p, ok := unescapePath(bf.Path)
		if !ok || p == "" {
			continue
		}
		var it integrations.Item
		var err error
		if bf.NameOnly {
			it, err = nameOnly(root, p)
		} else {
			it, err = c.read(root, p)
		}
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			continue
		case it.ProviderID == bf.Replaces:
			continue
		default:
			if !c.known(it.ProviderID) {
				res.Output = append(res.Output, it)
			}
		}
		if bf.Replaces != "" {
			res.Removed = append(res.Removed, bf.Replaces)
		}
	}
	return res
}

// read opens the file p (never through a symbolic link at its end, and
// never outside the folder: root), checks it is still a regular file and
// makes its item.
func (c *connected) read(root *os.Root, p string) (integrations.Item, error) {
	f, err := c.cfg.Open(root, p)
	if err != nil {
		return integrations.Item{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return integrations.Item{}, err
	}
	if !info.Mode().IsRegular() {
		return integrations.Item{}, errors.New("not a regular file")
	}
	dev, ino := fileID(info)
	k := fileKey{dev: dev, ino: ino, size: info.Size(), mtime: info.ModTime().UnixNano()}
	if k.size > c.cfg.MaxFileSize {
		return item(p, k, ""), nil
	}
	data, err := io.ReadAll(io.LimitReader(f, c.cfg.MaxFileSize+1))
	if err != nil {
		return integrations.Item{}, err
	}
	var text string
	if r := c.ext.Extract(path.Base(p), data); r.Err == nil {
		text = r.Text
	}
	return item(p, k, text), nil
}

// nameOnly makes the item of the file p from its metadata (lstat, no
// open): a file the extractor does not read, or too large.
func nameOnly(root *os.Root, p string) (integrations.Item, error) {
	info, err := root.Lstat(p)
	if err != nil {
		return integrations.Item{}, err
	}
	if !info.Mode().IsRegular() {
		return integrations.Item{}, errors.New("not a regular file")
	}
	dev, ino := fileID(info)
	return item(p, fileKey{dev: dev, ino: ino, size: info.Size(), mtime: info.ModTime().UnixNano()}, ""), nil
}

// details says of the folder how its last listing went.
func details(c integrations.Credentials, state func(string) string) []integrations.SourceDetail {
	return []integrations.SourceDetail{{Source: c.Fields[FieldPath], Status: state(stateStatus)}}
}
