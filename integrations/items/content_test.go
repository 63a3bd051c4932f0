package items

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"io"
	"os"
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
	if _, err := c.readText(a); !errors.Is(err, ErrContentMissing) {
		t.Errorf("read before publish: got %v, want ErrContentMissing", err)
	}
	if err := c.publish(files); err != nil {
		t.Fatal(err)
	}
	if text, err := c.readText(a); err != nil || text != secret {
		t.Fatalf("read: got %q, %v", text, err)
	}
	sealed, err := os.ReadFile(c.path(a))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(sealed, []byte("secret")) {
		t.Error("content file holds plain text")
	}
	// The file is the vault's sealed bytes as they are: no text encoding
	// on top, so its size is the plaintext's and the seal's overhead.
	if want := len(encodeContent(secret)) + vault.Overhead; len(sealed) != want {
		t.Errorf("content file: %d bytes, want %d (the sealed bytes, no base64)", len(sealed), want)
	}
	if got, err := v.Open(contentAAD(a), sealed); err != nil || !bytes.Equal(got, encodeContent(secret)) {
		t.Errorf("content file opened as sealed bytes: %v", err)
	}

	// Another item's file in a's place does not open, nor does an altered one.
	other, _ := os.ReadFile(c.path(b))
	os.WriteFile(c.path(a), other, 0o600)
	if _, err := c.readText(a); err == nil || errors.Is(err, ErrContentMissing) {
		t.Errorf("b's content under a's name: got %v, want an error", err)
	}
	altered := bytes.Clone(sealed)
	altered[len(altered)/2] ^= 'A' ^ 'B'
	os.WriteFile(c.path(a), altered, 0o600)
	if _, err := c.readText(a); err == nil || errors.Is(err, ErrContentMissing) {
		t.Errorf("altered content: got %v, want an error", err)
	}

	c.remove(files)
	if err := c.removeRecord(a.RecordID); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.recordDir(a.RecordID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("record directory after removeRecord: %v", err)
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
