package mail_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"searchsvc/integrations/mail"
)

// crlf gives s with CRLF line endings, as messages travel on the wire.
func crlf(s string) string { return strings.ReplaceAll(s, "\n", "\r\n") }

var parseTests = []struct {
	name string
	raw  string // LF line endings; each test also runs with CRLF
	want mail.Message
}{
	{
		name: "plain",
		raw: `Return-Path: <ann@example.org>
Received: from mx.example.org (mx.example.org [192.0.2.1])
	by mail.example.com with ESMTPS id abc123
	for <bob@example.com>; Tue, 14 Apr 2026 09:30:01 +0200
From: Ann Example <ann@example.org>
To: Bob <bob@example.com>, carol@example.com
Cc: "Dave, Jr." <dave@example.net>
Subject: Lunch on
 Thursday?
Date: Tue, 14 Apr 2026 09:30:00 +0200
Message-ID: <1@example.org>
MIME-Version: 1.0
Content-Type: text/plain; charset=utf-8

Hi Bob,

shall we meet at noon?
`,
		want: mail.Message{
			Subject: "Lunch on Thursday?",
			From:    "Ann Example <ann@example.org>",
			To:      []string{"Bob <bob@example.com>", "carol@example.com", "Dave, Jr. <dave@example.net>"},
			Date:    time.Date(2026, 4, 14, 7, 30, 0, 0, time.UTC),
			Text:    "Hi Bob,\n\nshall we meet at noon?",
		},
	},
	{
		name: "multipart/alternative",
		raw: `From: news@shop.example
To: me@example.com
Subject: Your order
Date: Wed, 1 Apr 2026 12:00:00 +0000
MIME-Version: 1.0
Content-Type: multipart/alternative; boundary="b1"

This is a multi-part message in MIME format.
--b1
Content-Type: text/plain; charset="UTF-8"
Content-Transfer-Encoding: 7bit

Your order has shipped.
--b1
Content-Type: text/html; charset="UTF-8"

<html><body><p>Your order has <b>shipped</b>.</p></body></html>
--b1--
`,
		want: mail.Message{
			Subject: "Your order",
			From:    "news@shop.example",
			To:      []string{"me@example.com"},
			Date:    time.Date(2026, 4, 1, 12, 0, 0, 0, time.UTC),
			Text:    "Your order has shipped.",
		},
	},
	{
		name: "nested multipart/mixed with attachments",
		raw: `From: =?UTF-8?Q?J=C3=BCrgen_M=C3=BCller?= <jm@example.de>
To: team@example.de
Subject: Invoice
Date: Thu, 2 Apr 2026 08:15:00 +0100
MIME-Version: 1.0
Content-Type: multipart/mixed; boundary="outer"

--outer
Content-Type: multipart/alternative; boundary="inner"

--inner
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

Die Rechnung f=C3=BCr M=C3=A4rz liegt bei. Bitte bis Monatsende =
begleichen.
--inner
Content-Type: text/html; charset=utf-8

<p>Die Rechnung</p>
--inner--

--outer
Content-Type: text/plain; charset=utf-8; name="notes.txt"
Content-Disposition: attachment; filename="notes.txt"

not the body
--outer
Content-Type: application/pdf; name="invoice.pdf"
Content-Disposition: attachment; filename="invoice.pdf"
Content-Transfer-Encoding: base64

JVBERi0xLjQgZmFrZSBwZGYgYnl0ZXMgAAEC
--outer--
`,
		want: mail.Message{
			Subject: "Invoice",
			From:    "Jürgen Müller <jm@example.de>",
			To:      []string{"team@example.de"},
			Date:    time.Date(2026, 4, 2, 7, 15, 0, 0, time.UTC),
			Text:    "Die Rechnung für März liegt bei. Bitte bis Monatsende begleichen.",
		},
	},
	{
		name: "base64 body, UTF-8 B subject",
		raw: `From: a@example.org
To: b@example.org
Subject: =?UTF-8?B?UsOpdW5pb24gw6AgMTBo?=
Date: Fri, 3 Apr 2026 10:00:00 +0200
Content-Type: text/plain; charset=UTF-8
Content-Transfer-Encoding: base64

R3LDvMOfZSBhdXMgS8O2bG4hCkRpZSBSZWNobnVu
ZyBsaWVndCBiZWkuCg==
`,
		want: mail.Message{
			Subject: "Réunion à 10h",
			From:    "a@example.org",
			To:      []string{"b@example.org"},
			Date:    time.Date(2026, 4, 3, 8, 0, 0, 0, time.UTC),
			Text:    "Grüße aus Köln!\nDie Rechnung liegt bei.",
		},
	},
	{
		name: "ISO-8859-1 Q and B subjects, Latin-1 8bit body",
		raw: "From: =?ISO-8859-1?B?R3L832U=?= <gr@example.fr>\n" +
			"To: x@example.fr\n" +
			"Subject: =?ISO-8859-1?Q?Caf=E9_cr=E8me?= =?iso-8859-1?q?_=E0_volont=E9?=\n" +
			"Date: Sat, 4 Apr 2026 18:00:00 +0000\n" +
			"Content-Type: text/plain; charset=iso-8859-1\n" +
			"Content-Transfer-Encoding: 8bit\n" +
			"\n" +
			"D\xe9j\xe0 vu \x93quoted\x94\n",
		want: mail.Message{
			Subject: "Café crème à volonté",
			From:    "Grüße <gr@example.fr>",
			To:      []string{"x@example.fr"},
			Date:    time.Date(2026, 4, 4, 18, 0, 0, 0, time.UTC),
			Text:    "Déjà vu “quoted”",
		},
	},
	{
		name: "windows-1252 and unknown charsets in encoded words",
		raw: `From: =?windows-1252?Q?=93Smart=94_Sender?= <s@example.com>
To: =?x-unknown?Q?Someone?= <o@example.com>
Subject: =?windows-1252?Q?Price:_100=80?=
Date: Sun, 5 Apr 2026 01:02:03 -0500

body
`,
		want: mail.Message{
			Subject: "Price: 100€",
			From:    "“Smart” Sender <s@example.com>",
			To:      []string{"Someone <o@example.com>"},
			Date:    time.Date(2026, 4, 5, 6, 2, 3, 0, time.UTC),
			Text:    "body",
		},
	},
	{
		name: "html only, with script and style",
		raw: `From: promo@example.com
To: me@example.com
Subject: Deals
Date: Mon, 6 Apr 2026 09:00:00 GMT
Content-Type: text/html; charset="utf-8"
Content-Transfer-Encoding: quoted-printable

<!DOCTYPE html><html><head><title>Deals</title>
<style type=3D"text/css">p { color: red; }</style>
<script>var x =3D "<p>not text</p>";</script></head>
<body><!-- tracking --><h1>Spring&nbsp;sale</h1>
<p>Save <b>50</b>% on <a href=3D"https://shop.example/?a=3D1&amp;b=3D2" title=3D"go >">everything</a>&hellip;</p>
<table><tr><td>Fish &amp; chips</td><td>&euro;5</td></tr></table>
<p>1 &lt; 2</p></body></html>
`,
		want: mail.Message{
			Subject: "Deals",
			From:    "promo@example.com",
			To:      []string{"me@example.com"},
			Date:    time.Date(2026, 4, 6, 9, 0, 0, 0, time.UTC),
			Text:    "Spring sale\nSave 50% on everything…\nFish & chips €5\n1 < 2",
		},
	},
	{
		name: "missing date, no content type, undisclosed recipients",
		raw: `From: someone@example.com
To: undisclosed-recipients:;
Subject: no date

hello
`,
		want: mail.Message{Subject: "no date", From: "someone@example.com", Text: "hello"},
	},
	{
		name: "unreadable date, broken address lists",
		raw: `From: "Broken <broken@
To: Bob <bob@example.com>, =?UTF-8?Q?Ren=C3=A9e?= <renee@[example
Cc: ok@example.com
Subject: broken
Date: yesterday at noon

x
`,
		want: mail.Message{
			Subject: "broken",
			From:    `"Broken <broken@`,
			To:      []string{"Bob <bob@example.com>, Renée <renee@[example", "ok@example.com"},
			Text:    "x",
		},
	},
	{
		name: "html part first, then plain",
		raw: `From: a@example.com
Content-Type: multipart/alternative; boundary=xyz

--xyz
Content-Type: text/html

<p>rich</p>
--xyz
Content-Type: text/plain

plain wins
--xyz--
`,
		want: mail.Message{From: "a@example.com", Text: "plain wins"},
	},
	{
		name: "blank plain part, html used",
		raw: `From: a@example.com
Content-Type: multipart/alternative; boundary=xyz

--xyz
Content-Type: text/plain

   
--xyz
Content-Type: text/html; charset=windows-1252

<div>Caf` + "\xe9" + `</div><div>ok</div>
--xyz--
`,
		want: mail.Message{From: "a@example.com", Text: "Café\nok"},
	},
	{
		name: "no charset, 8-bit Windows-1252 body",
		raw:  "From: a@example.com\nSubject: 8bit \xe9t\xe9\n\n\x93Hello\x94 \x80 5\n",
		want: mail.Message{From: "a@example.com", Subject: "8bit été", Text: "“Hello” € 5"},
	},
	{
		name: "base64 broken halfway keeps what decoded",
		raw: `From: a@example.com
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: BASE64

SGVsbG8g d29y
bGQ=!!!!=AAAA
`,
		want: mail.Message{From: "a@example.com", Text: "Hello world"},
	},
	{
		name: "quoted-printable with a bad escape",
		raw: `From: a@example.com
Content-Type: text/plain; charset=utf-8
Content-Transfer-Encoding: quoted-printable

caf=C3=A9 costs 5=E2=82=AC, 100=ZZ sure
`,
		want: mail.Message{From: "a@example.com", Text: "café costs 5€, 100=ZZ sure"},
	},
	{
		name: "unknown charset body",
		raw: `From: a@example.com
Content-Type: text/plain; charset=x-klingon; format=flowed

qapla` + "\xff" + `
`,
		want: mail.Message{From: "a@example.com", Text: "qapla\uFFFD"},
	},
	{
		name: "unreadable content type parameters are dropped",
		raw: `From: a@example.com
Content-Type: text/plain; charset=x-klingon; junk

qapla` + "\xff" + `
`,
		want: mail.Message{From: "a@example.com", Text: "qaplaÿ"},
	},
	{
		name: "mbox From line",
		raw: `From nobody Mon Jan  1 00:00:00 2026
Subject: from an mbox

x
`,
		want: mail.Message{Subject: "from an mbox", Text: "x"},
	},
	{
		name: "multipart without boundary",
		raw: `From: a@example.com
Content-Type: multipart/mixed

--x
Content-Type: text/plain

lost
`,
		want: mail.Message{From: "a@example.com"},
	},
	{
		name: "headers only",
		raw:  "Subject: just this\n",
		want: mail.Message{Subject: "just this"},
	},
}

