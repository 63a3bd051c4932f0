package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"searchsvc/integrations"
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

// RunTask runs the start task, the feed's only one: it fetches the feed
// and outputs one item per entry that Env.Known does not report, in the
// feed's order. It gives no follow-up tasks: a feed is one document, and
// the next sync fetches it again. An HTTP answer other than 200 gives an
// *integrations.APIError (429 and 5xx are temporary, with the server's
// Retry-After).
func (f *follower) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	if task.Type != integrations.TaskStart {
		return integrations.TaskResult{}, fmt.Errorf("feed task %q: %w", clip(task.Type, 40), integrations.ErrUnsupportedTask)
	}
	entries, err := Fetch(ctx, f.client, f.url)
	var se *StatusError
	if errors.As(err, &se) {
		err = &integrations.APIError{Status: se.Code, RetryAfter: integrations.RetryAfter(se.retryAfter, f.now())}
	}
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("feed start: %w", err)
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

// item makes the item of an entry. Raw holds the entry's link, if any: a
// feed entry has no raw document worth keeping, and the link is what a
// search result opens.
func item(e Entry) integrations.Item {
	id := e.ID
	if len(id) > maxIDLen {
		sum := sha256.Sum256([]byte(id))
		id = "sha256:" + hex.EncodeToString(sum[:16])
	}
	it := integrations.Item{
		ProviderID: id,
		Title:      clip(e.Title, maxTitleLen),
		From:       clip(e.Author, maxTitleLen),
		Date:       e.Published,
		Text:       clip(e.Summary, maxTextLen),
	}
	it.Size = int64(len(it.Text))
	if e.Link != "" {
		it.Raw = []byte(e.Link)
	}
	return it
}
