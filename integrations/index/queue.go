package index

import (
	"slices"
	"strings"

	"searchsvc/integrations/items"
	"searchsvc/integrations/search"
)

// queue is one user's work: changes to apply in order, and whether a
// catch-up is due. While a catch-up is due no change is queued (the
// store it will read holds them all), so a due catch-up always comes
// first.
type queue struct {
	ops        []op
	bytes      int  // of ops, as op.bytes counts them
	catchUp    bool // a catch-up is due
	catchingUp bool // the worker is catching the user up
	running    bool // a worker is on the queue
}

// op is one change the syncer reported.
type op struct {
	kind   opKind
	docs   []search.Doc // opAdd
	ids    []string     // opRemove
	record string       // opRemoveRecord
	bytes  int          // what it holds in memory, roughly
}

type opKind int

const (
	opAdd opKind = iota
	opRemove
	opRemoveRecord
	opRemoveUser
)

// opOverhead is what an op and each of its documents or ids cost beside
// their strings, roughly.
const opOverhead = 64

// Index queues the items a sync batch stored.
func (x *Indexer) Index(userID string, its []Item) {
	o := op{kind: opAdd, docs: make([]search.Doc, len(its)), bytes: opOverhead}
	for i := range its {
		o.docs[i] = x.doc(its[i])
		o.bytes += docBytes(&o.docs[i])
	}
	x.enqueue(userID, o)
}

// Remove queues the removal of the items a provider reported deleted.
func (x *Indexer) Remove(userID string, ids []string) {
	o := op{kind: opRemove, ids: slices.Clone(ids), bytes: opOverhead}
	for _, id := range ids {
		o.bytes += opOverhead + len(id)
	}
	x.enqueue(userID, o)
}

// RemoveRecord queues the removal of a disconnected record's items.
func (x *Indexer) RemoveRecord(userID, recordID string) {
	x.enqueue(userID, op{kind: opRemoveRecord, record: recordID, bytes: opOverhead + len(recordID)})
}

// RemoveUser drops what is queued for a deleted user and queues the
// removal of the user's index.
func (x *Indexer) RemoveUser(userID string) {
	x.mu.Lock()
	defer x.mu.Unlock()
	q := x.queue(userID)
	if q.catchUp {
		return // the catch-up due finds no live item and removes the index
	}
	clear(q.ops)
	q.ops, q.bytes = []op{{kind: opRemoveUser, bytes: opOverhead}}, opOverhead
	x.start(userID, q)
}

func docBytes(d *search.Doc) int {
	n := opOverhead + len(d.ID) + len(d.RecordID) + len(d.Title) + len(d.From) + len(d.Text) + len(d.Thread)
	for _, a := range d.Refs {
		n += len(a)
	}
	for _, a := range d.Names {
		n += len(a)
	}
	for _, a := range d.To {
		n += len(a)
	}
	return n
}

func (x *Indexer) doc(it Item) search.Doc {
	d := search.Doc{
		ID: it.ID, RecordID: it.RecordID, Integration: it.Integration, Kind: x.kinds[it.Integration],
		Title: it.Title, From: it.From, To: it.To, Text: it.Text, Date: it.Date,
		Thread: it.Thread, Refs: it.Refs, Names: it.Attachments, Attached: len(it.Attachments) > 0,
		Folders: it.Folders,
	}
	if d.Kind == "file" && d.Title != "" {
		d.Names = []string{d.Title} // filename: finds a file by its own name
	}
	return d
}

