package mail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"testing"
)

// attachMail is a message with a text body, a base64 PDF, a quoted-
// printable text file named in Content-Type only, an inline image
// without a name, a nested multipart with a named part, and an unnamed
// attachment.
func attachMail(pdf []byte) string {
	b64 := base64.StdEncoding.EncodeToString(pdf)
	var lines []string
	for len(b64) > 76 {
		lines = append(lines, b64[:76])
		b64 = b64[76:]
	}
	lines = append(lines, b64)
	return "From: ann@x\r\nSubject: report\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=\"b1\"\r\n\r\n" +
		"--b1\r\nContent-Type: text/plain\r\n\r\nSee the report.\r\n" +
		"--b1\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=\"C:\\\\Users\\\\ann\\\\Q3 report.pdf\"\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		strings.Join(lines, "\r\n") + "\r\n" +
		"--b1\r\nContent-Type: text/plain; name=\"=?UTF-8?Q?notes_=C3=A9t=C3=A9.txt?=\"\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\nsummer =\r\nnotes=3D\r\n" +
		"--b1\r\nContent-Type: image/png\r\nContent-Disposition: inline\r\n\r\nPNG\r\n" +
		"--b1\r\nContent-Type: multipart/alternative; boundary=\"b2\"\r\n\r\n" +
		"--b2\r\nContent-Type: text/csv; name=\"a.csv\"\r\n\r\nx,y\r\n--b2--\r\n" +
		"--b1\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment\r\n\r\nabc\r\n" +
		"--b1--\r\n"
}

// TestAttachments: every attachment is listed in order with its decoded
// name, type and size and its bytes; the body is still the text part;
// an inline image without a name is not listed.
func TestAttachments(t *testing.T) {
	pdf := bytes.Repeat([]byte("%PDF-1.4 stream "), 100)
	m, err := Parse([]byte(attachMail(pdf)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Text != "See the report." {
		t.Errorf("text %q", m.Text)
	}
	want := []Attachment{
		{0, "Q3 report.pdf", "application/pdf", int64(len(pdf)), pdf},
		{1, "notes été.txt", "text/plain", int64(len("summer notes=")), []byte("summer notes=")},
		{2, "a.csv", "text/csv", 3, []byte("x,y")},
		{3, "attachment-4", "application/octet-stream", 3, []byte("abc")},
	}
	if len(m.Attachments) != len(want) {
		t.Fatalf("%d attachments, want %d: %+v", len(m.Attachments), len(want), m.Attachments)
	}
	for i, w := range want {
		g := m.Attachments[i]
		if g.Index != w.Index || g.Name != w.Name || g.Type != w.Type || g.Size != w.Size || !bytes.Equal(g.Data, w.Data) {
			t.Errorf("attachment %d: %d %q %q %d %d bytes, want %d %q %q %d", i, g.Index, g.Name, g.Type, g.Size, len(g.Data), w.Index, w.Name, w.Type, w.Size)
		}
	}
	if m, _ := Parse([]byte("Subject: plain\r\n\r\nhello")); m.Attachments != nil {
		t.Errorf("a plain message lists %v", m.Attachments)
	}
}

// TestAttachmentTooLarge: an attachment over MaxAttachmentData is listed
// with its whole size and no bytes; one after it, which still fits the
// message's total, keeps its bytes.
func TestAttachmentTooLarge(t *testing.T) {
	big := bytes.Repeat([]byte{'z'}, MaxAttachmentData+1)
	raw := strings.Replace(attachMail(big), "Q3 report.pdf", "big.bin", 1)
	m, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if g := m.Attachments[0]; g.Name != "big.bin" || g.Size != int64(len(big)) || g.Data != nil {
		t.Errorf("big attachment: %q %d, %d bytes kept", g.Name, g.Size, len(g.Data))
	}
	if g := m.Attachments[2]; g.Name != "a.csv" || string(g.Data) != "x,y" {
		t.Errorf("after it: %q %q", g.Name, g.Data)
	}
}

// TestOpenAttachment: each listed attachment opens by its index with the
// same name and type, and its content reads back whole, even one too
// large for Parse to keep; an index not listed is ErrNoAttachment.
func TestOpenAttachment(t *testing.T) {
	big := bytes.Repeat([]byte("%PDF big "), MaxAttachmentData/9+1)
	raw := []byte(attachMail(big))
	m, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if m.Attachments[0].Data != nil {
		t.Fatal("the big attachment was kept: the test does not test the unkept case")
	}
	want := [][]byte{big, []byte("summer notes="), []byte("x,y"), []byte("abc")}
	for i, w := range want {
		at, r, err := OpenAttachment(raw, i)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, w) {
			t.Errorf("%d: %d bytes (%v), want %d", i, len(got), err, len(w))
		}
		if l := m.Attachments[i]; at.Index != i || at.Name != l.Name || at.Type != l.Type {
			t.Errorf("%d: %d %q %q, listed %q %q", i, at.Index, at.Name, at.Type, l.Name, l.Type)
		}
	}
	for _, i := range []int{-1, 4, MaxAttachments} {
		if _, _, err := OpenAttachment(raw, i); !errors.Is(err, ErrNoAttachment) {
			t.Errorf("index %d: %v, want ErrNoAttachment", i, err)
		}
	}
	if _, _, err := OpenAttachment([]byte("Subject: plain\r\n\r\nhello"), 0); !errors.Is(err, ErrNoAttachment) {
		t.Errorf("plain message: %v", err)
	}
	if _, _, err := OpenAttachment([]byte("not a message"), 0); !errors.Is(err, ErrMalformed) {
		t.Errorf("garbage: %v", err)
	}
}
