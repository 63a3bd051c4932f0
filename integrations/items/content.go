package items

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// Item content is each item's extracted text, sealed for vault.ItemContent
// and the item: the service holds private mail, and nothing personal sits
// on the SD card in plain text. Since packs (pack.go), the sealed texts of
// a record's items are appended to a few shared files,
// DATA_DIR/items/<recordID>/pack-<n>, each item's place kept in its log
// record (ItemRecord.Content). Items stored before packs had a file of
// their own, DATA_DIR/items/<recordID>/<itemID>, which is still read (and
// removed when the item goes) until the start-up sweep moves it into the
// pack (Store.Sweep): an item with no Content has one. The
// content is a version byte then, deflated, the text's length (uvarint)
// and the text: what search, snippets and the item page (GET
// /v1/items/{id}) read. The raw original is not kept: it was more than a
// third of what a synced mail cost the card (0.29 of the mail's raw size
// out of 0.80, BenchmarkBytesPerMail), and nothing reads it (the original
// stays at the provider, where an item's link leads; see "How syncing
// works" in docs/sources.md). Contents of contentV1, which kept the raw
// original after the text, are still read: the text comes first, and the
// rest is never decompressed. Mail compresses well, and an SD card
// prefers fewer bytes. A pack holds the sealed bytes as they are
// (vault.Seal), no text encoding. Files are 0600 in 0700 directories.
//
// One directory per record puts a record's packs together, and a
// disconnect removes one directory.

// Versions of a content plaintext, its first byte. contentV1 (the text,
// then the raw original) is read, no longer written.
const (
	contentV1 = 1
	contentV2 = 2
)

// contentLevel is the deflate level of content files: text is written
// once and read often, and on the shared corpus's texts the default level
// writes 5% fewer bytes than flate.BestSpeed (0.179 against 0.189 of the
// mails' raw size) in no more time.
const contentLevel = flate.DefaultCompression

// maxContentFile bounds what is read back from one content file (bytes).
const maxContentFile = 256 << 20

// contentStore reads and writes item content files under dir.
type contentStore struct {
	dir   string
	vault *vault.Vault

	mu      sync.Mutex
	madeDir map[string]bool     // record directories known to exist durably
	packs   map[string]*packSet // by record id
	packMax int64               // packSet.max
}

func newContentStore(dir string, v *vault.Vault) *contentStore {
	return &contentStore{dir: dir, vault: v, madeDir: make(map[string]bool), packs: make(map[string]*packSet),
		packMax: defaultPackMax}
}

func (c *contentStore) recordDir(recordID string) string { return filepath.Join(c.dir, recordID) }

// path is the file that holds the item's sealed text: its pack, or for
// an item stored before packs, its own file.
func (c *contentStore) path(it *ItemRecord) string {
	if ref, err := parseRef(it.Content); err == nil {
		return filepath.Join(c.dir, it.RecordID, packName(ref.pack))
	}
	return filepath.Join(c.dir, it.RecordID, it.ID)
}

func contentAAD(it *ItemRecord) []byte {
	return vault.AAD(vault.ItemContent, it.UserID, it.Integration, it.ID)
}

var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, contentLevel) // a valid level
	return w
}}

// encodeContent builds the plaintext of a content file.
func encodeContent(text string) []byte {
	var buf bytes.Buffer
	buf.Grow(64 + len(text)/2)
	buf.WriteByte(contentV2)
	zw := flateWriters.Get().(*flate.Writer)
	zw.Reset(&buf)
	var n [binary.MaxVarintLen64]byte
	zw.Write(n[:binary.PutUvarint(n[:], uint64(len(text)))])
	io.WriteString(zw, text)
	zw.Close() // writes to a bytes.Buffer cannot fail
	flateWriters.Put(zw)
	return buf.Bytes()
}

// inflaters are flate readers for decodeContent to reuse: a new one is a
// 32 KiB window and tables, about 40 KB, where a feed entry's text is one
// or two. A search page reads up to 100 items' texts for their snippets,
// so fresh readers were most of what a search allocated, and every
// search then paid, in the collector's time, for the others' garbage
// (docs/search.md, "Errors and bounds", fair shares).
var inflaters sync.Pool // of flate.Resetter (and io.ReadCloser)

// decodeContent reads back the text of what encodeContent built, or of a
// contentV1 plaintext, whose raw original after the text it leaves
// compressed.
func decodeContent(p []byte) (string, error) {
	if len(p) == 0 || (p[0] != contentV1 && p[0] != contentV2) {
		return "", errors.New("content: unknown format")
	}
	src := bytes.NewReader(p[1:])
	zr, _ := inflaters.Get().(io.ReadCloser)
	if zr == nil {
		zr = flate.NewReader(src)
	} else if err := zr.(flate.Resetter).Reset(src, nil); err != nil {
		return "", fmt.Errorf("content: %w", err)
	}
	defer func() {
		zr.Close()
		inflaters.Put(zr)
	}()
	n, err := binary.ReadUvarint(&byteReader{r: zr})
	if err != nil || n > maxContentFile {
		return "", fmt.Errorf("content: bad text length: %v", err)
	}
	var t strings.Builder
	t.Grow(int(n))
	if _, err := io.CopyN(&t, zr, int64(n)); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return "", fmt.Errorf("content: read text: %w", err)
	}
	return t.String(), nil
}

type byteReader struct {
	r io.Reader
	c [1]byte
}

func (b *byteReader) ReadByte() (byte, error) {
	_, err := io.ReadFull(b.r, b.c[:])
	return b.c[0], err
}