func TestParse(t *testing.T) {
	for _, tt := range parseTests {
		for _, ending := range []string{"LF", "CRLF"} {
			t.Run(tt.name+"/"+ending, func(t *testing.T) {
				raw := tt.raw
				if ending == "CRLF" {
					raw = crlf(raw)
				}
				got, err := mail.Parse([]byte(raw))
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				checkMessage(t, got, tt.want)
			})
		}
	}
}

func checkMessage(t *testing.T, got, want mail.Message) {
	t.Helper()
	if got.Subject != want.Subject {
		t.Errorf("Subject: got %q, want %q", got.Subject, want.Subject)
	}
	if got.From != want.From {
		t.Errorf("From: got %q, want %q", got.From, want.From)
	}
	if !slices.Equal(got.To, want.To) {
		t.Errorf("To: got %q, want %q", got.To, want.To)
	}
	if !got.Date.Equal(want.Date) {
		t.Errorf("Date: got %v, want %v", got.Date, want.Date)
	}
	if got.Text != want.Text {
		t.Errorf("Text: got %q, want %q", got.Text, want.Text)
	}
}

func TestParseRefusesNonMessages(t *testing.T) {
	for _, raw := range []string{"", "\n", "just some text\n", " leading space: no\n", "\x00\x01\x02", "From nobody\n\nbody", "From x"} {
		if _, err := mail.Parse([]byte(raw)); !errors.Is(err, mail.ErrMalformed) {
			t.Errorf("Parse(%q): got %v, want ErrMalformed", raw, err)
		}
	}
}

