package storage

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"path/filepath"
	"slices"
)

// A cold table keeps in memory a stripped copy of each record (what its
// id, indexes and expiry need) and where the record's whole JSON lies in
// the active log: the rest is read back only when asked for (Load), when a
// commit changes the record (the writer reads it before Update's func
// sees it), and at compaction, which copies the cold records' bytes from
// the old log to the new one in one sequential read. For tables of very
// many records of which few are used at a time.
//
// Reading a record back keeps the store's promises: the bytes read are
// checked against the CRC32C they had when the line holding them was
// verified (at Open) or written, so damage since is a *CorruptError, never
// a silently different record; a record's position changes only in the
// writer, under the store's lock, together with the file it points into,
// so a concurrent Load reads either the old log or the new one, whole.

// Cold configures a cold table (TableConfig.Cold).
type Cold[T any] struct {
	// Strip removes from a record what is kept only in the log. It must
	// keep whatever ID, Live, Expired and the indexes read.
	Strip func(*T)
	// Ref returns the field of the record where the table keeps the
	// position of its whole value; the record's JSON must not carry it.
	Ref func(*T) *ColdRef
}

// ColdRef is where the whole value of a stripped record lies in the log.
// The zero ColdRef is a whole record.
type ColdRef struct {
	off int64  // offset of the value's JSON in the active log
	n   uint32 // its length; 0: the record is whole
	crc uint32 // CRC32C of those bytes
}

// Stripped reports whether the record holding r is a stripped copy, whose
// whole value only the log holds.
func (r ColdRef) Stripped() bool { return r.n != 0 }

// Parts returns r's offset in the log, length and CRC32C, for a caller
// that keeps positions in a narrower form of its own (the items keep 12
// bytes of the 16); ColdRefOf makes the ColdRef back. A ColdRef made of
// parts that were never a position reads back as a *CorruptError, never
// as another record: the CRC32C is checked.
func (r ColdRef) Parts() (off int64, n, crc uint32) { return r.off, r.n, r.crc }

// ColdRefOf is the ColdRef whose Parts are off, n and crc.
func ColdRefOf(off int64, n, crc uint32) ColdRef { return ColdRef{off: off, n: n, crc: crc} }

// movedRef is a record's position in the log a compaction is writing.
type movedRef struct {
	id  string
	ref ColdRef
}

// coldRef is the position of raw at off, or false if it is too long to
// note (it stays whole in memory).
func coldRef(off int64, raw []byte) (ColdRef, bool) {
	if off < 0 || len(raw) == 0 || uint64(len(raw)) > math.MaxUint32 {
		return ColdRef{}, false
	}
	return ColdRef{off: off, n: uint32(len(raw)), crc: crc32.Checksum(raw, castagnoli)}, true
}

// stripped reports whether v is a stripped record of a cold table.
func (t *Table[T]) stripped(v *T) bool {
	return t.cfg.Cold != nil && t.cfg.Cold.Ref(v).Stripped()
}

// strip makes v the stripped copy at ref.
func (t *Table[T]) strip(v *T, ref ColdRef) {
	t.cfg.Cold.Strip(v)
	*t.cfg.Cold.Ref(v) = ref
}

// Load returns the record with id whole: for a cold table, read back from
// the log. It returns an error matching ErrNotFound if there is none, a
// *CorruptError if its bytes in the log changed since they were verified,
// and ErrClosed once the store is closed.
func (t *Table[T]) Load(id string) (T, error) {
	t.s.mu.RLock()
	defer t.s.mu.RUnlock()
	v, ok := t.recs[id]
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: %s %q", ErrNotFound, t.name, id)
	}
	return t.whole(id, v)
}

// whole returns v, the record with id, whole. The caller holds s.mu or is
// the writer, so the log it reads cannot be switched meanwhile.
func (t *Table[T]) whole(id string, v T) (T, error) {
	var zero T
	if !t.stripped(&v) {
		return v, nil
	}
	ref := *t.cfg.Cold.Ref(&v)
	raw, err := t.s.readValue(ref)
	if err != nil {
		return zero, err
	}
	var full T
	if err := decodeValue(raw, &full); err != nil {
		return zero, t.s.valueCorrupt(ref, fmt.Sprintf("decode %s record %q read back: %v", t.name, id, err))
	}
	if got := t.cfg.ID(&full); got != id {
		return zero, t.s.valueCorrupt(ref, fmt.Sprintf("%s record %q read back has id %q", t.name, id, got))
	}
	*t.cfg.Cold.Ref(&full) = ColdRef{}
	return full, nil
}

