// Package storage is the append-only JSON-lines log engine behind both of
// the service's stores. It knows nothing of users or sessions: callers
// Register typed tables on a Store and change them with Commit.
//
// It is built for a Raspberry Pi whose SD card loses power without warning
// and wears out under small, frequent writes. It never acknowledges a write
// before it is durable, never skips a damaged record silently, and writes
// as little as it can.
//
// # Files
//
// A store owns one directory (mode 0700; files 0600) holding LOCK and one
// active log, log.<generation>.jsonl. LOCK is flocked while the store is
// open and names its holder (pid, host, start time), so a second process
// gets a *LockError instead of a corrupted log. Each log line is one JSON
// object that jq can read:
//
//	{"crc":"<CRC32C of d, 8 hex>","d":{"seq":N,"ops":[{"t":"users","id":"u1","v":{...}},{"t":"sessions","id":"s1","del":true}]}}
//
// Sequence numbers start at 1 in each file and are contiguous.
//
// # Commits and durability
//
// Records live in memory as typed values; the log is read through only at
// Open (and, for cold tables, a record at a time; see below). One writer goroutine owns the log. It takes the first waiting Commit,
// gathers the others (waiting up to CommitWindow only if the last batch had
// several), checks each against the current state plus the commits ahead
// of it, and writes every commit that passed as ONE line with one write and
// one fsync; only then does it apply them to memory and acknowledge them.
// Making the line, not the commit, the unit of the log means the only bytes
// ever written but still unsynced are the last line: a power cut that
// persists a later page of a write but not an earlier one cannot leave
// valid records behind damage, so anything valid after a bad line really is
// damage. Each Commit is still atomic: its ops are in one line.
//
// A Commit that fails its checks is answered at once, before the line of
// the commits ahead of it is written, so a caller that gets ErrNotFound
// because of a delete ahead of it may not see that delete for a moment.
// Callers that change many records that others may delete meanwhile use
// UpdateIfExists and DeleteIfExists, which leave a missing record alone,
// rather than retrying; a Commit of nothing but such no-ops writes nothing.
//
// Any write, fsync, rename or truncate error puts the store into a failed
// state (Err matches ErrFailed) that refuses all writes until restart. An
// fsync is never retried: Linux may drop the dirty pages after a failed
// fsync, so a second one could succeed having written nothing.
//
// # Recovery
//
// At Open the newest log is read in chunks, with no line-length cap; a
// Table copies the last version of each record and decodes only those, on
// every CPU, building the indexes once at the end, and a ColdTable hands
// each op to its caller as it is read, so a start's memory is about what
// the store then holds, not the size of its log. At the first
// bad line (no newline, bad frame, checksum or sequence) the reader looks
// for any valid frame after it, starting anywhere, not only after a newline.
// If there is none, the bad bytes are the torn, unsynced tail: they are cut
// off, logged at warn level with the byte count, and the store opens. If
// there is one, Open refuses with a *CorruptError naming the file and byte
// offset. Verify inspects a directory read-only, even beside a running
// server; Repair deliberately cuts the log at the damage after copying the
// original aside.
//
// # Compaction
//
// When dead ops (superseded or deleted) are at least half of the log and it
// is at least CompactMinBytes, or when Compact is called, the writer writes
// the live, unexpired records to log.<generation+1>.jsonl.tmp, fsyncs it,
// renames it into place, fsyncs the directory and only then removes the old
// log. Open removes temp files and all but the newest generation, so a
// crash at any step leaves either the old state or the new one. Expired
// records are dropped at compaction and at Open.
//
// # Cold tables
//
// A table with TableConfig.Cold keeps each record in memory stripped of
// what only some uses need, with where its whole JSON lies in the active
// log (offset, length and the CRC32C of those bytes, taken when the line
// holding them was verified at Open or written). Load reads a record back
// with one pread and checks it against that CRC: damage since is a
// *CorruptError, never a different record. The writer reads a record back
// before an Update's func sees it, so every write is of a whole record,
// and Put and Insert refuse a stripped one. A compaction copies the cold
// records' bytes, checked the same way, from the old log in one sequential
// read, and switches the file and every position in it under the lock
// that Load holds, so a Load reads one log or the other. A record whose
// position the replay cannot tell (a line not in the writer's own layout)
// stays whole in memory until the next compaction.
//
// A ColdTable (RegisterCold) goes further: the store keeps none of its
// records, only the batch being written; its caller keeps what lookups
// need, in its own fixed-size form, through ColdConfig funcs called under
// the store's lock, with each record's position, and reads values back
// with Load or View, checked the same way. The synced items are one.
//
// # Soft deletion and indexes
//
// A record for which TableConfig.Live reports false is soft-deleted: kept
// and readable, but outside the unique and ordered indexes, so its unique
// keys are free for live records. Delete removes a record for good.
//
// An ordered index (TableConfig.Ordered) keeps, per key, the live records
// in the caller's order, as ids in chunks of at most 256: Ascend seeks in
// O(log n) and reads m records for the cost of m, and a commit moves a
// changed record out and in at O(log n + 256) each, so that removing a
// whole key's records is not quadratic. Every index is kept up to date as
// a durable batch is applied, and built once at the end of a replay.
package storage
