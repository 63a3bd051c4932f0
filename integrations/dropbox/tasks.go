package dropbox

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/textguard"
)

// The sync of a Dropbox account, in tasks:
//
//   - start gives one listFiles task, continuing from the cursor the
//     record keeps (Env.State), or a full listing if it keeps none;
//   - listFiles lists one page (files/list_folder recursive, or
//     list_folder/continue from its cursor): a deleted entry removes the
//     items under its path; a file whose version is stored is skipped; a
//     file of a type extract reads and within MaxFileSize gives a
//     downloadFile task; any other file becomes a name-and-path item at
//     once. It keeps the page's cursor, so the next sync sees only what
//     changed after it, and gives a listFiles task for the next page;
//   - downloadFile downloads one file and stores it with its text.
//
// An item's provider id holds the file's id, content hash and lower-case
// path (providerID): a file whose content or path changed has a new one,
// so its new version is stored and the old one removed in the same pass,
// and a file listed again unchanged (after a cursor reset, or from a
// retried page) is known and not downloaded.
const (
	TaskListFiles    = "listFiles"
	TaskDownloadFile = "downloadFile"
)

// Task payload keys and the kept state's key.
const (
	payloadCursor = "cursor"
	payloadID     = "id"
	payloadFull   = "full" // "1": a page of a full listing over stored items
	stateCursor   = "cursor"
	// payloadPage and stateSeenPages: a full listing keeps the hashes of
	// each page's files under a key of their own, seenKey(page), so a
	// page writes its own hashes and not those of the pages before it;
	// stateSeenPages is how many pages it kept, so a listing whose task
	// was dropped goes on as a full listing at the next sync, and one
	// that starts over forgets them.
	payloadPage    = "page"
	stateSeenPages = "seenPages"
	maxSeenPages   = 100000
)

// seenKey is the state key of the hashes of a full listing's page n.
func seenKey(n int) string { return "seen." + strconv.Itoa(n) }

// seenHashLen is the bytes of a provider id's hash kept in a page's seen
// key (seenKey).
const seenHashLen = 8

// DefaultMaxFileSize is the largest file downloaded for its text, in
// bytes (10 MiB); a larger one is stored by name and path only.
const DefaultMaxFileSize = 10 << 20

// Config sets the limits of the sync; zero fields take the defaults.
type Config struct {
	// MaxFileSize is the largest file downloaded (DefaultMaxFileSize).
	MaxFileSize int64
	// Extract bounds the text extraction (extract.DefaultLimits); its
	// MaxInput is raised to MaxFileSize.
	Extract extract.Limits
}

func (c Config) withDefaults() Config {
	if c.MaxFileSize <= 0 {
		c.MaxFileSize = DefaultMaxFileSize
	}
	if c.Extract.MaxInput < c.MaxFileSize {
		c.Extract.MaxInput = c.MaxFileSize
	}
	return c
}

// sync is the part of a connected account that runs tasks.
type syncer struct {
	api    *Client
	ext    *extract.Extractor
	max    int64
	known  func(string) bool
	stored func() ([]string, error)
	state  func(string) string

	mu     sync.Mutex
	loaded bool
	byID   map[string][]string // stored provider ids by file id
	byPath map[string][]string // stored provider ids by lower-case path
}

// RunTask runs the file tasks (see TaskListFiles). A task type other than
// these is a bug of the queue: it fails with ErrUnsupportedTask.
func (a *account) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	switch task.Type {
	case integrations.TaskStart:
		next := integrations.Task{Type: TaskListFiles}
		if c := a.sync.state(stateCursor); c != "" {
			next.Payload = map[string]string{payloadCursor: c}
			if n := a.sync.seenPages(); n > 0 {
				// A full listing whose page task was dropped: it goes on.
				next.Payload[payloadFull], next.Payload[payloadPage] = "1", strconv.Itoa(n)
			}
		}
		return integrations.TaskResult{Tasks: []integrations.Task{next}}, nil
	case TaskListFiles:
		n, err := strconv.Atoi(task.Payload[payloadPage])
		if task.Payload[payloadPage] == "" {
			n, err = 0, nil
		}
		if err != nil || n < 0 || n >= maxSeenPages {
			return integrations.TaskResult{}, fmt.Errorf("dropbox listFiles: page: %w", integrations.ErrSkip)
		}
		return a.sync.list(ctx, task.Payload[payloadCursor], task.Payload[payloadFull] == "1", n)
	case TaskDownloadFile:
		return a.sync.download(ctx, task.Payload[payloadID])
	}
	return integrations.TaskResult{}, fmt.Errorf("dropbox task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
}

