package items

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"searchsvc/storage"
)

// Packs: the items' sealed texts, appended one after another to a few
// shared files per record, DATA_DIR/items/<recordID>/pack-<n>, instead of
// one file each. A file takes whole blocks of the card (4 KiB), and most
// texts seal to a few hundred bytes: one file per item cost 1.09 of a
// mail's raw size in blocks where its bytes were 0.48 (BenchmarkBytesPerMail).
// Each record in a pack is the sealed bytes as vault.Seal gave them, no
// header: where it lies is the item's content reference, ItemRecord.Content,
// "<pack>.<offset>.<length>", committed in the item's log record. A read
// is one pread of exactly that length, then the vault's MAC, so a damaged
// pack fails the items whose bytes it damaged, with an error naming the
// item's content, and no other.
//
// Crash safety, in the order a batch is written:
//
//  1. each item's sealed text is appended to its record's current pack
//     (a new pack's directory entry is fsynced when it is created);
//  2. the batch's packs are fsynced, one fsync each;
//  3. the metadata that names the items and their references is committed.
//
// A crash before 3 leaves bytes no item names at a pack's end: dead
// space, which the next compaction of that pack drops. Appends after a
// restart go after whatever the file holds, so a torn tail is never read.
//
// Deletion: once an item's soft delete is committed, its bytes in the
// pack are overwritten with zeros (and fsynced), so its text is gone at
// once, not at the next compaction, and the bytes count as dead.
//
// Compaction: a pack whose dead bytes reach half its size (packDeadShare)
// is rewritten: it is renamed to pack-<n>.old (readers fall back to that
// name), the live items' sealed bytes are copied as they are (the seal
// names the item, not its place) to the current pack, fsynced, their new
// references committed, and the old file removed. Each byte copied
// stands for at least one dead byte dropped, so what compaction writes is
// at most what was deleted. A crash midway leaves pack-<n>.old, which the
// start-up sweep compacts again before anything else. Dead bytes are
// counted from the deletions since the start; what a crash left dead
// before it is dropped with the pack's next compaction.

// defaultPackMax is the size past which a record's pack is closed and a new one
// started: small enough that a compaction rewrites little, large enough
// that a mailbox takes a few files.
const defaultPackMax = 32 << 20

// packDeadShare: a pack is compacted when its dead bytes reach 1/packDeadShare
// of its size.
const packDeadShare = 2

// packPrefix starts a pack's name; oldSuffix ends a pack being compacted.
const (
	packPrefix = "pack-"
	oldSuffix  = ".old"
)

// contentRef is where an item's sealed text lies in its record's packs.
type contentRef struct {
	pack int
	off  int64
	n    int64
}

func (r contentRef) String() string {
	return strconv.Itoa(r.pack) + "." + strconv.FormatInt(r.off, 10) + "." + strconv.FormatInt(r.n, 10)
}

// parseRef reads ItemRecord.Content.
func parseRef(s string) (contentRef, error) {
	a, rest, ok1 := strings.Cut(s, ".")
	b, c, ok2 := strings.Cut(rest, ".")
	p, err1 := strconv.Atoi(a)
	off, err2 := strconv.ParseInt(b, 10, 64)
	n, err3 := strconv.ParseInt(c, 10, 64)
	if !ok1 || !ok2 || err1 != nil || err2 != nil || err3 != nil || p < 1 || off < 0 || n < 1 || n > maxContentFile {
		return contentRef{}, fmt.Errorf("item content reference %q is not valid", s)
	}
	return contentRef{pack: p, off: off, n: n}, nil
}

func packName(n int) string { return packPrefix + strconv.Itoa(n) }

// parsePackName reads a pack's number from its name, and whether it is
// the .old of a compaction.
func parsePackName(name string) (n int, old, ok bool) {
	rest, ok := strings.CutPrefix(name, packPrefix)
	if !ok {
		return 0, false, false
	}
	rest, old = strings.CutSuffix(rest, oldSuffix)
	n, err := strconv.Atoi(rest)
	if err != nil || n < 1 || packName(n) != packPrefix+rest {
		return 0, false, false
	}
	return n, old, true
}

// packSet is the packs of one record.
type packSet struct {
	dir string
	max int64 // size past which a pack is full: defaultPackMax, less in tests

	mu   sync.Mutex
	cur  *os.File // the pack appended to; nil until the first append
	curN int
	size int64 // cur's size, where the next append goes
	// dead counts the bytes of each pack known dead since the start.
	dead map[int]int64
	// appended counts the bytes appended since the start, for tests.
	appended int64
	// staged counts, per pack, the texts staged and not yet published or
	// discarded: a compaction leaves such a pack alone, since their
	// references are not committed yet and it would not copy them.
	staged map[int]int

	// compact serialises compactions and zeroing of deleted items.
	compact sync.Mutex
}

func (p *packSet) path(n int) string { return filepath.Join(p.dir, packName(n)) }

