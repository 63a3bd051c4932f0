package imap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"searchsvc/integrations"
)

// Task types of an IMAP sync, besides integrations.TaskStart.
const (
	// TaskSyncFolder plans one folder: EXAMINE, and unless nothing
	// changed, UID SEARCH and the envelopes of what is not stored.
	TaskSyncFolder = "syncFolder"
	// TaskFetchMessages downloads one batch of a folder's plan.
	TaskFetchMessages = "fetchMessages"
	// TaskFolderDone stores a folder's state once its plan is done.
	TaskFolderDone = "folderDone"
)

// Task payload keys.
const (
	payloadFolder      = "folder"
	payloadUse         = "use" // the folder's Mailbox.Use
	payloadUIDValidity = "uidValidity"
	payloadUIDs        = "uids"
	payloadHeadersOnly = "headersOnly"
	payloadState       = "state"
)

// ErrInvalidPayload fails a task whose payload cannot have come from
// this package; no command is sent.
var ErrInvalidPayload = fmt.Errorf("imap: invalid task payload: %w", integrations.ErrSkip)

// errFolderRefused skips the task of a folder the server would not
// examine. The server's text is left out: it may name the folder, and the
// error is logged.
var errFolderRefused = fmt.Errorf("the server refused to open the folder: %w", integrations.ErrSkip)

// RunTask runs the tasks of an IMAP sync, each on the session's one
// connection:
//
//   - start lists the mailboxes (LIST), chooses the folders (SyncedFolders),
//     removes the items of folders no longer synced (GoneFolders) and gives
//     a syncFolder task per folder;
//   - syncFolder examines the folder; if EXAMINE proves nothing changed
//     (Unchanged) that is all. Otherwise it plans (PlanFolder) against the
//     stored items: expunged mail is removed and renumbered mail re-keyed
//     with this task's commit, and it gives a fetchMessages task per
//     download batch (its Items the batch's messages, which the record's
//     itemsLeft counts), then a folderDone task;
//   - fetchMessages downloads one batch (BODY.PEEK[]) and outputs its
//     messages as items; each is committed with its task, so a restart
//     resumes at the first batch not stored;
//   - folderDone keeps the folder's state (UIDVALIDITY, UIDNEXT, highest
//     UID) as the record's sync state, committed with the batch it ends,
//     so that the next sync of an unchanged folder is one EXAMINE.
//
// A folder renumbered between its plan and a batch (UIDVALIDITY changed)
// makes the batch download nothing: the next sync plans it again.
func (m *mailbox) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	var (
		res integrations.TaskResult
		err error
	)
	switch task.Type {
	case integrations.TaskStart:
		res, err = m.start(ctx)
	case TaskSyncFolder:
		res, err = m.syncFolder(ctx, task.Payload[payloadFolder], task.Payload[payloadUse])
	case TaskFetchMessages:
		res, err = m.fetchMessages(ctx, task.Payload)
	case TaskFolderDone:
		res, err = m.folderDone(task.Payload[payloadState])
	default:
		return res, fmt.Errorf("imap task %q: %w", clipText(task.Type), integrations.ErrUnsupportedTask)
	}
	if err != nil && !errors.Is(err, integrations.ErrSkip) {
		return integrations.TaskResult{}, m.taskError(ctx, err)
	}
	return res, err
}

// start lists the folders, removes the items of those gone, and gives a
// syncFolder task per folder.
func (m *mailbox) start(ctx context.Context) (integrations.TaskResult, error) {
	var res integrations.TaskResult
	c, err := m.conn(ctx)
	if err != nil {
		return res, err
	}
	list, err := c.List(ctx)
	if err != nil {
		return res, fmt.Errorf("imap: list: %w", err)
	}
	folders := SyncedFolders(list)
	stored, err := m.listStored()
	if err != nil {
		return res, err
	}
	ids := make([]ID, len(stored))
	for i := range stored {
		ids[i] = stored[i].id
	}
	gone := GoneFolders(ids, folders)
	for _, s := range stored {
		if slices.Contains(gone, s.id.Folder) {
			res.Removed = append(res.Removed, s.pid)
		}
	}
	// Forget the states of folders listed but no longer synced, and of
	// folders gone with their items.
	read := make(map[string]bool, len(folders))
	for _, f := range folders {
		read[f.Name] = true
	}
	forget := func(name string) {
		k := stateKey + name
		switch {
		case read[name]:
		case m.kept != nil && m.kept(k) != "":
			if res.State == nil {
				res.State = map[string]string{}
			}
			res.State[k] = ""
		}
	}
	for _, mb := range list {
		forget(mb.Name)
	}
	for _, name := range gone {
		forget(name)
	}
	for _, f := range folders {
		p := map[string]string{payloadFolder: f.Name}
		if use := f.Use(); use != "" {
			p[payloadUse] = use
		}
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskSyncFolder, Payload: p})
	}
	return res, nil
}

