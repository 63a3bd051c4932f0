package extract_test

import (
	"encoding/base64"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations/extract"
	"searchsvc/integrations/mail"
)

// bigPDF builds a PDF of about size bytes: pages of text in streams
// left uncompressed, as a scanned-then-OCRed report often is.
func bigPDF(size int) []byte {
	p := newPDF()
	pagesAt := p.reserve()
	catalog := p.obj(fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesAt))
	font := p.obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	line := "BT /F1 10 Tf 72 700 Td (The harbour committee met on Tuesday and agreed the fees for the coming season.) Tj ET\n"
	page := strings.Repeat(line, 256) // about 28 KB a page
	var kids []string
	for n := 0; n < size; n += len(page) {
		c := p.stream("", []byte(page), false)
		pg := p.obj(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R >>", pagesAt, c))
		kids = append(kids, fmt.Sprintf("%d 0 R", pg))
	}
	p.set(pagesAt, fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d /Resources << /Font << /F1 %d 0 R >> >> >>",
		strings.Join(kids, " "), len(kids), font))
	return p.finish(catalog, "")
}

// BenchmarkMailPDFAttachment reads a mail with a 5 MiB PDF attached as a
// sync does (mail.Parse, then the attachments' text: MailText), and
// reports the most heap it held beyond the raw mail (sampled every 100
// µs) beside what the bounds allow: the attachment decoded (at most
// mail.MaxAttachmentData) and the extractor's own limit on what a file
// may inflate to (Limits.MaxInflateTotal), and the text (mail.MaxText).
func BenchmarkMailPDFAttachment(b *testing.B) {
	pdf := bigPDF(5 << 20)
	var enc strings.Builder
	b64 := base64.StdEncoding.EncodeToString(pdf)
	for len(b64) > 76 {
		enc.WriteString(b64[:76] + "\r\n")
		b64 = b64[76:]
	}
	enc.WriteString(b64 + "\r\n")
	raw := []byte("From: ann@example.org\r\nSubject: fees\r\nMIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n" +
		"--b\r\nContent-Type: text/plain\r\n\r\nThe report is attached.\r\n" +
		"--b\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename=report.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n" +
		enc.String() + "--b--\r\n")
	x := extract.New(extract.Limits{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	var peak uint64
	b.ReportAllocs()
	for b.Loop() {
		runtime.GC()
		base := heap()
		var top atomic.Uint64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for {
				if h := heap(); h > top.Load() {
					top.Store(h)
				}
				select {
				case <-stop:
					return
				case <-time.After(100 * time.Microsecond):
				}
			}
		}()
		m, err := mail.Parse(raw)
		if err != nil {
			b.Fatal(err)
		}
		text := x.MailText(&m)
		close(stop)
		<-done
		if len(m.Attachments) != 1 || m.Attachments[0].Size != int64(len(pdf)) || !strings.Contains(text, "harbour committee") {
			b.Fatalf("attachments %+v, text of %d bytes", m.Attachments, len(text))
		}
		if top.Load() > base {
			peak = max(peak, top.Load()-base)
		}
	}
	lim := x.Limits()
	bound := uint64(len(pdf)) + uint64(lim.MaxInflateTotal) + uint64(mail.MaxText)
	b.ReportMetric(float64(len(pdf))/(1<<20), "pdf-MiB")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(bound)/(1<<20), "bound-MiB")
	if peak > bound {
		b.Logf("NOT MET: %.1f MiB of heap beyond the mail, over the bounds' %.1f MiB", float64(peak)/(1<<20), float64(bound)/(1<<20))
	}
}