// list runs listFiles from cursor ("" for a full listing); full marks the
// later pages of a full listing that started over stored items, n the
// pages of it before this one.
func (s *syncer) list(ctx context.Context, cursor string, full bool, n int) (integrations.TaskResult, error) {
	var page Page
	var err error
	if cursor == "" {
		page, err = s.api.ListFolder(ctx, "")
	} else {
		page, err = s.api.ListFolderContinue(ctx, cursor)
	}
	if errors.Is(err, ErrCursorReset) {
		// List everything again; what is stored unchanged is known.
		return integrations.TaskResult{
			Tasks: []integrations.Task{{Type: TaskListFiles}},
			State: map[string]string{stateCursor: ""},
		}, nil
	}
	if err != nil {
		return integrations.TaskResult{}, err
	}
	if err := s.load(); err != nil {
		return integrations.TaskResult{}, err
	}
	res := integrations.TaskResult{State: map[string]string{stateCursor: page.Cursor}}
	if cursor == "" {
		// A listing that starts over forgets what an earlier one kept.
		full, n = s.storedCount() > 0, 0
		s.forgetSeen(res.State)
	}
	seen := s.applyPage(page, full, &res)
	switch {
	case page.HasMore:
		next := map[string]string{payloadCursor: page.Cursor}
		if full {
			next[payloadFull], next[payloadPage] = "1", strconv.Itoa(n+1)
			res.State[seenKey(n)] = base64.RawStdEncoding.EncodeToString(seen)
			res.State[stateSeenPages] = strconv.Itoa(n + 1)
		}
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskListFiles, Payload: next})
	case full:
		for k := range n {
			seen = append(seen, decodeSeen(s.state(seenKey(k)))...)
		}
		res.Removed = append(res.Removed, s.unseen(seen)...)
		s.forgetSeen(res.State)
	}
	return res, nil
}

// applyPage puts the entries of page in res: the items removed, re-keyed
// and listed by name only, and a download task for each other new file.
// When full it returns the seen hashes of the page's files.
func (s *syncer) applyPage(page Page, full bool, res *integrations.TaskResult) (seen []byte) {
	// A file moved on this page (a renamed folder) has a deleted entry at
	// its old path and a file entry at its new one, in either order: it
	// is re-keyed by the file entry, not removed by the deleted one.
	listed := map[string]bool{}
	for _, e := range page.Entries {
		if e.Tag == TagFile {
			listed[e.ID] = true
		}
	}
	for _, e := range page.Entries {
		switch e.Tag {
		case TagDeleted:
			res.Removed = append(res.Removed, s.forget(func(path, id string) bool {
				return !listed[id] && (path == e.PathLower || strings.HasPrefix(path, e.PathLower+"/"))
			})...)
		case TagFile:
			pid := providerID(e)
			if full {
				seen = append(seen, seenHash(pid)...)
			}
			removed, moved := s.replaced(e, pid)
			res.Removed = append(res.Removed, removed...)
			if moved != "" {
				res.Rekeyed = append(res.Rekeyed, integrations.Rekey{From: moved, To: pid})
				s.remember(pid)
				continue
			}
			if s.known(pid) {
				s.remember(pid)
				continue
			}
			if e.Size > s.max || extract.TypeOf(e.Name) == extract.TypeOther {
				res.Output = append(res.Output, nameOnly(e, pid))
				s.remember(pid)
				continue
			}
			res.Tasks = append(res.Tasks, integrations.Task{Type: TaskDownloadFile, Payload: map[string]string{payloadID: e.ID}})
		}
	}
	return seen
}

