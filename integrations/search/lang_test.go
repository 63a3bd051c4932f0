package search

import (
	"testing"
	"time"
)

// langMails are mails of the languages the service's users write in, each
// with a query of inflected forms of its words that none of its words
// match as written.
var langMails = []struct {
	lang         Lang
	title, text  string
	query, wrong string // wrong: a word of the text no query form reaches
}{
	{LangGerman, "Ihre Wohnungen",
		"Grüße aus Köln! Die Rechnungen liegen bei, und wir haben die Häuser besichtigt. Bitte bezahlen Sie bis Freitag.",
		"rechnung haus bezahle", "köln"},
	{LangFrench, "Les rendez-vous de la semaine",
		"Bonjour, nous avons organisé les réunions avec les directeurs. Elle est très continuellement occupée, merci pour votre patience.",
		"réunion organiserons", "bonjour"},
	{LangSpanish, "Las facturas del mes",
		"Hola, te envío las facturas que pediste. Los documentos están firmados por los abogados y nos vemos el lunes, gracias.",
		"factura pedimos firmaba", "hola"},
	{LangRussian, "Счета за квартиру",
		"Здравствуйте! Я отправил вам счета и документы. Мы обсуждали эти вопросы на встрече с директорами в понедельник.",
		"документами директор вопрос", "понедельник"},
	{LangItalian, "Le fatture del mese",
		"Ciao, ti mando le fatture che hai chiesto. I documenti sono firmati dagli avvocati e ci vediamo lunedì, grazie.",
		"fattura documento firmata", "ciao"},
	{LangDutch, "De facturen van deze maand",
		"Hallo, ik stuur je de facturen die je vroeg. De documenten zijn ondertekend door de advocaten en we zien elkaar maandag.",
		"factuur document advocaat", "hallo"},
	{LangPortuguese, "As faturas do mês",
		"Olá, envio as faturas que você pediu. Os documentos foram assinados pelos advogados e nos vemos na segunda, obrigado.",
		"fatura documento assinado advogado", "olá"},
	{LangSwedish, "Fakturorna för månaden",
		"Hej, jag skickar fakturorna som du bad om. Dokumenten är undertecknade av advokaterna och vi ses på måndag.",
		"faktura dokument advokaten", "hej"},
}

func TestDetectLangOfMails(t *testing.T) {
	for _, m := range langMails {
		d := Doc{Title: m.title, Text: m.text}
		if got := detectDoc(&d); got != m.lang {
			t.Errorf("detectDoc(%q) = %v, want %v", m.title, got, m.lang)
		}
	}
}

