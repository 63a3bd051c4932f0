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

// Item content lives in one file per item, DATA_DIR/items/<recordID>/<itemID>,
// holding the content sealed for vault.ItemContent and the item: the
// service holds private mail, and nothing personal sits on the SD card in
// plain text. The content is a version byte then, deflated, the text's
// length (uvarint) and the text: what search, snippets and the item page
// (GET /v1/items/{id}) read. The raw original is not kept: it was more
// than a third of what a synced mail cost the card (0.29 of the mail's
// raw size out of 0.80, BenchmarkBytesPerMail), and nothing reads it (the
// original stays at the provider, where an item's link leads; see "How
// syncing works" in docs/sources.md). Files of contentV1, which kept the raw
// original after the text, are still read: the text comes first, and the
// rest is never decompressed. Mail compresses well, and an SD card
// prefers fewer bytes. The file holds the sealed bytes as they are
// (vault.Seal), no text encoding. Files are 0600 in 0700 directories.
//
// One directory per record (rather than per id prefix) puts a batch's
// files in one directory, so a batch costs one directory fsync, and a
// disconnect removes one directory.
//
// Crash safety, in the order a batch is written:
//
//  1. each item's file is written as .tmp-<itemID>;
//  2. the batch's files are fsynced, several at once;
//  3. each is renamed to <itemID>;
//  4. the directory is fsynced once, making the renames durable;
//  5. the metadata that names the items is committed (one fsynced log line).
//
// A crash before 5 leaves files that no item names; the start-up sweep
// removes them. A crash after 5 finds every file in place, with its data. Deletion goes
// the other way round: the soft delete is committed first and the files
// removed after, so a crash between leaves files of deleted items, which
// the sweep removes too.

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

// tmpPrefix starts the name of a content file before its rename into place.
const tmpPrefix = ".tmp-"

// contentStore reads and writes item content files under dir.
type contentStore struct {
	dir   string
	vault *vault.Vault

	mu      sync.Mutex
	madeDir map[string]bool // record directories known to exist durably
}

func newContentStore(dir string, v *vault.Vault) *contentStore {
	return &contentStore{dir: dir, vault: v, madeDir: make(map[string]bool)}
}

func (c *contentStore) recordDir(recordID string) string { return filepath.Join(c.dir, recordID) }

func (c *contentStore) path(it *ItemRecord) string {
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

// Staged is an item's content file written under its temporary name,
// still open (at most a batch's worth of files is), still unsynced;
// Store.Publish makes it durable.
type Staged struct {
	f          *os.File
	tmp, final string
}

// stage seals an item's text into its record's directory under a
// temporary name. publish makes it durable.
func (c *contentStore) stage(it *ItemRecord, text string) (Staged, error) {
	dir := c.recordDir(it.RecordID)
	if err := c.ensureDir(it.RecordID); err != nil {
		return Staged{}, err
	}
	sealed := c.vault.Seal(contentAAD(it), encodeContent(text))
	s := Staged{tmp: filepath.Join(dir, tmpPrefix+it.ID), final: filepath.Join(dir, it.ID)}
	f, err := os.OpenFile(s.tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return Staged{}, fmt.Errorf("create item content: %w", err)
	}
	if _, err := f.Write(sealed); err != nil {
		f.Close()
		os.Remove(s.tmp)
		return Staged{}, fmt.Errorf("write item content: %w", err)
	}
	s.f = f
	return s, nil
}

// syncParallel bounds the fsyncs publish runs at once. Concurrent fsyncs
// of files in one file system share journal commits (ext4's jbd2 gathers
// their waiters), so a batch costs a few commits rather than one per file.
const syncParallel = 8

// publish makes Staged files durable and puts them in place: it fsyncs
// and closes them (several at once), renames each to its final name, and
// fsyncs each directory they are in once. On error the files may be in
// either place; remove cleans both.
func (c *contentStore) publish(files []Staged) error {
	sem := make(chan struct{}, syncParallel)
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	for i, s := range files {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = storage.SyncClose(s.f)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return err
	}
	dirs := make(map[string]bool)
	for _, s := range files {
		if err := os.Rename(s.tmp, s.final); err != nil {
			return fmt.Errorf("publish item content: %w", err)
		}
		dirs[filepath.Dir(s.final)] = true
	}
	for d := range dirs {
		if err := storage.SyncDir(d); err != nil {
			return err
		}
	}
	return nil
}

// remove deletes the files of a batch that was not committed.
func (c *contentStore) remove(files []Staged) {
	for _, s := range files {
		s.f.Close() // an error here means it was closed already
		os.Remove(s.tmp)
		os.Remove(s.final)
	}
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

// removeRecord deletes a record's content directory.
func (c *contentStore) removeRecord(recordID string) error {
	c.mu.Lock()
	delete(c.madeDir, recordID)
	c.mu.Unlock()
	if err := os.RemoveAll(c.recordDir(recordID)); err != nil {
		return fmt.Errorf("remove item content: %w", err)
	}
	return nil
}

// ErrContentMissing means an item's content file is not there.
var ErrContentMissing = errors.New("item content missing")

// readText opens an item's content file and returns its text.
func (c *contentStore) readText(it *ItemRecord) (string, error) {
	f, err := os.Open(c.path(it))
	if errors.Is(err, fs.ErrNotExist) {
		return "", ErrContentMissing
	}
	if err != nil {
		return "", fmt.Errorf("open item content: %w", err)
	}
	defer f.Close()
	b, err := readContentFile(f)
	if err != nil {
		return "", err
	}
	p, err := c.vault.Open(contentAAD(it), b)
	if err != nil {
		return "", fmt.Errorf("open item content: %w", err)
	}
	return decodeContent(p)
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