// appendSealed appends b to the current pack, starting a new one first
// if there is none or it is full, and returns where b lies. It does not
// fsync: sync does. With stage, the text counts in p.staged until
// unstage.
func (p *packSet) appendSealed(b []byte, stage bool) (contentRef, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil || p.size >= p.max {
		if err := p.roll(); err != nil {
			return contentRef{}, err
		}
	}
	ref := contentRef{pack: p.curN, off: p.size, n: int64(len(b))}
	// Whatever happens, the next append goes after this one: a failed
	// write leaves dead bytes, never a record written over another.
	p.size += ref.n
	p.appended += ref.n
	if _, err := p.cur.WriteAt(b, ref.off); err != nil {
		p.dead[ref.pack] += ref.n
		return contentRef{}, fmt.Errorf("write item content: %w", err)
	}
	if stage {
		p.staged[ref.pack]++
	}
	return ref, nil
}

// unstage ends the count of a staged text, published or discarded.
func (p *packSet) unstage(ref contentRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.staged[ref.pack]--; p.staged[ref.pack] <= 0 {
		delete(p.staged, ref.pack)
	}
}

// busy reports whether pack n holds staged texts not yet published.
func (p *packSet) busy(n int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.staged[n] > 0
}

// roll makes the current pack the newest one under packMax, or a new
// one: at the first append since the start it reopens the newest pack
// (appending after whatever it holds), later it fsyncs and closes the
// full one and creates the next. p.mu is held.
func (p *packSet) roll() error {
	if p.cur != nil {
		if err := storage.SyncClose(p.cur); err != nil {
			return err
		}
		p.cur = nil
	}
	if p.curN == 0 {
		names, err := listDir(p.dir)
		if err != nil {
			return fmt.Errorf("list item content: %w", err)
		}
		for _, name := range names {
			if n, _, ok := parsePackName(name); ok && n > p.curN {
				p.curN = n
			}
		}
		if p.curN > 0 {
			f, err := os.OpenFile(p.path(p.curN), os.O_RDWR, 0)
			if err == nil {
				st, err := f.Stat()
				if err == nil && st.Size() < p.max {
					p.cur, p.size = f, st.Size()
					return nil
				}
				f.Close()
			}
		}
	}
	p.curN++
	f, err := os.OpenFile(p.path(p.curN), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create item content pack: %w", err)
	}
	if err := storage.SyncDir(p.dir); err != nil {
		f.Close()
		return err
	}
	p.cur, p.size = f, 0
	return nil
}

// sync makes what was appended to the current pack durable (a full pack
// was fsynced when the next one started).
func (p *packSet) sync() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur == nil {
		return nil
	}
	if err := p.cur.Sync(); err != nil {
		return fmt.Errorf("fsync item content: %w", err)
	}
	return nil
}

// close closes the current pack; the next append reopens it.
func (p *packSet) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cur != nil {
		p.cur.Close()
		p.cur, p.curN, p.size = nil, 0, 0
	}
}

// readRef reads the sealed bytes at ref, from pack-<n> or, while a
// compaction runs, pack-<n>.old: exactly ref.n bytes, or an error.
func readRef(dir string, ref contentRef) ([]byte, error) {
	path := filepath.Join(dir, packName(ref.pack))
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.Open(path + oldSuffix)
	}
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrContentMissing
	}
	if err != nil {
		return nil, fmt.Errorf("open item content: %w", err)
	}
	defer f.Close()
	b := make([]byte, ref.n)
	if n, err := f.ReadAt(b, ref.off); n != len(b) {
		return nil, fmt.Errorf("%w: pack %d holds %d of its %d bytes at %d (%v)", ErrContentDamaged, ref.pack, n, ref.n, ref.off, err)
	}
	return b, nil
}

// ErrContentDamaged means an item's sealed text is not whole where its
// reference says: the pack was cut short or altered.
var ErrContentDamaged = errors.New("item content damaged")

// zero overwrites the bytes at refs with zeros and fsyncs each pack
// touched once: the texts of deleted items. They count as dead.
func (p *packSet) zero(refs []contentRef) error {
	byPack := make(map[int][]contentRef)
	for _, r := range refs {
		byPack[r.pack] = append(byPack[r.pack], r)
	}
	var errs []error
	for n, rs := range byPack {
		f, err := os.OpenFile(p.path(n), os.O_WRONLY, 0)
		if errors.Is(err, fs.ErrNotExist) {
			continue // compacted away, or the record's directory removed
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("erase item content: %w", err))
			continue
		}
		for _, r := range rs {
			if _, err := f.WriteAt(make([]byte, r.n), r.off); err != nil {
				errs = append(errs, fmt.Errorf("erase item content: %w", err))
			}
		}
		if err := storage.SyncClose(f); err != nil {
			errs = append(errs, err)
		}
		p.addDead(rs)
	}
	return errors.Join(errs...)
}

func (p *packSet) addDead(refs []contentRef) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, r := range refs {
		p.dead[r.pack] += r.n
	}
}

// due returns the packs whose dead bytes reach 1/packDeadShare of their
// size.
func (p *packSet) due() []int {
	p.mu.Lock()
	dead := make(map[int]int64, len(p.dead))
	for n, d := range p.dead {
		dead[n] = d
	}
	p.mu.Unlock()
	var out []int
	for n, d := range dead {
		st, err := os.Stat(p.path(n))
		if errors.Is(err, fs.ErrNotExist) {
			p.mu.Lock()
			delete(p.dead, n)
			p.mu.Unlock()
			continue
		}
		if err == nil && d*packDeadShare >= st.Size() {
			out = append(out, n)
		}
	}
	return out
}
