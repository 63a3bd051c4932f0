package mail_test

import (
	"io"
	"testing"
	"unicode/utf8"

	"searchsvc/integrations/mail"
)

// FuzzParse checks that Parse never panics and keeps its promises on any
// input: valid UTF-8 everywhere, text and recipients within their bounds.
func FuzzParse(f *testing.F) {
	for _, tt := range parseTests {
		f.Add([]byte(tt.raw))
		f.Add([]byte(crlf(tt.raw)))
	}
	f.Add([]byte(nested(mail.MaxDepth + 2)))
	f.Add([]byte("Content-Type: multipart/mixed; boundary=b\n\n--b\nContent-Disposition: attachment; filename=a.pdf\nContent-Transfer-Encoding: base64\n\nJVBERi0=\n--b--\n"))
	f.Add([]byte("Message-ID: <a@x>\nIn-Reply-To: <<b@x> (c)\nReferences: <a@x> <b@x>\n\nhi"))
	f.Add([]byte("Content-Type: text/html\n\n<a x='<!--<script>&amp;"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := mail.Parse(raw)
		if err != nil {
			if m.Subject != "" || m.From != "" || m.To != nil || m.Text != "" {
				t.Errorf("error %v with a non-empty message %+v", err, m)
			}
			return
		}
		if len(m.Text) > mail.MaxText {
			t.Errorf("text of %d bytes, want at most %d", len(m.Text), mail.MaxText)
		}
		if len(m.To) > mail.MaxRecipients {
			t.Errorf("%d recipients, want at most %d", len(m.To), mail.MaxRecipients)
		}
		if len(m.Refs) > mail.MaxRefs || m.Thread != "" && len(m.Refs) == 0 {
			t.Errorf("thread %q with %d links, want at most %d and one at least", m.Thread, len(m.Refs), mail.MaxRefs)
		}
		if len(m.Attachments) > mail.MaxAttachments {
			t.Errorf("%d attachments, want at most %d", len(m.Attachments), mail.MaxAttachments)
		}
		kept := 0
		for i, a := range m.Attachments {
			kept += len(a.Data)
			if a.Index != i || a.Name == "" || int64(len(a.Data)) > a.Size || len(a.Data) > mail.MaxAttachmentData || !utf8.ValidString(a.Name) {
				t.Errorf("attachment %d: %d %q size %d, %d bytes kept", i, a.Index, a.Name, a.Size, len(a.Data))
			}
		}
		for _, a := range m.Attachments {
			// The download route opens each listed attachment as Parse
			// lists it: same name and type, and as many bytes.
			at, r, err := mail.OpenAttachment(raw, a.Index)
			if err != nil {
				t.Fatalf("attachment %d listed but not opened: %v", a.Index, err)
			}
			n, _ := io.Copy(io.Discard, r)
			if at.Name != a.Name || at.Type != a.Type || n != a.Size {
				t.Errorf("attachment %d opened as %q %q %d bytes, listed %q %q %d", a.Index, at.Name, at.Type, n, a.Name, a.Type, a.Size)
			}
		}
		if kept > 2*mail.MaxAttachmentData {
			t.Errorf("%d attachment bytes kept", kept)
		}
		for _, id := range append([]string{m.Thread}, m.Refs...) {
			if len(id) > 998 || id != "" && (id[0] != '<' || id[len(id)-1] != '>') {
				t.Errorf("message id %q", id)
			}
		}
		for _, s := range append([]string{m.Subject, m.From, m.Text}, m.To...) {
			if !utf8.ValidString(s) {
				t.Errorf("invalid UTF-8: %q", s)
			}
		}
	})
}
