package imap

import (
	"slices"
)

// FolderState is what a sync keeps of one folder between runs. Which
// messages are stored is not part of it: the stored items' IDs say so,
// which is what makes an interrupted sync resume where it stopped.
type FolderState struct {
	Name string `json:"name"`
	// UIDValidity and UIDNext are EXAMINE's answer at the last sync that
	// completed; HighestUID the highest UID the server then held.
	UIDValidity uint32 `json:"uidValidity"`
	UIDNext     uint32 `json:"uidNext,omitempty"`
	HighestUID  uint32 `json:"highestUid,omitempty"`
}

// Limits bound the batches of a plan. A zero field takes its default.
type Limits struct {
	// BatchMessages is the most messages one batch downloads;
	// DefaultBatchMessages if zero.
	BatchMessages int
	// BatchBytes is the most bytes (RFC822.SIZE) one batch downloads; a
	// single larger message gets a batch of its own. DefaultBatchBytes if
	// zero.
	BatchBytes int64
	// MaxMessageSize is the size over which only a message's header
	// section is downloaded; MaxMessageSize if zero.
	MaxMessageSize int64
}

// Default batch bounds: a batch's items are held in memory until they
// are stored.
const (
	DefaultBatchMessages = 100
	DefaultBatchBytes    = 8 << 20
)

func (l Limits) orDefaults() Limits {
	if l.BatchMessages <= 0 {
		l.BatchMessages = DefaultBatchMessages
	}
	if l.BatchBytes <= 0 {
		l.BatchBytes = DefaultBatchBytes
	}
	if l.MaxMessageSize <= 0 {
		l.MaxMessageSize = MaxMessageSize
	}
	return l
}

// Unchanged reports whether EXAMINE's answer proves that nothing happened
// in the folder since the state was stored: same UIDVALIDITY, same
// UIDNEXT (no message arrived), and as many messages as are stored under
// it (none was expunged). Then a sync costs that one round trip. A server
// that does not announce UIDNEXT is always listed.
func Unchanged(state FolderState, stored []ID, st Status) bool {
	if st.UIDNext == 0 || state.UIDValidity != st.UIDValidity || state.UIDNext != st.UIDNext {
		return false
	}
	for _, id := range stored {
		if id.UIDValidity != st.UIDValidity {
			return false
		}
	}
	return len(stored) == int(st.Exists)
}

// Wanted returns the server's UIDs that are not stored under its current
// UIDVALIDITY: the messages whose envelopes a plan needs. After a
// UIDVALIDITY change that is every message of the folder.
func Wanted(st Status, stored []ID, server UIDSet) UIDSet {
	have := storedUIDs(st.UIDValidity, stored)
	var b setBuilder
	server.All(func(u uint32) bool {
		if !have.Contains(u) {
			b.add(u)
		}
		return true
	})
	return b.set()
}

func storedUIDs(validity uint32, stored []ID) UIDSet {
	var b setBuilder
	for _, id := range stored {
		if id.UIDValidity == validity {
			b.add(id.UID)
		}
	}
	return b.set()
}

// Rekey renames a stored item whose message the server renumbered: its
// content is the same, only its ID changes.
type Rekey struct{ From, To ID }

// Batch is one bounded download of a plan.
type Batch struct {
	UIDs UIDSet
	// HeadersOnly batches hold messages over the size cap: only their
	// header sections are fetched, and each becomes a placeholder item.
	HeadersOnly bool
	Bytes       int64 // the sum of the messages' sizes
}

// Plan is what a sync of one folder does, in order: delete and re-key
// stored items (one change), then download the batches, each stored as it
// completes; then store State.
type Plan struct {
	Folder      string
	UIDValidity uint32
	// Delete are stored items whose message the server no longer has.
	Delete []ID
	// Rekey are stored items of an earlier UIDVALIDITY whose message (by
	// Message-ID) the server still has under a new UID.
	Rekey []Rekey
	// Batches download every other message, in ascending UID order.
	Batches []Batch
	// State is the folder's state once everything above is stored.
	State FolderState
}

// Downloads returns how many messages the plan downloads.
func (p Plan) Downloads() int {
	n := 0
	for _, b := range p.Batches {
		n += b.UIDs.Len()
	}
	return n
}

