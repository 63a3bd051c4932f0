package slack

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
)

// The sync of a Slack workspace, in tasks:
//
//   - start gives a listConversations task;
//   - listConversations lists one page of the conversations the user is
//     in and gives a history task for each, and a listConversations task
//     for the next page;
//   - history reads one page of a conversation's messages, newest first,
//     after its oldest: the newest RecheckWindow messages (of any kind)
//     and everything since, so that a second sync with nothing new costs one
//     call per conversation, and an edit or a deletion among the recent
//     messages is seen. A thread parent whose reply count or latest reply
//     differs from the replies stored gives a replies task;
//   - replies reads one page of a thread.
//
// A message's provider id is "channel/ts", a reply's
// "channel/thread/ts", with "@edited-ts" once edited: an edit gives a new
// id, so the edited message is stored and the version before it removed.
// A message stored within the range a page covers but absent from it was
// deleted (Slack shows only a deleted thread parent, as a tombstone) and
// is removed. Every task carries its conversation, title, oldest and
// cursor, and the bound of the range the pages before it covered, so a
// task run again after a 429 or a restart goes on from where it stopped.
const (
	TaskListConversations = "listConversations"
	TaskHistory           = "history"
	TaskReplies           = "replies"
)

// RecheckWindow is how many of a conversation's newest messages (joins
// included) each sync reads again, for their edits, deletions and new
// replies.
const RecheckWindow = 100

// Task payload keys.
const (
	payloadCursor  = "cursor"
	payloadChannel = "channel"
	payloadTitle   = "title"
	payloadOldest  = "oldest"
	payloadBefore  = "before" // history: the oldest ts of the pages before; "" for the first page
	payloadThread  = "thread"
	payloadAfter   = "after" // replies: the newest ts of the pages before
	payloadPage    = "page"  // listConversations: the pages before
	payloadCount   = "count" // history: the messages of the pages before
	payloadMark    = "mark"  // history: the ts before the newest RecheckWindow messages, once known
)

// storedSubtypes are the message subtypes stored: what people wrote.
// Joins, topic changes and the like are not.
var storedSubtypes = map[string]bool{"": true, "bot_message": true, "thread_broadcast": true, "file_share": true, "me_message": true}

// syncer runs the tasks of one instance.
type syncer struct {
	api    *Client
	known  func(string) bool
	stored func() ([]string, error)
	state  func(string) string // Env.State; nil: nothing kept

	mu     sync.Mutex
	loaded bool
	convs  map[string]*convIndex
}

// convIndex is what is stored of one conversation, by ts.
type convIndex struct {
	top     map[string][]string            // ts → provider ids of the message
	replies map[string]map[string][]string // thread ts → reply ts → provider ids
}

// RunTask runs the message tasks (see TaskListConversations). A task type
// other than these is a bug of the queue: it fails with
// ErrUnsupportedTask.
func (w *workspace) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	p := task.Payload
	switch task.Type {
	case integrations.TaskStart:
		return integrations.TaskResult{Tasks: []integrations.Task{{Type: TaskListConversations}}}, nil
	case TaskListConversations:
		return w.sync.conversations(ctx, p[payloadCursor], p[payloadPage])
	case TaskHistory:
		return w.sync.history(ctx, p)
	case TaskReplies:
		return w.sync.thread(ctx, p)
	}
	return integrations.TaskResult{}, fmt.Errorf("slack task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
}

