package feed

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

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
		var ae *integrations.APIError
		if errors.As(err, &ae) && ae.Temporary() && ae.RetryAfter > 0 {
			// The server named when to ask again: the task waits for
			// that, rather than for the next sync.
			return res, err
		}
		if err != nil {
			what := fmt.Sprintf("the feed number %d of %d could not be fetched", i+1, len(f.urls))
			if ve, ok := explain(ctx, err).(*integrations.ValidationError); ok {
				what += ": " + ve.Message
			}
			return res, fmt.Errorf("%w: %w", integrations.ErrNextSync,
				&integrations.ValidationError{Message: what, Err: err})
		}
		return res, nil
	}
	return integrations.TaskResult{}, fmt.Errorf("feed task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
}

// fetch fetches the feed at u and outputs its new entries, sending the
// validators of the version it last read, and keeps what it learnt of
// the feed (its validators, title and last status; the time a server's
// Retry-After names) in the record's State under stateKey(u), written
// only when it changed: a 304 to a feed whose last fetch went well
// writes nothing. Until that time the feed is not requested.
func (f *follower) fetch(ctx context.Context, u string) (integrations.TaskResult, error) {
	held := f.held(u)
	now := f.now()
	if now.Before(held.NotBefore) {
		return integrations.TaskResult{}, nil
	}
	fe, err := fetchFeed(ctx, f.client, u, MaxSize, held.validators)
	var se *StatusError
	if errors.As(err, &se) {
		err = &integrations.APIError{Status: se.Code, RetryAfter: integrations.RetryAfter(se.retryAfter, now)}
	}
	if err != nil {
		next := held
		next.Status, next.NotBefore = failed, time.Time{}
		if ve, ok := explain(ctx, err).(*integrations.ValidationError); ok {
			next.Status = ve.Message
		}
		var ae *integrations.APIError
		if errors.As(err, &ae) && ae.RetryAfter > 0 {
			next.NotBefore = now.Add(ae.RetryAfter).UTC()
		}
		res := integrations.TaskResult{State: changedState(u, held, next)}
		return res, fmt.Errorf("fetch feed %d of %d: %w", slices.Index(f.urls, u)+1, len(f.urls), err)
	}
	next := feedState{validators: fe.validators, Title: held.Title, Status: statusOK}
	if !fe.NotModified {
		next.Title = strings.ToValidUTF8(textguard.Truncate(fe.Title, maxFeedTitleLen), "")
	}
	var res integrations.TaskResult
	seen := make(map[string]bool, len(fe.Entries))
	for _, e := range fe.Entries {
		if len(res.Output) == MaxNewEntries {
			// The rest waits for the next sync, which must then read
			// the feed again rather than be told it did not change.
			next.validators = validators{}
			break
		}
		it := item(e)
		it.Source = next.Title
		if seen[it.ProviderID] || (f.known != nil && f.known(it.ProviderID)) {
			continue
		}
		seen[it.ProviderID] = true
		res.Output = append(res.Output, it)
	}
	res.State = changedState(u, held, next)
	return res, nil
}

// Statuses of a feed's last fetch, besides the sentence of a failure.
const (
	statusOK = "ok"
	failed   = "could not fetch the feed"
)

// maxFeedTitleLen bounds a feed's own title kept on its record, in bytes.
const maxFeedTitleLen = 256

// feedState is what a record keeps of one of its feeds between polls.
type feedState struct {
	validators
	// Title is the feed's own title, as its last full answer gave it.
	Title string `json:"title,omitempty"`
	// Status is statusOK after a fetch that went well (a 304 included),
	// else the sentence of its failure; empty before the first fetch.
	Status string `json:"status,omitempty"`
	// NotBefore is when the server's Retry-After lets it be asked again.
	NotBefore time.Time `json:"notBefore,omitzero"`
}

// stateKey is the key of a feed's state among the record's.
func stateKey(u string) string { return "feed " + u }

// held returns the state kept of the feed at u; the zero state when
// there is none, or it does not read.
func (f *follower) held(u string) feedState {
	var st feedState
	if f.state != nil {
		if v := f.state(stateKey(u)); v != "" && json.Unmarshal([]byte(v), &st) != nil {
			st = feedState{}
		}
	}
	return st
}

// changedState is the State that stores next as the feed's, or nil when
// it is what is held.
func changedState(u string, held, next feedState) map[string]string {
	if next.validators == held.validators && next.Title == held.Title && next.Status == held.Status &&
		next.NotBefore.Equal(held.NotBefore) {
		return nil
	}
	b, err := json.Marshal(next)
	if err != nil {
		return nil
	}
	return map[string]string{stateKey(u): string(b)}
}

// Details lists a record's feeds with their own titles and last statuses,
// from the record's credentials and kept state (Definition.Details).
func Details(c integrations.Credentials, state func(key string) string) []integrations.SourceDetail {
	urls, _ := ParseURLs(c.Fields[FieldURL])
	f := &follower{urls: urls, state: state}
	out := make([]integrations.SourceDetail, 0, len(urls))
	for _, u := range urls {
		st := f.held(u)
		out = append(out, integrations.SourceDetail{Source: u, Title: st.Title, Status: st.Status})
	}
	return out
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