// syncFolder plans one folder.
func (m *mailbox) syncFolder(ctx context.Context, folder, use string) (integrations.TaskResult, error) {
	var res integrations.TaskResult
	if folder == "" || len(folder) > maxIDLen {
		return res, fmt.Errorf("imap syncFolder: %w", ErrInvalidPayload)
	}
	c, err := m.conn(ctx)
	if err != nil {
		return res, err
	}
	st, err := m.examine(ctx, c, folder)
	var se *ServerError
	if errors.As(err, &se) && se.Status == "NO" {
		// Gone between LIST and EXAMINE: the next start removes its items
		// if LIST no longer shows it.
		return res, fmt.Errorf("imap: examine: %w", errFolderRefused)
	}
	if err != nil {
		return res, fmt.Errorf("imap: examine: %w", err)
	}
	stored, err := m.folderItems(folder)
	if err != nil {
		return res, err
	}
	ids := make([]ID, len(stored))
	pids := make(map[ID]string, len(stored))
	for i, s := range stored {
		ids[i] = s.id
		pids[s.id] = s.pid
	}
	state := m.state(folder)
	if Unchanged(state, ids, st) {
		return res, nil
	}
	plan, err := c.Plan(ctx, folder, st, ids, m.limits)
	if err != nil {
		return res, err
	}
	for _, id := range plan.Delete {
		res.Removed = append(res.Removed, pids[id])
	}
	for _, rk := range plan.Rekey {
		res.Rekeyed = append(res.Rekeyed, integrations.Rekey{From: pids[rk.From], To: rk.To.String()})
	}
	validity := strconv.FormatUint(uint64(st.UIDValidity), 10)
	for _, b := range plan.Batches {
		p := map[string]string{payloadFolder: folder, payloadUIDValidity: validity, payloadUIDs: b.UIDs.String()}
		if b.HeadersOnly {
			p[payloadHeadersOnly] = "true"
		}
		if use != "" {
			p[payloadUse] = use
		}
		// Items makes the record's view count the batch's messages as
		// items left to download while the task is queued.
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskFetchMessages, Payload: p, Items: b.UIDs.Len()})
	}
	if plan.State != state {
		b, err := json.Marshal(plan.State)
		if err != nil {
			return integrations.TaskResult{}, err
		}
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskFolderDone, Payload: map[string]string{payloadState: string(b)}})
	}
	return res, nil
}

// fetchMessages downloads one batch.
func (m *mailbox) fetchMessages(ctx context.Context, p map[string]string) (integrations.TaskResult, error) {
	var res integrations.TaskResult
	folder := p[payloadFolder]
	validity, err1 := parseUID(p[payloadUIDValidity])
	uids, err2 := ParseUIDSet(p[payloadUIDs])
	if folder == "" || len(folder) > maxIDLen || err1 != nil || err2 != nil || uids.Len() == 0 {
		return res, fmt.Errorf("imap fetchMessages: %w", ErrInvalidPayload)
	}
	c, err := m.conn(ctx)
	if err != nil {
		return res, err
	}
	st, err := m.examine(ctx, c, folder)
	var se *ServerError
	if errors.As(err, &se) && se.Status == "NO" {
		return res, fmt.Errorf("imap: examine: %w", errFolderRefused)
	}
	if err != nil {
		return res, fmt.Errorf("imap: examine: %w", err)
	}
	if st.UIDValidity != validity {
		return res, nil
	}
	res.Output, err = c.DownloadBatch(ctx, folder, validity, Batch{UIDs: uids, HeadersOnly: p[payloadHeadersOnly] == "true"})
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("imap: fetch: %w", err)
	}
	for i := range res.Output {
		res.Output[i].Folder, res.Output[i].FolderUse = FolderName(folder), p[payloadUse]
	}
	return res, nil
}

// folderDone keeps a folder's state: its sync state key, committed in
// the log line of the batch that runs this task, after the folder's
// downloads.
func (m *mailbox) folderDone(state string) (integrations.TaskResult, error) {
	var st FolderState
	if err := json.Unmarshal([]byte(state), &st); err != nil || st.Name == "" || len(st.Name) > maxIDLen {
		return integrations.TaskResult{}, fmt.Errorf("imap folderDone: %w", ErrInvalidPayload)
	}
	k, v, err := stateValue(st)
	if err != nil {
		return integrations.TaskResult{}, err
	}
	return integrations.TaskResult{State: map[string]string{k: v}}, nil
}