// decodeValue decodes a value read back. Bytes that match their CRC are
// JSON the store wrote, so a type that decodes itself (and validates what
// it is given, as an UnmarshalJSON that calls json.Unmarshal does) is
// given them directly, without encoding/json scanning them once more
// first: the read back of a session, when it is first met, is on a
// request's path.
func decodeValue[T any](raw []byte, v *T) error {
	if u, ok := any(v).(json.Unmarshaler); ok {
		return u.UnmarshalJSON(raw)
	}
	return json.Unmarshal(raw, v)
}

// readValue reads the bytes at ref in the active log and checks them.
func (s *Store) readValue(ref ColdRef) ([]byte, error) {
	if s.file == nil {
		return nil, ErrClosed
	}
	raw := make([]byte, ref.n)
	if _, err := s.file.ReadAt(raw, ref.off); err != nil {
		return nil, fmt.Errorf("storage: read back %s at %d: %w", logName(s.gen), ref.off, err)
	}
	if got := crc32.Checksum(raw, castagnoli); got != ref.crc {
		return nil, s.valueCorrupt(ref, fmt.Sprintf("record read back: checksum %08x, want %08x", got, ref.crc))
	}
	return raw, nil
}

func (s *Store) valueCorrupt(ref ColdRef, reason string) error {
	return &CorruptError{File: s.path(), Offset: ref.off, Reason: reason}
}

// path is the active log's path.
func (s *Store) path() string { return filepath.Join(s.dir, logName(s.gen)) }

// writeCold emits the stripped records of a cold table, their bytes read
// from the active log in file order (one sequential read, not one seek per
// record), each checked against its CRC, and notes their new positions.
func (t *Table[T]) writeCold(cold []movedRef, emit func(table, id string, v []byte) (int64, error)) error {
	return t.s.copyCold(t.name, cold, emit, func(id string, ref ColdRef) {
		t.moved = append(t.moved, movedRef{id: id, ref: ref})
	})
}

// copyCold emits the records of table name at the positions cold, read
// from the active log in file order, each checked against its CRC, and
// tells moved where emit put each.
func (s *Store) copyCold(name string, cold []movedRef, emit func(table, id string, v []byte) (int64, error), moved func(id string, ref ColdRef)) error {
	if len(cold) == 0 {
		return nil
	}
	slices.SortFunc(cold, func(a, b movedRef) int { return cmp.Compare(a.ref.off, b.ref.off) })
	br := bufio.NewReaderSize(io.NewSectionReader(s.file, 0, s.stats.FileBytes), 256<<10)
	var pos int64
	var raw []byte
	for _, c := range cold {
		if _, err := br.Discard(int(c.ref.off - pos)); err != nil {
			return fmt.Errorf("storage: read back %s at %d: %w", logName(s.gen), c.ref.off, err)
		}
		raw = slices.Grow(raw[:0], int(c.ref.n))[:c.ref.n]
		if _, err := io.ReadFull(br, raw); err != nil {
			return fmt.Errorf("storage: read back %s at %d: %w", logName(s.gen), c.ref.off, err)
		}
		pos = c.ref.off + int64(c.ref.n)
		if got := crc32.Checksum(raw, castagnoli); got != c.ref.crc {
			return s.valueCorrupt(c.ref, fmt.Sprintf("%s record %q read back: checksum %08x, want %08x", name, c.id, got, c.ref.crc))
		}
		at, err := emit(name, c.id, raw)
		if err != nil {
			return err
		}
		moved(c.id, ColdRef{off: at, n: c.ref.n, crc: c.ref.crc})
	}
	return nil
}

// switchRefs points the records of a cold table at the new log a
// compaction wrote (apply), or forgets the positions in it (an aborted
// compaction). The caller holds s.mu for writing, and switches the file in
// the same critical section.
func (t *Table[T]) switchRefs(apply bool) {
	if apply {
		for _, m := range t.moved {
			v, ok := t.recs[m.id]
			if !ok {
				continue
			}
			t.strip(&v, m.ref)
			t.recs[m.id] = v
		}
	}
	t.moved = nil
}
