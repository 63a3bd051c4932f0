package extract_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"searchsvc/integrations/extract"
	"searchsvc/integrations/mail"
)

// TestMailText: a mail's text is its body, then the text of each
// attachment the extractor reads, after its name; an image adds nothing;
// the attachments' bytes are let go of.
func TestMailText(t *testing.T) {
	pdf := base64.StdEncoding.EncodeToString(simplePDF(t, "BT /F1 12 Tf 72 720 Td (Harbour fees rise in spring) Tj ET"))
	docx := base64.StdEncoding.EncodeToString(docx(t, "<w:p><w:r><w:t>Minutes of the committee</w:t></w:r></w:p>"))
	raw := "From: ann@x\r\nSubject: fees\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nSee attached.\r\n" +
		"--b\r\nContent-Type: application/pdf; name=fees.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n" + pdf + "\r\n" +
		"--b\r\nContent-Type: image/png\r\nContent-Disposition: attachment; filename=logo.png\r\n\r\n\x89PNG\r\n" +
		"--b\r\nContent-Type: application/octet-stream\r\nContent-Disposition: attachment; filename=minutes.docx\r\nContent-Transfer-Encoding: base64\r\n\r\n" + docx + "\r\n" +
		"--b--\r\n"
	m, err := mail.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	got := extract.New(extract.Limits{}).MailText(&m)
	want := "See attached.\n\nfees.pdf\nHarbour fees rise in spring\n\nminutes.docx\nMinutes of the committee"
	if strings.TrimSpace(got) != want {
		t.Errorf("text:\n%q\nwant\n%q", got, want)
	}
	for _, a := range m.Attachments {
		if a.Data != nil {
			t.Errorf("%s: %d bytes still held", a.Name, len(a.Data))
		}
	}
	if len(m.Attachments) != 3 || m.Attachments[1].Name != "logo.png" {
		t.Errorf("attachments %+v", m.Attachments)
	}
}
