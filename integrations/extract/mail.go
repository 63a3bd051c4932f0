package extract

import (
	"strings"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/textguard"
)

// MailText is a message's body text followed by the text of each of its
// attachments the extractor reads, each after a line with its name, at
// most mail.MaxText bytes in all: what an email item keeps as its text,
// so that a word inside an attached PDF finds the mail. An attachment
// that does not extract (an image, one over the limits) adds nothing.
// The attachments' bytes are let go of as they are read.
func (x *Extractor) MailText(m *mail.Message) string {
	if len(m.Attachments) == 0 {
		return m.Text
	}
	var b strings.Builder
	b.WriteString(m.Text)
	for i := range m.Attachments {
		a := &m.Attachments[i]
		data := a.Data
		a.Data = nil
		if data == nil || b.Len() >= mail.MaxText || noText(a.Type) {
			continue
		}
		res := x.Extract(a.Name, data)
		if res.Err != nil || strings.TrimSpace(res.Text) == "" {
			continue
		}
		if b.Len() > 0 {
			b.WriteString("\n\n")
		}
		b.WriteString(a.Name)
		b.WriteString("\n")
		b.WriteString(res.Text)
	}
	return textguard.Truncate(b.String(), mail.MaxText)
}

// noText reports whether a media type is one whose files hold no text
// to extract (an image, a sound, a film), which sniffing might still take
// for text.
func noText(media string) bool {
	for _, p := range []string{"image/", "audio/", "video/", "font/"} {
		if strings.HasPrefix(media, p) {
			return true
		}
	}
	return false
}
