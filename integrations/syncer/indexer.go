package syncer

import (
	"searchsvc/integrations/index"
	"searchsvc/integrations/items"
)

// Indexer is told about every change to the item store, so that an index
// of the items (the search index) follows it. The syncer calls it at
// exactly four places, each after the change is committed:
//
//   - Index, for the items a sync batch stored or renamed (run.flush);
//   - Remove, for the items a provider reported deleted (run.flush);
//   - RemoveRecord, when a record is disconnected with its items
//     (Syncer.Disconnect) or found gone by the scheduler (Syncer.purge);
//   - RemoveUser, when a user is deleted with their records
//     (Syncer.DeletedUser).
//
// Calls come from the syncer's workers and from request handlers, so an
// Indexer must be safe for concurrent use; it must return quickly (queue
// the work), as a worker waits for it. A change it misses (a crash
// between the commit and the call) is for the index to catch up on at
// start, from the item store. A nil Indexer means no index.
type Indexer interface {
	Index(userID string, items []IndexedItem)
	Remove(userID string, itemIDs []string)
	RemoveRecord(userID, recordID string)
	RemoveUser(userID string)
}

// IndexedItem is a stored item as an index sees it: its ids, its metadata
// opened, and its extracted text, which is sealed on disk and only here
// in the clear. It is the index package's Item, so that the indexer
// serves as the syncer's Indexer without importing the syncer.
type IndexedItem = index.Item

// tellIndex gives the Indexer the batch just committed: the items stored,
// with their text, those renamed, and those removed.
func (r *run) tellIndex(gone []items.ItemRecord) {
	ix := r.s.index
	if ix == nil {
		return
	}
	if len(r.b.items) > 0 {
		out := make([]IndexedItem, 0, len(r.b.items))
		for i := range r.b.items {
			it := &r.b.items[i]
			m, err := r.s.items.OpenMeta(it)
			if err != nil {
				r.log.Error("open item metadata for the index", "item_id", it.ID, "err", err)
				continue
			}
			out = append(out, IndexedItem{
				ID: it.ID, RecordID: it.RecordID, Integration: it.Integration,
				Title: m.Title, From: m.From, To: m.To, Date: it.Date, Text: r.b.texts[i],
				Thread: m.Thread, Refs: m.Refs, Attachments: index.AttachmentNames(&m), Folders: index.FolderTerms(&m),
			})
		}
		ix.Index(r.rec.UserID, out)
	}
	if renamed := r.renamed(); len(renamed) > 0 {
		ix.Index(r.rec.UserID, renamed)
	}
	if len(gone) > 0 {
		ids := make([]string, len(gone))
		for i := range gone {
			ids[i] = gone[i].ID
		}
		ix.Remove(r.rec.UserID, ids)
	}
}