// Staged is an item's sealed text appended to its record's current pack
// (see pack.go), not yet fsynced; Store.Publish makes it durable.
type Staged struct {
	packs *packSet
	ref   contentRef
	open  *bool // still counted in packs.staged
}

// release ends the count of s in its pack's staged texts, once.
func (s Staged) release() {
	if s.packs != nil && s.open != nil && *s.open {
		*s.open = false
		s.packs.unstage(s.ref)
	}
}

// stage seals an item's text, appends it to its record's current pack
// and sets it.Content to where it lies. publish makes it durable.
func (c *contentStore) stage(it *ItemRecord, text string) (Staged, error) {
	if err := c.ensureDir(it.RecordID); err != nil {
		return Staged{}, err
	}
	p := c.packsOf(it.RecordID)
	ref, err := p.appendSealed(c.vault.Seal(contentAAD(it), encodeContent(text)), true)
	if err != nil {
		return Staged{}, err
	}
	it.Content = ref.String()
	return Staged{packs: p, ref: ref, open: new(true)}, nil
}

// publish makes Staged texts durable: one fsync of each pack they went
// to. On error they count as dead bytes, once remove is called.
func (c *contentStore) publish(files []Staged) error {
	seen := make(map[*packSet]bool)
	for _, s := range files {
		if s.packs == nil || seen[s.packs] {
			continue
		}
		seen[s.packs] = true
		if err := s.packs.sync(); err != nil {
			return err
		}
	}
	// Their references are committed next, by the caller that staged
	// them, before it calls anything that compacts (RemoveFiles).
	for _, s := range files {
		s.release()
	}
	return nil
}

// remove forgets the texts of a batch that was not committed: their
// bytes are dead, for the pack's next compaction.
func (c *contentStore) remove(files []Staged) {
	for _, s := range files {
		if s.packs != nil {
			s.release()
			s.packs.addDead([]contentRef{s.ref})
		}
	}
}

// packsOf returns the packs of a record.
func (c *contentStore) packsOf(recordID string) *packSet {
	c.mu.Lock()
	defer c.mu.Unlock()
	p := c.packs[recordID]
	if p == nil {
		p = &packSet{dir: c.recordDir(recordID), max: c.packMax, dead: make(map[int]int64), staged: make(map[int]int)}
		c.packs[recordID] = p
	}
	return p
}

// syncAll fsyncs every record's current pack.
func (c *contentStore) syncAll() error {
	c.mu.Lock()
	ps := make([]*packSet, 0, len(c.packs))
	for _, p := range c.packs {
		ps = append(ps, p)
	}
	c.mu.Unlock()
	for _, p := range ps {
		if err := p.sync(); err != nil {
			return err
		}
	}
	return nil
}

// ensureDir creates the items directory and the record's directory once,
// fsyncing each parent whose entry it adds.
func (c *contentStore) ensureDir(recordID string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.madeDir[recordID] {
		return nil
	}
	for _, d := range []string{c.dir, c.recordDir(recordID)} {
		err := os.Mkdir(d, 0o700)
		switch {
		case err == nil:
			if err := storage.SyncDir(filepath.Dir(d)); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
		default:
			return fmt.Errorf("create item directory: %w", err)
		}
	}
	c.madeDir[recordID] = true
	return nil
}

// removeRecord deletes a record's content directory, its packs with it.
func (c *contentStore) removeRecord(recordID string) error {
	c.mu.Lock()
	delete(c.madeDir, recordID)
	p := c.packs[recordID]
	delete(c.packs, recordID)
	c.mu.Unlock()
	if p != nil {
		p.compact.Lock()
		defer p.compact.Unlock()
		p.close()
	}
	if err := os.RemoveAll(c.recordDir(recordID)); err != nil {
		return fmt.Errorf("remove item content: %w", err)
	}
	return nil
}

// ErrContentMissing means an item's content file is not there.
var ErrContentMissing = errors.New("item content missing")

// readText reads an item's sealed text, from its pack (one pread of the
// length its reference names) or, for an item stored before packs, its
// own file, and returns the text.
func (c *contentStore) readText(it *ItemRecord) (string, error) {
	b, err := c.readSealed(it)
	if err != nil {
		return "", err
	}
	p, err := c.vault.Open(contentAAD(it), b)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrContentDamaged, err)
	}
	return decodeContent(p)
}

// readSealed returns an item's sealed text as stored.
func (c *contentStore) readSealed(it *ItemRecord) ([]byte, error) {
	if it.Content != "" {
		ref, err := parseRef(it.Content)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrContentDamaged, err)
		}
		return readRef(c.recordDir(it.RecordID), ref)
	}
	f, err := os.Open(c.path(it))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrContentMissing
	}
	if err != nil {
		return nil, fmt.Errorf("open item content: %w", err)
	}
	defer f.Close()
	return readContentFile(f)
}

// readContentFile reads a content file whole, refusing one over
// maxContentFile.
func readContentFile(f *os.File) ([]byte, error) {
	var b bytes.Buffer
	if st, err := f.Stat(); err == nil && st.Size() < maxContentFile {
		b.Grow(int(st.Size()) + bytes.MinRead)
	}
	if _, err := b.ReadFrom(io.LimitReader(f, maxContentFile+1)); err != nil {
		return nil, fmt.Errorf("read item content: %w", err)
	}
	if b.Len() > maxContentFile {
		return nil, errors.New("item content file too large")
	}
	return b.Bytes(), nil
}

// listDir returns the names in dir; a missing dir is empty.
func listDir(dir string) ([]string, error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Readdirnames(-1)
}
