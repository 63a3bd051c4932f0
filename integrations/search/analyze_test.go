package search

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"searchsvc/integrations/mail"
	"searchsvc/integrations/mail/mailtest"
)

// tokens writes what Analyze emits as "pos:term" (or "pos:term/word"
// when the word differs), one per token.
func tokens(text string) string {
	var out []string
	Analyze(text, func(t Token) {
		s := fmt.Sprintf("%d:%s", t.Pos, t.Term)
		if t.Word != t.Term {
			s += "/" + t.Word
		}
		out = append(out, s)
	})
	return strings.Join(out, " ")
}

func TestAnalyze(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"words", "Quarterly report, final.", "0:quarter/quarterly 1:report 2:final"},
		{"stems", "reports running RUNS happily", "0:report/reports 1:run/running 2:run/runs 3:happili/happily"},
		{"case and accents", "Café CRÈME naïve Ångström", "0:cafe 1:creme 2:naiv/naive 3:angstrom"},
		{"decomposed accents", "Cafe\u0301", "0:cafe"},
		{"special letters", "Straße Œuvre Łódź Þór ﬁle", "0:strass/strasse 1:oeuvr/oeuvre 2:lodz 3:thor 4:file"},
		{"vietnamese", "Tiếng Việt", "0:tieng 1:viet"},
		{"greek and cyrillic", "Ελληνικά ΈΝΑ Ёлка", "0:ελληνικα 1:ενα 2:елка"},
		{"full width", "ＡＢＣ　１２３", "0:abc 1:123"},
		{"apostrophes", "don't Alice's it’s O'Brien", "0:dont 1:alic/alice 2:it 3:obrien"},
		{"hyphens", "e-mail follow-up co-op-ed-x-y", "0:email 0:e 1:mail 2:followup 2:follow 3:up 4:co 5:op 6:ed 7:x 8:y"},
		{"unicode hyphen", "e‐mail", "0:email 0:e 1:mail"},
		{"acronym", "the U.S.A. and e.g.", "0:the 1:usa 1:u 2:s 3:a 4:and 5:eg 5:e 6:g"},
		{"file name", "report_v2.pdf", "0:report 1:v2 2:pdf"},
		{"numbers", "2026 3.14 1,000 1,000,000.5 1,2 192.168.0.1", "0:2026 1:3.14 2:1000 3:1000000.5 4:1 5:2 6:192.168.0.1"},
		{"dates and times", "2026-01-31 10:30", "0:2026 1:01 2:31 3:10 4:30"},
		{"languages", "C++ c# F# notepad++ c#x", "0:c++ 1:c# 2:f# 3:notepad 4:c 5:x"},
		{"address", "mail alice@example.org now",
			"0:mail 1:alice@example.org 1:alic/alice 2:exampl/example 3:org 4:now"},
		{"address with dots and plus", "<Alice.Smith+news@Mail.Example.co.uk>,",
			"0:alice.smith+news@mail.example.co.uk 0:alic/alice 1:smith 2:news 3:mail 4:exampl/example 5:co 6:uk"},
		{"address then path", "bob@x.org/files", "0:bob@x.org 0:bob 1:x 2:org 3:file/files"},
		{"not an address", "@alice user@localhost a@b.c", "0:alic/alice 1:user 2:localhost 3:a 4:bc 4:b 5:c"},
		{"url", "https://www.example.org/path?q=1", "0:https 1:www 2:exampl/example 3:org 4:path 5:q 6:1"},
		{"cjk bigrams", "東京都に行く", "0:東京 1:京都 2:都に 3:に行 4:行く"},
		{"cjk lone char", "日 本", "0:日 1:本"},
		{"hangul and latin", "한국어iPhone", "0:한국 1:국어 2:iphon/iphone"},
		{"katakana with long mark", "コーヒー", "0:コー 1:ーヒ 2:ヒー"},
		{"long junk takes a position", "a " + strings.Repeat("x", MaxWordBytes+1) + " b", "0:a 2:b"},
		{"longest word kept", strings.Repeat("x", MaxWordBytes), "0:" + strings.Repeat("x", MaxWordBytes)},
		{"marks alone", "\u0301\u0301 x", "0:x"},
		{"invalid utf-8", "ab\xffcd", "0:ab 1:cd"},
		{"punctuation only", "!!! ... --- ***", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tokens(tt.text); got != tt.want {
				t.Errorf("Analyze(%q)\n got %s\nwant %s", tt.text, got, tt.want)
			}
		})
	}
}