// FolderTerms returns what in: finds an item by (docs/search.md): an
// email's mailbox by its name and its special use, a file's folders (of
// its path inside what its record connects) by each folder's name and by
// each leading part of the path ("a", "b" and "a/b" for "a/b/c.txt"),
// all in lower case; search.FolderValue marks a use.
func FolderTerms(m *items.Meta) []string {
	var out []string
	add := func(v string) {
		if v != "" && len(out) < 64 && !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	if m.Folder != "" {
		add(strings.ToLower(m.Folder))
		add(search.UseValue(m.FolderUse))
	}
	if i := strings.LastIndexByte(m.Path, '/'); i > 0 {
		dirs := strings.Split(strings.ToLower(strings.Trim(m.Path[:i], "/")), "/")
		for j, d := range dirs {
			add(d)
			add(strings.Join(dirs[:j+1], "/"))
		}
	}
	return out
}

// AttachmentNames returns the names of an item's attachments, as Item
// has them.
func AttachmentNames(m *items.Meta) []string {
	if len(m.Attachments) == 0 {
		return nil
	}
	names := make([]string, len(m.Attachments))
	for i, a := range m.Attachments {
		names[i] = a.Name
	}
	return names
}

// enqueue adds a change to the user's queue, unless a catch-up due makes
// it needless. A change that would take the queue past its bound drops
// the queue for a catch-up instead: reading the store again costs time,
// keeping every text in memory could cost the process.
func (x *Indexer) enqueue(userID string, o op) {
	x.mu.Lock()
	defer x.mu.Unlock()
	q := x.queue(userID)
	switch {
	case q.catchUp:
	case len(q.ops) > 0 && q.bytes+o.bytes > x.maxQueue:
		x.log.Warn("search index queue full, the user is caught up from the store instead",
			"user_id", userID, "changes", len(q.ops)+1, "bytes", q.bytes+o.bytes)
		x.markLocked(userID)
	default:
		q.ops = append(q.ops, o)
		q.bytes += o.bytes
		x.start(userID, q)
	}
}

// queue returns the user's queue, made if need be. x.mu is held.
func (x *Indexer) queue(userID string) *queue {
	q := x.queues[userID]
	if q == nil {
		q = &queue{}
		x.queues[userID] = q
	}
	return q
}

// mark makes a catch-up of the user due. It is the index's OnDamage.
func (x *Indexer) mark(userID string) {
	x.mu.Lock()
	x.markLocked(userID)
	x.mu.Unlock()
}

// markLocked makes a catch-up of the user due, dropping the changes
// queued: the store it reads holds them. x.mu is held.
func (x *Indexer) markLocked(userID string) {
	q := x.queue(userID)
	clear(q.ops)
	q.ops, q.bytes, q.catchUp = nil, 0, true
	delete(x.failed, userID)
	x.start(userID, q)
}

// start runs a worker on the queue unless one runs. x.mu is held.
func (x *Indexer) start(userID string, q *queue) {
	if q.running || !x.opened || x.closed {
		return
	}
	q.running = true
	x.workers++
	go x.work(userID, q)
}

// work applies the user's queue until it is empty, and then ends. A
// catch-up due comes first; once catch-ups are stopped, it stays due.
func (x *Indexer) work(userID string, q *queue) {
	for {
		x.mu.Lock()
		if q.catchUp && x.ctx.Err() == nil {
			x.mu.Unlock()
			x.catchUp(userID, q)
			continue
		}
		if len(q.ops) == 0 {
			q.running = false
			if !q.catchUp {
				delete(x.queues, userID)
			}
			x.workers--
			x.changed.Broadcast()
			x.mu.Unlock()
			return
		}
		o := q.ops[0]
		q.ops[0] = op{}
		q.ops = q.ops[1:]
		q.bytes -= o.bytes
		x.mu.Unlock()
		x.apply(userID, o)
	}
}

// apply applies one change. A change the index refuses (a full disk) is
// caught up later.
func (x *Indexer) apply(userID string, o op) {
	var err error
	var what string
	n := 0
	switch o.kind {
	case opAdd:
		err, what, n = x.ix.Add(userID, o.docs...), "index items", len(o.docs)
	case opRemove:
		err, what, n = x.ix.Delete(userID, o.ids...), "remove items from the index", len(o.ids)
	case opRemoveRecord:
		err, what = x.ix.DeleteRecord(userID, o.record), "remove a record from the index"
	case opRemoveUser:
		err, what = x.ix.DeleteUser(userID), "remove a user's index"
	}
	if err != nil {
		x.log.Error(what, "user_id", userID, "items", n, "err", err)
		x.mark(userID)
	}
}
