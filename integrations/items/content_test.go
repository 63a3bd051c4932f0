package items

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations/vault"
)

func testVault(t testing.TB, fill byte) *vault.Vault {
	t.Helper()
	v, err := vault.New(bytes.Repeat([]byte{fill}, vault.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// contentV1Plaintext builds a content plaintext as builds before contentV2
// wrote it: the text's length, the text and the raw original, deflated.
func contentV1Plaintext(text, raw string) []byte {
	var buf bytes.Buffer
	buf.WriteByte(contentV1)
	zw, _ := flate.NewWriter(&buf, flate.BestSpeed)
	zw.Write(binary.AppendUvarint(nil, uint64(len(text))))
	io.WriteString(zw, text)
	io.WriteString(zw, raw)
	zw.Close()
	return buf.Bytes()
}

func TestContentEncoding(t *testing.T) {
	for _, text := range []string{"", "hello", strings.Repeat("text ", 10000)} {
		p := encodeContent(text)
		if p[0] != contentV2 {
			t.Errorf("version byte: got %d, want %d", p[0], contentV2)
		}
		got, err := decodeContent(p)
		if err != nil || got != text {
			t.Errorf("round trip of %d bytes: got %d bytes, %v", len(text), len(got), err)
		}
		// Nothing follows the text: the raw original is not kept.
		zr := flate.NewReader(bytes.NewReader(p[1:]))
		all, err := io.ReadAll(zr)
		if want := len(binary.AppendUvarint(nil, uint64(len(text)))) + len(text); err != nil || len(all) != want {
			t.Errorf("plaintext of %d bytes of text: %d bytes deflated, %v; want %d", len(text), len(all), err, want)
		}
	}
	// A file of an earlier build, with the raw original after the text,
	// still gives its text.
	for _, tc := range []struct{ text, raw string }{
		{"", ""}, {"hello", ""}, {"", "raw only"},
		{strings.Repeat("text ", 10000), strings.Repeat("Subject: x\r\n\r\nbody ", 5000)},
	} {
		got, err := decodeContent(contentV1Plaintext(tc.text, tc.raw))
		if err != nil || got != tc.text {
			t.Errorf("version 1 of %d+%d bytes: got %d bytes, %v", len(tc.text), len(tc.raw), len(got), err)
		}
	}
	if _, err := decodeContent([]byte{9, 1, 2}); err == nil {
		t.Error("an unknown version decoded")
	}
}

func TestContentFiles(t *testing.T) {
	v := testVault(t, 5)
	c := newContentStore(t.TempDir(), v)
	mk := func(id string) *ItemRecord {
		return &ItemRecord{ID: id, UserID: "u1", RecordID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", Integration: "gmail", Date: time.Now()}
	}
	a, b := mk("0a1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"), mk("0b1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b")
	const secret = "the secret text of a private message"
	var files []Staged
	for _, it := range []*ItemRecord{a, b} {
		s, err := c.stage(it, secret)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, s)
	}
	if err := c.publish(files); err != nil {
		t.Fatal(err)
	}
	if text, err := c.readText(a); err != nil || text != secret {
		t.Fatalf("read: got %q, %v", text, err)
	}
	// Both texts went to one pack, one after the other, and each item's
	// reference names its place.
	if c.path(a) != c.path(b) || filepath.Base(c.path(a)) != "pack-1" {
		t.Errorf("packs: %s and %s, want both in pack-1", c.path(a), c.path(b))
	}
	one := len(encodeContent(secret)) + vault.Overhead
	if want := fmt.Sprintf("1.0.%d", one); a.Content != want {
		t.Errorf("a's reference: %q, want %q", a.Content, want)
	}
	if want := fmt.Sprintf("1.%d.%d", one, one); b.Content != want {
		t.Errorf("b's reference: %q, want %q", b.Content, want)
	}
	pack, err := os.ReadFile(c.path(a))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(pack, []byte("secret")) {
		t.Error("pack holds plain text")
	}
	// The pack is the vault's sealed bytes as they are: no text encoding,
	// no header, so its size is the plaintexts' and the seals' overhead.
	if len(pack) != 2*one {
		t.Errorf("pack: %d bytes, want %d (two sealed texts, no base64)", len(pack), 2*one)
	}
	if got, err := v.Open(contentAAD(a), pack[:one]); err != nil || !bytes.Equal(got, encodeContent(secret)) {
		t.Errorf("a's bytes opened as sealed bytes: %v", err)
	}
	if st, err := os.Stat(c.path(a)); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("pack mode: %v, %v; want 0600", st, err)
	}

	// Another item's place under a's reference does not open.
	swapped := *a
	swapped.Content = b.Content
	if _, err := c.readText(&swapped); !errors.Is(err, ErrContentDamaged) {
		t.Errorf("b's bytes under a's reference: got %v, want ErrContentDamaged", err)
	}
	for _, bad := range []string{"x", "0.0.10", "1.-1.10", "1.0.0", "1.0", "1.0.10.4"} {
		swapped.Content = bad
		if _, err := c.readText(&swapped); !errors.Is(err, ErrContentDamaged) {
			t.Errorf("reference %q: got %v, want ErrContentDamaged", bad, err)
		}
	}
	// A byte altered in a's bytes fails a, and only a.
	altered := bytes.Clone(pack)
	altered[one/2] ^= 'A' ^ 'B'
	os.WriteFile(c.path(a), altered, 0o600)
	if _, err := c.readText(a); !errors.Is(err, ErrContentDamaged) {
		t.Errorf("altered content: got %v, want ErrContentDamaged", err)
	}
	if text, err := c.readText(b); err != nil || text != secret {
		t.Errorf("b beside an altered a: got %q, %v", text, err)
	}
	// A pack cut short fails the items past the cut, and no other.
	os.WriteFile(c.path(a), pack[:one+one/2], 0o600)
	if _, err := c.readText(b); !errors.Is(err, ErrContentDamaged) || !strings.Contains(err.Error(), "pack 1 holds") {
		t.Errorf("pack cut short: got %v, want ErrContentDamaged naming the pack", err)
	}
	if text, err := c.readText(a); err != nil || text != secret {
		t.Errorf("a before the cut: got %q, %v", text, err)
	}
	os.Remove(c.path(a))
	if _, err := c.readText(a); !errors.Is(err, ErrContentMissing) {
		t.Errorf("pack removed: got %v, want ErrContentMissing", err)
	}

	if err := c.removeRecord(a.RecordID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.recordDir(a.RecordID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record directory after removeRecord: %v", err)
	}
}

// TestContentOwnFile: an item stored before packs (no Content) has its
// text in a file of its own, which is still read, and a damaged one fails
// with ErrContentDamaged.
func TestContentOwnFile(t *testing.T) {
	v := testVault(t, 5)
	c := newContentStore(t.TempDir(), v)
	it := &ItemRecord{ID: "0a1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", UserID: "u1", RecordID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", Integration: "gmail"}
	if err := c.ensureDir(it.RecordID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.readText(it); !errors.Is(err, ErrContentMissing) {
		t.Errorf("no file: got %v, want ErrContentMissing", err)
	}
	sealed := v.Seal(contentAAD(it), contentV1Plaintext("old text", "raw"))
	path := filepath.Join(c.recordDir(it.RecordID), it.ID)
	os.WriteFile(path, sealed, 0o600)
	if c.path(it) != path {
		t.Errorf("path: %s, want %s", c.path(it), path)
	}
	if text, err := c.readText(it); err != nil || text != "old text" {
		t.Errorf("own file: got %q, %v", text, err)
	}
	sealed[len(sealed)/2] ^= 1
	os.WriteFile(path, sealed, 0o600)
	if _, err := c.readText(it); !errors.Is(err, ErrContentDamaged) {
		t.Errorf("altered own file: got %v, want ErrContentDamaged", err)
	}
}

func TestCursor(t *testing.T) {
	c := Cursor{Date: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC), ID: "6f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"}
	got, err := ParseCursor(c.String())
	if err != nil || !got.Date.Equal(c.Date) || got.ID != c.ID {
		t.Fatalf("round trip: got %+v, %v", got, err)
	}
	for _, bad := range []string{"", "!!", "YWJj", c.String() + "x", strings.Repeat("A", 300)} {
		if _, err := ParseCursor(bad); !errors.Is(err, ErrBadCursor) {
			t.Errorf("ParseCursor(%q): got %v, want ErrBadCursor", bad, err)
		}
	}
}