func TestAnalyzeOffsets(t *testing.T) {
	text := "Café e-mail bob@x.org 東京都 don't"
	want := []string{"Café", "e-mail", "e", "mail", "bob@x.org", "bob", "x", "org", "東京", "京都", "don't"}
	var got []string
	Analyze(text, func(t Token) { got = append(got, text[t.Start:t.End]) })
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got spans %q, want %q", got, want)
	}
}

func TestFoldTables(t *testing.T) {
	if got, want := len(latinBase), 0x250-0xC0; got != want {
		t.Errorf("got latinBase of %d letters, want %d", got, want)
	}
	if got, want := len(latinExtraBase), 0x100; got != want {
		t.Errorf("got latinExtraBase of %d letters, want %d", got, want)
	}
	tests := []struct{ in, want string }{
		{"ÀÁÂÃÄÅàáâãäå", "aaaaaaaaaaaa"},
		{"ÇçĆćČč", "cccccc"},
		{"ÑñŃńŇň", "nnnnnn"},
		{"ŠšŽžŸÿ", "sszzyy"},
		{"ǅǈǋ", "dzljnj"},
		{"ẞ", "ss"},
		{"ỹỸ", "yy"},
		{"Я", "я"},
	}
	for _, tt := range tests {
		if got := string(appendFold(nil, tt.in, foldWord)); got != tt.want {
			t.Errorf("fold(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// checkTokens fails unless Analyze's promises hold for text.
func checkTokens(t *testing.T, text string) {
	t.Helper()
	lastPos, lastStart := 0, 0
	Analyze(text, func(tk Token) {
		switch {
		case tk.Start < 0 || tk.End > len(text) || tk.Start >= tk.End:
			t.Fatalf("token %+v: span outside [0,%d) or empty", tk, len(text))
		case tk.Pos < lastPos || tk.Start < lastStart:
			t.Fatalf("token %+v after pos %d start %d: went back", tk, lastPos, lastStart)
		case tk.Term == "" || tk.Word == "" || len(tk.Term) > MaxTermBytes || len(tk.Word) > MaxTermBytes:
			t.Fatalf("token %+v: empty or longer than %d bytes", tk, MaxTermBytes)
		case !utf8.ValidString(tk.Term) || !utf8.ValidString(tk.Word):
			t.Fatalf("token %+v: not UTF-8", tk)
		}
		lastPos, lastStart = tk.Pos, tk.Start
	})
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{
		"Quarterly report", "e-mail alice.smith+x@example.org.", "U.S.A. C++ c#",
		"東京都に行く 한국어", "1,000.50 3.14 192.168.0.1", "Cafe\u0301 ﬁle ẞ", "don't 'tis o'",
		"a@b@c.d", "x-y-z-w-v-u", "\xff\xfe@.", "ǅ\u0301Ⱥ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		checkTokens(t, text)
	})
}

// mailTexts returns the subjects and bodies of the test corpus's mails,
// or skips when the corpus is absent (see mailtest.CorpusPath).
func mailTexts(tb testing.TB) []string {
	tb.Helper()
	var texts []string
	for _, raw := range mailtest.Corpus(tb) {
		if m, err := mail.Parse(raw); err == nil {
			texts = append(texts, m.Subject, m.Text)
		}
	}
	return texts
}

func TestAnalyzeCorpus(t *testing.T) {
	texts := mailTexts(t)
	if len(texts) < 2*6000 {
		t.Fatalf("got %d texts, want the subjects and bodies of over 6,000 mails", len(texts))
	}
	for _, s := range texts {
		checkTokens(t, s)
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkAnalyze analyzes the corpus's subjects and bodies; MB/s is of
// the text analyzed, and cpu-MB/s the same per second of CPU time, which
// other work on a shared machine disturbs less than the wall clock.
func BenchmarkAnalyze(b *testing.B) {
	texts := mailTexts(b)
	size, tokens := 0, 0
	for _, s := range texts {
		size += len(s)
	}
	b.SetBytes(int64(size))
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime(b)
	n := 0
	for b.Loop() {
		n++
		tokens = 0
		for _, s := range texts {
			Analyze(s, func(Token) { tokens++ })
		}
	}
	b.ReportMetric(float64(tokens), "tokens/op")
	b.ReportMetric(float64(size)/float64(tokens), "bytes/token")
	b.ReportMetric(float64(n*size)/1e6/(cpuTime(b)-cpu).Seconds(), "cpu-MB/s")
}