// download runs downloadFile for the file id.
func (s *syncer) download(ctx context.Context, id string) (integrations.TaskResult, error) {
	meta, data, err := s.api.Download(ctx, id, s.max)
	if errors.Is(err, ErrFileTooLarge) && meta.ID == id {
		// It grew past the cap since it was listed.
		pid := providerID(meta)
		return integrations.TaskResult{Output: []integrations.Item{nameOnly(meta, pid)}}, nil
	}
	if err != nil {
		return integrations.TaskResult{}, err
	}
	if meta.ContentHash == "" {
		meta.ContentHash = ContentHash(data)
	}
	pid := providerID(meta)
	text := meta.PathDisplay
	if r := s.ext.Extract(meta.Name, data); r.Err == nil && r.Text != "" {
		text += "\n\n" + r.Text
	}
	s.remember(pid)
	return integrations.TaskResult{Output: []integrations.Item{{
		ProviderID: pid, Title: meta.Name, Date: meta.ServerModified, Size: meta.Size, Text: text,
	}}}, nil
}

// nameOnly is the item of a file that is not downloaded: too large, or
// of a type extract does not read. Its text is its path.
func nameOnly(e Entry, pid string) integrations.Item {
	return integrations.Item{ProviderID: pid, Title: e.Name, Date: e.ServerModified, Size: e.Size, Text: e.PathDisplay}
}

// providerID is an item's provider id: "id|content hash|lower-case path".
func providerID(e Entry) string { return e.ID + "|" + e.ContentHash + "|" + e.PathLower }

// parseProviderID splits a provider id; ok is false for one that is not
// providerID's.
func parseProviderID(pid string) (id, hash, path string, ok bool) {
	id, rest, ok1 := strings.Cut(pid, "|")
	hash, path, ok2 := strings.Cut(rest, "|")
	return id, hash, path, ok1 && ok2 && strings.HasPrefix(id, "id:")
}

// load reads the stored provider ids once per instance.
func (s *syncer) load() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return nil
	}
	s.byID, s.byPath = map[string][]string{}, map[string][]string{}
	if s.stored != nil {
		pids, err := s.stored()
		if err != nil {
			return fmt.Errorf("dropbox: read stored items: %w", err)
		}
		for _, pid := range pids {
			s.addLocked(pid)
		}
	}
	s.loaded = true
	return nil
}

func (s *syncer) addLocked(pid string) {
	id, _, path, ok := parseProviderID(pid)
	if !ok {
		return
	}
	s.byID[id] = append(s.byID[id], pid)
	s.byPath[path] = append(s.byPath[path], pid)
}

// remember notes a provider id stored or about to be.
func (s *syncer) remember(pid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		s.addLocked(pid)
	}
}

// replaced returns the stored versions of e other than pid: the same
// file with other content or at another path, or another file that was
// at e's path; and moved, the one with e's id and content at another
// path, which becomes pid without a download. It forgets them.
func (s *syncer) replaced(e Entry, pid string) (removed []string, moved string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, old := range slices.Concat(s.byID[e.ID], s.byPath[e.PathLower]) {
		if old != pid && !slices.Contains(out, old) {
			out = append(out, old)
		}
	}
	for _, old := range out {
		s.dropLocked(old)
		id, hash, _, _ := parseProviderID(old)
		if moved == "" && id == e.ID && hash == e.ContentHash && !slices.Contains(s.byID[e.ID], pid) {
			moved = old
			continue
		}
		removed = append(removed, old)
	}
	return removed, moved
}

// forget returns the stored provider ids whose path and file id match,
// and forgets them.
func (s *syncer) forget(match func(path, id string) bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for path, pids := range s.byPath {
		for _, pid := range pids {
			if id, _, _, _ := parseProviderID(pid); match(path, id) {
				out = append(out, pid)
			}
		}
	}
	for _, pid := range out {
		s.dropLocked(pid)
	}
	return out
}

func (s *syncer) dropLocked(pid string) {
	id, _, path, _ := parseProviderID(pid)
	s.byID[id] = without(s.byID[id], pid)
	if len(s.byID[id]) == 0 {
		delete(s.byID, id)
	}
	s.byPath[path] = without(s.byPath[path], pid)
	if len(s.byPath[path]) == 0 {
		delete(s.byPath, path)
	}
}

func without(list []string, s string) []string {
	out := list[:0:0]
	for _, v := range list {
		if v != s {
			out = append(out, v)
		}
	}
	return out
}