// nested wraps a text/plain part in depth multipart/mixed entities.
func nested(depth int) string {
	var b strings.Builder
	b.WriteString("From: a@example.com\n")
	for i := range depth {
		fmt.Fprintf(&b, "Content-Type: multipart/mixed; boundary=b%d\n\n--b%d\n", i, i)
	}
	b.WriteString("Content-Type: text/plain\n\ndeep\n")
	for i := depth - 1; i >= 0; i-- {
		fmt.Fprintf(&b, "--b%d--\n", i)
	}
	return b.String()
}

func TestParseLimits(t *testing.T) {
	t.Run("depth", func(t *testing.T) {
		for depth, want := range map[int]string{mail.MaxDepth: "deep", mail.MaxDepth + 1: ""} {
			m, err := mail.Parse([]byte(nested(depth)))
			if err != nil || m.Text != want {
				t.Errorf("%d levels: got %q, %v; want %q", depth, m.Text, err, want)
			}
		}
	})
	t.Run("parts", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("Content-Type: multipart/mixed; boundary=p\n\n")
		for range mail.MaxParts {
			b.WriteString("--p\nContent-Type: image/png\n\nx\n")
		}
		b.WriteString("--p\nContent-Type: text/plain\n\ntoo late\n--p--\n")
		m, err := mail.Parse([]byte(b.String()))
		if err != nil || m.Text != "" {
			t.Errorf("text after %d parts: got %q, %v; want it ignored", mail.MaxParts, m.Text, err)
		}
	})
	t.Run("text", func(t *testing.T) {
		body := strings.Repeat("é", mail.MaxText) // 2 bytes each
		m, err := mail.Parse([]byte("Subject: long\n\nx" + body))
		if err != nil {
			t.Fatal(err)
		}
		if len(m.Text) > mail.MaxText || len(m.Text) < mail.MaxText-utf8.UTFMax || !utf8.ValidString(m.Text) {
			t.Errorf("text of %d bytes, valid UTF-8 %v; want at most %d, cut at a character", len(m.Text), utf8.ValidString(m.Text), mail.MaxText)
		}
	})
	t.Run("recipients", func(t *testing.T) {
		var b strings.Builder
		b.WriteString("To: ")
		for i := range mail.MaxRecipients + 10 {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "u%d@example.com", i)
		}
		b.WriteString("\nCc: late@example.com\n\nx")
		m, err := mail.Parse([]byte(b.String()))
		if err != nil || len(m.To) != mail.MaxRecipients {
			t.Errorf("got %d recipients, %v; want %d", len(m.To), err, mail.MaxRecipients)
		}
	})
}

func BenchmarkParse(b *testing.B) {
	raw := []byte(crlf(parseTests[2].raw))
	b.ReportAllocs()
	b.SetBytes(int64(len(raw)))
	for b.Loop() {
		if _, err := mail.Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}
