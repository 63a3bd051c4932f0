package imap_test

import (
	"context"
	"fmt"

	"searchsvc/integrations"
	"searchsvc/integrations/imap"
)

// changes is one step of a folder's sync in the tests' in-memory stores,
// stored at once: the plan's deletions and re-keys first, then one change
// per downloaded batch, the last one carrying the folder's new state, as
// the sync task system commits a syncFolder task and its fetchMessages
// and folderDone tasks.
type changes struct {
	Folder string
	Items  []integrations.Item
	Rekey  []imap.Rekey
	Delete []imap.ID
	State  *imap.FolderState
}

// folderReport says what a folder's sync did.
type folderReport struct {
	Unchanged  bool
	Downloaded int
	Rekeyed    int
	Deleted    int
}

// syncFolder runs on one connection the client calls that the sync's
// tasks make for a folder (tasks.go): EXAMINE, Unchanged, Plan, then
// DownloadBatch per batch, applying each step before the next.
func syncFolder(ctx context.Context, c *imap.Client, state imap.FolderState, stored []imap.ID, lim imap.Limits, apply func(context.Context, changes) error) (folderReport, error) {
	name := state.Name
	st, err := c.Examine(ctx, name)
	if err != nil {
		return folderReport{}, fmt.Errorf("imap: examine: %w", err)
	}
	if imap.Unchanged(state, stored, st) {
		return folderReport{Unchanged: true}, nil
	}
	plan, err := c.Plan(ctx, name, st, stored, lim)
	if err != nil {
		return folderReport{}, err
	}
	rep := folderReport{Rekeyed: len(plan.Rekey), Deleted: len(plan.Delete)}
	final := plan.State
	if len(plan.Delete) > 0 || len(plan.Rekey) > 0 || len(plan.Batches) == 0 {
		ch := changes{Folder: name, Rekey: plan.Rekey, Delete: plan.Delete}
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
			return rep, fmt.Errorf("imap: fetch: %w", err)
		}
		ch := changes{Folder: name, Items: items}
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
