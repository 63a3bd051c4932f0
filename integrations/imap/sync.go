package imap

import (
	"context"
	"fmt"

	"searchsvc/integrations"
	"searchsvc/integrations/mail"
)

// Changes is one step of a folder's sync, to be stored at once (all of
// it or nothing): the plan's deletions and re-keys first, then one change
// per downloaded batch, the last one carrying the folder's new State.
type Changes struct {
	Folder string
	// Items are new items, one per downloaded message.
	Items []integrations.Item
	// Rekey renames stored items (their provider ids) without touching
	// their content; Delete removes stored items.
	Rekey  []Rekey
	Delete []ID
	// State, when not nil, is the folder's state to store with these
	// changes: the sync of the folder is complete.
	State *FolderState
}

// FolderReport says what a folder's sync did.
type FolderReport struct {
	Unchanged  bool // EXAMINE alone proved nothing had changed
	Downloaded int  // messages downloaded, placeholders included
	Rekeyed    int
	Deleted    int
}

// SyncFolder brings one folder's stored items in line with the server:
// EXAMINE, and unless Unchanged, UID SEARCH, the envelopes of what is not
// stored (Wanted), PlanFolder, then the plan's batches. apply stores each
// Changes before the next is fetched: an interrupted sync leaves the items
// of the batches done, and the next sync plans only what is missing.
// stored are the IDs of the folder's items (any UIDVALIDITY). It is the
// whole of a folder's sync on one connection, as tools and tests use it;
// the sync task system runs the same steps as tasks (tasks.go), so that
// each batch is a task of its own.
func (c *Client) SyncFolder(ctx context.Context, state FolderState, stored []ID, lim Limits, apply func(context.Context, Changes) error) (FolderReport, error) {
	lim = lim.orDefaults()
	lim.MaxMessageSize = min(lim.MaxMessageSize, c.maxMessage)
	name := state.Name
	st, err := c.Examine(ctx, name)
	if err != nil {
		return FolderReport{}, fmt.Errorf("imap: examine %s: %w", clipText(name), err)
	}
	if Unchanged(state, stored, st) {
		return FolderReport{Unchanged: true}, nil
	}
	plan, err := c.Plan(ctx, name, st, stored, lim)
	if err != nil {
		return FolderReport{}, err
	}
	rep := FolderReport{Rekeyed: len(plan.Rekey), Deleted: len(plan.Delete)}
	final := plan.State
	if len(plan.Delete) > 0 || len(plan.Rekey) > 0 || len(plan.Batches) == 0 {
		ch := Changes{Folder: name, Rekey: plan.Rekey, Delete: plan.Delete}
		if len(plan.Batches) == 0 {
			ch.State = &final
		}
		if err := apply(ctx, ch); err != nil {
			return rep, err
		}
	}
	for i, b := range plan.Batches {
		items, err := c.DownloadBatch(ctx, name, st.UIDValidity, b)
		if err != nil {
			return rep, fmt.Errorf("imap: fetch from %s: %w", clipText(name), err)
		}
		ch := Changes{Folder: name, Items: items}
		if i == len(plan.Batches)-1 {
			ch.State = &final
		}
		if err := apply(ctx, ch); err != nil {
			return rep, err
		}
		rep.Downloaded += len(items)
	}
	return rep, nil
}

// Plan lists the examined folder (UID SEARCH), fetches the envelopes of
// the messages not stored under its UIDVALIDITY (Wanted) and plans its
// sync (PlanFolder). st is EXAMINE's answer; stored the IDs of the
// folder's items.
func (c *Client) Plan(ctx context.Context, folder string, st Status, stored []ID, lim Limits) (Plan, error) {
	server, err := c.SearchUIDs(ctx)
	if err != nil {
		return Plan{}, fmt.Errorf("imap: search: %w", err)
	}
	var envs []Envelope
	if wanted := Wanted(st, stored, server); len(wanted) > 0 {
		err := c.FetchEnvelopes(ctx, wanted, func(e Envelope) error {
			envs = append(envs, e)
			return nil
		})
		if err != nil {
			return Plan{}, fmt.Errorf("imap: envelopes: %w", err)
		}
	}
	return PlanFolder(folder, st, stored, server, envs, lim), nil
}

// DownloadBatch fetches one batch of the examined folder and returns its
// messages as items. validity is the folder's UIDVALIDITY, which the
// items' provider ids carry.
func (c *Client) DownloadBatch(ctx context.Context, folder string, validity uint32, b Batch) ([]integrations.Item, error) {
	items := make([]integrations.Item, 0, b.UIDs.Len())
	err := c.FetchMessages(ctx, b.UIDs, b.HeadersOnly, func(m Message) error {
		items = append(items, MessageItem(folder, validity, m))
		return nil
	})
	return items, err
}

// Titles of the items of messages that could not be kept whole.
const (
	tooLargeTitle   = "(message larger than 25 MiB: not downloaded)"
	unreadableTitle = "(unreadable message)"
	// tooLargeText is the text of a placeholder whose header was read.
	tooLargeText = "This message is larger than 25 MiB: only its header was downloaded."
)

// MessageItem turns a downloaded message into an item. A message over the
// size cap (HeaderOnly) becomes a placeholder with its header's subject,
// sender, recipients and date but no content, as Gmail's do, so that it
// is not downloaded again; one whose header cannot be read keeps its
// content under a placeholder title. The date is the Date field, else
// the server's INTERNALDATE.
func MessageItem(folder string, validity uint32, m Message) integrations.Item {
	id := ID{Folder: folder, UIDValidity: validity, UID: m.UID, Key: MessageKey(m.Raw)}
	item := integrations.Item{ProviderID: id.String(), Date: m.Date, Size: m.Size}
	parsed, err := mail.Parse(m.Raw)
	if err == nil {
		item.Title, item.From, item.To = parsed.Subject, parsed.From, parsed.To
		if !parsed.Date.IsZero() {
			item.Date = parsed.Date
		}
	}
	switch {
	case m.HeaderOnly:
		if item.Title == "" {
			item.Title = tooLargeTitle
		}
		item.Text = tooLargeText
	case err != nil:
		item.Title = unreadableTitle
		item.Raw = m.Raw
	default:
		item.Text = parsed.Text
		item.Raw = m.Raw
	}
	return item
}