// TestDetectLangSentences is detection's accuracy on a handful of
// everyday sentences per language: every one must be right.
func TestDetectLangSentences(t *testing.T) {
	sentences := map[Lang][]string{
		LangEnglish: {
			"Can you send me the report by Friday? Thanks.",
			"The meeting has been moved to the large room on the second floor.",
			"I have attached the invoice for your order, let me know if it is not right.",
			"Your password was changed. If this was not you, please contact us.",
			"Lunch at noon?",
			"News.Com: Google search gets newsier. URL: http://scriptingnews.userland.com/backissues/2002/09/23",
			"Phil Wolff: Dave Winer books I'll buy. Sweet!",
		},
		LangGerman: {
			"Kannst du mir bitte den Bericht bis Freitag schicken?",
			"Das Treffen ist in den großen Raum im zweiten Stock verlegt worden.",
			"Ich habe die Rechnung für deine Bestellung angehängt, sag mir, wenn sie nicht stimmt.",
			"Wir sehen uns morgen bei der Besprechung, und vergiss die Unterlagen nicht.",
		},
		LangFrench: {
			"Peux-tu m'envoyer le rapport avant vendredi ? Merci.",
			"La réunion a été déplacée dans la grande salle au deuxième étage.",
			"Je vous ai joint la facture de votre commande, dites-moi si elle n'est pas correcte.",
			"Nous avons reçu votre message et nous vous répondrons dans les plus brefs délais.",
		},
		LangSpanish: {
			"¿Puedes enviarme el informe antes del viernes? Gracias.",
			"La reunión se ha trasladado a la sala grande del segundo piso.",
			"Te adjunto la factura de tu pedido, dime si no es correcta.",
			"Hemos recibido tu mensaje y te responderemos lo antes posible.",
		},
		LangItalian: {
			"Puoi mandarmi il rapporto entro venerdì? Grazie.",
			"La riunione è stata spostata nella sala grande al secondo piano.",
			"Ti ho allegato la fattura del tuo ordine, fammi sapere se non è corretta.",
		},
		LangDutch: {
			"Kun je me het rapport voor vrijdag sturen? Bedankt.",
			"De vergadering is verplaatst naar de grote zaal op de tweede verdieping.",
			"Ik heb de factuur van je bestelling bijgevoegd, laat het me weten als het niet klopt.",
		},
		LangPortuguese: {
			"Você pode me enviar o relatório até sexta-feira? Obrigado.",
			"A reunião foi transferida para a sala grande no segundo andar.",
			"Anexei a fatura do seu pedido, me avise se não estiver correta.",
		},
		LangSwedish: {
			"Kan du skicka rapporten till mig före fredag? Tack.",
			"Mötet har flyttats till det stora rummet på andra våningen.",
			"Jag har bifogat fakturan för din beställning, säg till om den inte stämmer.",
		},
		LangRussian: {
			"Можешь прислать мне отчёт до пятницы? Спасибо.",
			"Встреча перенесена в большой зал на втором этаже.",
		},
		LangGreek: {
			"Μπορείς να μου στείλεις την αναφορά μέχρι την Παρασκευή; Ευχαριστώ.",
			"Η συνάντηση μεταφέρθηκε στη μεγάλη αίθουσα στον δεύτερο όροφο.",
		},
	}
	for want, list := range sentences {
		for _, s := range list {
			if got := DetectLang(s); got != want {
				t.Errorf("DetectLang(%q) = %v, want %v", s, got, want)
			}
		}
	}
}

// TestSearchFindsInflectedForms: a mail in each language is found by
// inflected forms of its words, and only once its language is among the
// user's: an English-only index stems as it did before.
func TestSearchFindsInflectedForms(t *testing.T) {
	ix := openTest(t, t.TempDir())
	date := time.Date(2026, 11, 1, 9, 0, 0, 0, time.UTC)
	for i, m := range langMails {
		d := Doc{ID: newUUID(), RecordID: "rec-1", Integration: "imap", Kind: "email",
			Title: m.title, Text: m.text, Date: date.Add(time.Duration(i) * time.Hour)}
		if err := ix.Add(userA, d); err != nil {
			t.Fatal(err)
		}
		for _, q := range []string{m.query, m.wrong} {
			n, err := Parse(q)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ix.Search(userA, Request{Query: n})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) != 1 || res.Hits[0].ID != d.ID {
				t.Errorf("%v: Search(%q) found %d hits, want the %v mail", m.lang, q, len(res.Hits), m.lang)
			}
		}
	}
	// After a flush, from a segment, and with every language at once.
	if err := ix.Flush(); err != nil {
		t.Fatal(err)
	}
	for _, m := range langMails {
		n, _ := Parse(m.query)
		if res, err := ix.Search(userA, Request{Query: n}); err != nil || res.Total != 1 {
			t.Errorf("%v after a flush: Search(%q) = %d hits, %v; want 1", m.lang, m.query, res.Total, err)
		}
	}
}

func TestExpandLangs(t *testing.T) {
	n, err := Parse(`Häuser "die Rechnungen" -reports`)
	if err != nil {
		t.Fatal(err)
	}
	if got := format(expandLangs(n, 1<<LangEnglish, anyTerm)); got != format(n) {
		t.Errorf("English only: %s, want %s", got, format(n))
	}
	got := format(expandLangs(n, 1<<LangEnglish|1<<LangGerman, anyTerm))
	want := `(AND (OR hauser haus) (OR "die rechnungen" "die rechnung") -report)`
	if got != want {
		t.Errorf("English and German: %s, want %s", got, want)
	}
	// A stem the index does not hold is not looked up.
	got = format(expandLangs(n, 1<<LangEnglish|1<<LangGerman, func(t string) bool { return t != "haus" }))
	want = `(AND hauser (OR "die rechnungen" "die rechnung") -report)`
	if got != want {
		t.Errorf("without haus: %s, want %s", got, want)
	}
}

func anyTerm(string) bool { return true }
