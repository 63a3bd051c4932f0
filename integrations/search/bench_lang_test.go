package search

import (
	"testing"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// BenchmarkDetectLang detects the language of every mail of the shared
// corpus, as indexing does: the cost per mail, and how many were taken
// for another language than English (the corpus is English mail and
// spam, with a few German and French newsletters).
func BenchmarkDetectLang(b *testing.B) {
	var docs []Doc
	for _, r := range mailtest.Corpus(b) {
		if m, err := mail.Parse(r); err == nil {
			docs = append(docs, Doc{Title: m.Subject, Text: m.Text})
		}
	}
	other := 0
	b.ResetTimer()
	cpu := processCPU()
	for b.Loop() {
		other = 0
		for i := range docs {
			if detectDoc(&docs[i]) != LangEnglish {
				other++
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*len(docs)), "µs/mail")
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N*len(docs)), "cpu-µs/mail")
	b.ReportMetric(float64(other), "not-English")
	b.ReportMetric(float64(len(docs)), "mails")
}