func (s *syncer) conversations(ctx context.Context, cursor, pageN string) (integrations.TaskResult, error) {
	n, err := strconv.Atoi(pageN)
	if pageN == "" && cursor == "" {
		n, err = 0, nil // the first page
	}
	if err != nil || n < 0 || n >= maxConvPages {
		return integrations.TaskResult{}, fmt.Errorf("slack listConversations: page: %w", ErrInvalidArgument)
	}
	page, err := s.api.Conversations(ctx, cursor)
	if cursor != "" && expiredCursor(err) {
		return restart(TaskListConversations, nil), nil
	}
	if err != nil {
		return integrations.TaskResult{}, err
	}
	if err := s.load(); err != nil {
		return integrations.TaskResult{}, err
	}
	var res integrations.TaskResult
	ids := make([]string, 0, len(page.Conversations))
	for _, conv := range page.Conversations {
		ids = append(ids, conv.ID)
		title, err := s.api.Title(ctx, conv)
		if errors.Is(err, ErrInvalidArgument) || isUnknownUser(err) {
			title = "DM"
		} else if err != nil {
			return integrations.TaskResult{}, err
		}
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskHistory, Payload: map[string]string{
			payloadChannel: conv.ID, payloadTitle: title, payloadOldest: s.oldest(conv.ID),
		}})
	}
	switch {
	case page.NextCursor != "":
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskListConversations, Payload: map[string]string{
			payloadCursor: page.NextCursor, payloadPage: strconv.Itoa(n + 1)}})
		res.State = s.listedState(n, ids)
		return res, nil
	}
	res.Removed, res.State = s.unlisted(n, ids)
	return res, nil
}

func (s *syncer) history(ctx context.Context, p map[string]string) (integrations.TaskResult, error) {
	channel, oldest, before, mark := p[payloadChannel], p[payloadOldest], p[payloadBefore], p[payloadMark]
	count, err := strconv.Atoi(p[payloadCount])
	if p[payloadCount] == "" {
		count, err = 0, nil
	}
	if !validTS(before, true) || !validTS(mark, true) || err != nil || count < 0 {
		return integrations.TaskResult{}, fmt.Errorf("slack history: before: %w", ErrInvalidArgument)
	}
	page, err := s.api.History(ctx, channel, oldest, p[payloadCursor])
	if p[payloadCursor] != "" && expiredCursor(err) {
		return restart(TaskHistory, map[string]string{payloadChannel: channel, payloadTitle: p[payloadTitle], payloadOldest: oldest}), nil
	}
	if err != nil {
		return integrations.TaskResult{}, err
	}
	if err := s.load(); err != nil {
		return integrations.TaskResult{}, err
	}
	var res integrations.TaskResult
	seen := map[string]bool{}
	low := ""
	for _, m := range page.Messages {
		if m.ThreadTS != "" && m.ThreadTS != m.TS {
			// A reply also sent to the channel: stored once, as a reply.
			if err := s.message(ctx, &res, channel, m.ThreadTS, p[payloadTitle], m); err != nil {
				return integrations.TaskResult{}, err
			}
			continue
		}
		seen[m.TS] = true
		if low == "" || compareTS(m.TS, low) < 0 {
			low = m.TS
		}
		if m.Deleted() {
			res.Removed = append(res.Removed, s.drop(channel, "", m.TS, "")...)
		} else if err := s.message(ctx, &res, channel, "", p[payloadTitle], m); err != nil {
			return integrations.TaskResult{}, err
		}
		if m.ReplyCount > 0 && s.threadChanged(channel, m) {
			res.Tasks = append(res.Tasks, integrations.Task{Type: TaskReplies, Payload: map[string]string{
				payloadChannel: channel, payloadTitle: p[payloadTitle], payloadThread: m.TS,
			}})
		}
	}
	// The range this page covers: down to its oldest message while more
	// follow, else down to oldest; up to the pages before it.
	last := page.NextCursor == ""
	from, inclusive := low, true
	if last {
		from, inclusive = oldest, false
	}
	res.Removed = append(res.Removed, s.missing(channel, from, inclusive, before, seen)...)
	if mark == "" {
		mark = windowMark(page.Messages, count)
	}
	if !last {
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskHistory, Payload: map[string]string{
			payloadChannel: channel, payloadTitle: p[payloadTitle], payloadOldest: oldest,
			payloadCursor: page.NextCursor, payloadBefore: low,
			payloadCount: strconv.Itoa(count + len(page.Messages)), payloadMark: mark,
		}})
		return res, nil
	}
	// The read is complete: the next one starts before the newest
	// RecheckWindow messages, or where this one started when it read
	// fewer.
	next := cmp.Or(mark, oldest)
	if next != "" && next != s.value(windowKey(channel)) {
		res.State = map[string]string{windowKey(channel): next}
	}
	return res, nil
}

