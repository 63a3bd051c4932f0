package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
)

// Bounds of an item made from an entry.
const (
	maxIDLen    = 256     // longer entry ids are replaced by their hash
	maxTitleLen = 1 << 10 // bytes
	maxTextLen  = 1 << 20 // bytes, as for a mail body
)

// MaxNewEntries bounds the items one fetch adds. A 5 MiB feed can hold
// ~190,000 tiny entries; a hostile feed that changes its ids on every poll
// must not be able to add that many items (RAM, SD card) every
// POLL_INTERVAL. Feeds list newest first, so the newest are taken.
const MaxNewEntries = 200

// TaskGetFeed fetches one of a record's feeds; its payload holds the
// feed's address under FieldURL.
const TaskGetFeed = "getFeed"

// RunTask runs the feed tasks. A record that follows one feed fetches it
// in its start task. One that follows several gets a getFeed task per
// feed from its start, so that each feed's new entries are stored as it
// is fetched; a feed that fails (down, moved, no longer a feed) puts the
// record in error with a sentence naming its place in the list, and is
// fetched again at the next sync, while the other feeds go on.
//
// Fetching outputs one item per entry that Env.Known does not report, in
// the feed's order, and gives no follow-up tasks: a feed is one document,
// and the next sync fetches it again. For a single feed, an HTTP answer
// other than 200 gives an *integrations.APIError (429 and 5xx are
// temporary, with the server's Retry-After).
func (f *follower) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	switch {
	case task.Type == integrations.TaskStart && len(f.urls) == 1:
		res, err := f.fetch(ctx, f.urls[0])
		var ae *integrations.APIError
		if errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusGone) {
			// The feed gone from its address is not an item gone at the
			// provider, which a sync skips in silence: the record says it.
			return res, explain(ctx, err)
		}
		return res, err
	case task.Type == integrations.TaskStart:
		var res integrations.TaskResult
		for _, u := range f.urls {
			res.Tasks = append(res.Tasks, integrations.Task{Type: TaskGetFeed, Payload: map[string]string{FieldURL: u}})
		}
		return res, nil
	case task.Type == TaskGetFeed:
		u := task.Payload[FieldURL]
		i := slices.Index(f.urls, u)
		if i < 0 {
			// The user changed the list since the start: no longer followed.
			return integrations.TaskResult{}, nil
		}
		res, err := f.fetch(ctx, u)
		if err != nil {
			what := fmt.Sprintf("the feed number %d of %d could not be fetched", i+1, len(f.urls))
			if ve, ok := explain(ctx, err).(*integrations.ValidationError); ok {
				what += ": " + ve.Message
			}
			return integrations.TaskResult{}, fmt.Errorf("%w: %w", integrations.ErrNextSync,
				&integrations.ValidationError{Message: what, Err: err})
		}
		return res, nil
	}
	return integrations.TaskResult{}, fmt.Errorf("feed task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
}

// fetch fetches the feed at u and outputs its new entries.
func (f *follower) fetch(ctx context.Context, u string) (integrations.TaskResult, error) {
	entries, err := Fetch(ctx, f.client, u)
	var se *StatusError
	if errors.As(err, &se) {
		err = &integrations.APIError{Status: se.Code, RetryAfter: integrations.RetryAfter(se.retryAfter, f.now())}
	}
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("fetch feed %d of %d: %w", slices.Index(f.urls, u)+1, len(f.urls), err)
	}
	var res integrations.TaskResult
	seen := make(map[string]bool, len(entries))
	for _, e := range entries {
		if len(res.Output) == MaxNewEntries {
			break // the rest waits for the next sync
		}
		it := item(e)
		if seen[it.ProviderID] || (f.known != nil && f.known(it.ProviderID)) {
			continue
		}
		seen[it.ProviderID] = true
		res.Output = append(res.Output, it)
	}
	return res, nil
}

// item makes the item of an entry: its full content when the feed gives
// it, else its summary, and its link, if it is a web address (a link a
// hostile feed sets to javascript: is not kept).
func item(e Entry) integrations.Item {
	id := e.ID
	if len(id) > maxIDLen {
		sum := sha256.Sum256([]byte(id))
		id = "sha256:" + hex.EncodeToString(sum[:16])
	}
	it := integrations.Item{
		ProviderID: id,
		Title:      strings.ToValidUTF8(textguard.Truncate(e.Title, maxTitleLen), ""),
		From:       strings.ToValidUTF8(textguard.Truncate(e.Author, maxTitleLen), ""),
		Date:       e.Published,
		Text:       strings.ToValidUTF8(textguard.Truncate(first(e.Content, e.Summary), maxTextLen), ""),
	}
	it.Size = int64(len(it.Text))
	if link, err := ParseURL(e.Link); err == nil && link == strings.TrimSpace(e.Link) {
		it.Link = link
	}
	return it
}