// PlanFolder decides a folder's sync from what is stored (the IDs of its
// items), EXAMINE's answer, the UIDs the server holds and the envelopes of
// those that Wanted named. It is pure: the same answers give the same
// plan.
//
//   - A stored item under the current UIDVALIDITY whose UID the server
//     no longer holds is deleted (the message was expunged).
//   - A stored item under another UIDVALIDITY is re-keyed to a server
//     message with the same Message-ID that no stored item holds, one for
//     one, else deleted.
//   - Every other wanted message is downloaded, in batches within lim;
//     one over lim.MaxMessageSize in a headers-only batch.
func PlanFolder(folder string, st Status, stored []ID, server UIDSet, envelopes []Envelope, lim Limits) Plan {
	lim = lim.orDefaults()
	p := Plan{
		Folder:      folder,
		UIDValidity: st.UIDValidity,
		State:       FolderState{Name: folder, UIDValidity: st.UIDValidity, UIDNext: st.UIDNext, HighestUID: server.Max()},
	}
	// Stale items by key, oldest UID first, to be matched one for one.
	stale := map[string][]ID{}
	var staleOrder []ID
	for _, id := range stored {
		switch {
		case id.UIDValidity == st.UIDValidity:
			if !server.Contains(id.UID) {
				p.Delete = append(p.Delete, id)
			}
		case id.Key != "":
			stale[id.Key] = append(stale[id.Key], id)
			staleOrder = append(staleOrder, id)
		default:
			p.Delete = append(p.Delete, id)
		}
	}
	for _, ids := range stale {
		slices.SortFunc(ids, func(a, b ID) int { return cmpUint(a.UID, b.UID) })
	}
	have := storedUIDs(st.UIDValidity, stored)
	envs := slices.Clone(envelopes)
	slices.SortFunc(envs, func(a, b Envelope) int { return cmpUint(a.UID, b.UID) })
	var small, big []Envelope
	matched := map[ID]bool{}
	for i, e := range envs {
		if e.UID == 0 || !server.Contains(e.UID) || have.Contains(e.UID) || i > 0 && envs[i-1].UID == e.UID {
			continue
		}
		if ids := stale[e.Key]; e.Key != "" && len(ids) > 0 {
			p.Rekey = append(p.Rekey, Rekey{From: ids[0], To: ID{Folder: folder, UIDValidity: st.UIDValidity, UID: e.UID, Key: e.Key}})
			matched[ids[0]] = true
			stale[e.Key] = ids[1:]
			continue
		}
		if e.Size > lim.MaxMessageSize {
			big = append(big, e)
		} else {
			small = append(small, e)
		}
	}
	for _, id := range staleOrder {
		if !matched[id] {
			p.Delete = append(p.Delete, id)
		}
	}
	p.Batches = append(batches(small, lim.BatchMessages, lim.BatchBytes, false), batches(big, lim.BatchMessages, 0, true)...)
	return p
}

// batches cuts envs (in UID order) into batches of at most n messages and
// maxBytes bytes (0: no byte bound).
func batches(envs []Envelope, n int, maxBytes int64, headersOnly bool) []Batch {
	var out []Batch
	var cur setBuilder
	count, size := 0, int64(0)
	flush := func() {
		if count > 0 {
			out = append(out, Batch{UIDs: cur.set(), HeadersOnly: headersOnly, Bytes: size})
		}
		cur, count, size = setBuilder{}, 0, 0
	}
	for _, e := range envs {
		if count == n || maxBytes > 0 && count > 0 && size+e.Size > maxBytes {
			flush()
		}
		cur.add(e.UID)
		count++
		size += e.Size
	}
	flush()
	return out
}

// GoneFolders returns the folders that stored items name but a sync no
// longer reads (SyncedFolders' answer): deleted or renamed on the server,
// or now marked junk or trash. Their items are to be deleted. The answer
// is sorted.
func GoneFolders(stored []ID, synced []Mailbox) []string {
	read := make(map[string]bool, len(synced))
	for _, m := range synced {
		read[m.Name] = true
	}
	var gone []string
	for _, id := range stored {
		if !read[id.Folder] && !slices.Contains(gone, id.Folder) {
			gone = append(gone, id.Folder)
		}
	}
	slices.Sort(gone)
	return gone
}