func (s *syncer) thread(ctx context.Context, p map[string]string) (integrations.TaskResult, error) {
	channel, thread, after := p[payloadChannel], p[payloadThread], p[payloadAfter]
	if !validTS(after, true) {
		return integrations.TaskResult{}, fmt.Errorf("slack replies: after: %w", ErrInvalidArgument)
	}
	page, err := s.api.Replies(ctx, channel, thread, "", p[payloadCursor])
	if p[payloadCursor] != "" && expiredCursor(err) {
		return restart(TaskReplies, map[string]string{payloadChannel: channel, payloadTitle: p[payloadTitle], payloadThread: thread}), nil
	}
	if err != nil {
		return integrations.TaskResult{}, err
	}
	if err := s.load(); err != nil {
		return integrations.TaskResult{}, err
	}
	var res integrations.TaskResult
	seen := map[string]bool{}
	high := after
	for _, m := range page.Messages {
		if m.TS == thread {
			continue // the parent, stored from the history
		}
		seen[m.TS] = true
		if high == "" || compareTS(m.TS, high) > 0 {
			high = m.TS
		}
		if err := s.message(ctx, &res, channel, thread, p[payloadTitle], m); err != nil {
			return integrations.TaskResult{}, err
		}
	}
	last := page.NextCursor == ""
	s.mu.Lock()
	ci := s.conv(channel)
	for ts := range ci.replies[thread] {
		if seen[ts] || after != "" && compareTS(ts, after) <= 0 || !last && compareTS(ts, high) > 0 {
			continue
		}
		res.Removed = append(res.Removed, s.dropLocked(channel, thread, ts, "")...)
	}
	s.mu.Unlock()
	if !last {
		res.Tasks = append(res.Tasks, integrations.Task{Type: TaskReplies, Payload: map[string]string{
			payloadChannel: channel, payloadTitle: p[payloadTitle], payloadThread: thread,
			payloadCursor: page.NextCursor, payloadAfter: high,
		}})
	}
	return res, nil
}

// message adds m (a message, or a reply in thread) to res unless its
// version is stored, with the removal of the versions it replaces.
func (s *syncer) message(ctx context.Context, res *integrations.TaskResult, channel, thread, title string, m Message) error {
	if !storedSubtypes[m.Subtype] || m.Text == "" {
		return nil
	}
	edited := ""
	if m.Edited != nil && validTS(m.Edited.TS, false) {
		edited = m.Edited.TS
	}
	pid := providerID(channel, thread, m.TS, edited)
	res.Removed = append(res.Removed, s.drop(channel, thread, m.TS, pid)...)
	if s.known(pid) {
		s.add(pid)
		return nil
	}
	from := ""
	if m.User != "" {
		u, err := s.api.User(ctx, m.User)
		switch {
		case err == nil:
			from = u.DisplayName()
		case errors.Is(err, ErrInvalidArgument), isUnknownUser(err):
			from = m.User
		default:
			return err
		}
	}
	res.Output = append(res.Output, integrations.Item{
		ProviderID: pid, Title: title, From: from, Date: m.Time(), Size: int64(len(m.Text)), Text: m.Text,
	})
	s.add(pid)
	return nil
}

// expiredCursor reports Slack's answer to a cursor it no longer takes
// (one kept across a long wait): the pages are read again from the first,
// which stores nothing twice.
func expiredCursor(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == "invalid_cursor"
}

// restart is the result of a task whose cursor expired: the same task from
// its first page.
func restart(typ string, payload map[string]string) integrations.TaskResult {
	return integrations.TaskResult{Tasks: []integrations.Task{{Type: typ, Payload: payload}}}
}

// isUnknownUser reports a users.info answer for a member Slack no longer
// knows: the message keeps the member's id as its sender.
func isUnknownUser(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == "user_not_found"
}
