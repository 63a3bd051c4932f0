package api_test

import (
	"net/url"
	"slices"
	"testing"
	"time"

	"searchsvc/integrations/fakemail"
)

// TestSearchRouteLanguages: mails in German, French, Spanish, Russian and
// Greek are found through GET /v1/search by inflected forms of their
// words that none of them writes (docs/search.md#languages).
func TestSearchRouteLanguages(t *testing.T) {
	f := newSearchFixture(t)
	start := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	mails := []struct{ id, subject, body, query string }{
		{"de", "Ihre Wohnungen", "Grüße aus Köln! Die Rechnungen liegen bei, und wir haben die Häuser besichtigt. Bitte bezahlen Sie bis Freitag.",
			"rechnung haus bezahle"},
		{"fr", "Les rendez-vous de la semaine", "Bonjour, nous avons organisé les réunions avec les directeurs. Merci pour votre patience.",
			"réunion organiserons"},
		{"es", "Las facturas del mes", "Hola, te envío las facturas que pediste. Los documentos están firmados por los abogados, gracias.",
			"factura pedimos firmaba"},
		{"ru", "Счета за квартиру", "Здравствуйте! Я отправил вам счета и документы. Мы обсуждали эти вопросы с директорами в понедельник.",
			"документами директор вопрос"},
		{"el", "Τα τιμολόγια του μήνα", "Καλημέρα σας! Σας στέλνω τα τιμολόγια και τα έγγραφα. Τα συζητήσαμε με τους διευθυντές την Δευτέρα.",
			"τιμολόγιο έγγραφο διευθυντής"},
	}
	f.mail.Mu.Lock()
	for i, m := range mails {
		f.mail.Boxes["ann"] = append(f.mail.Boxes["ann"], fakemail.Msg{
			ID: "ann-" + m.id, Subject: m.subject, From: "someone@private.example", To: []string{"ann@private.example"},
			Date: start.Add(-time.Duration(i) * time.Hour), Body: m.body,
		})
	}
	f.mail.Mu.Unlock()
	f.connectManual("u1", "ann")
	f.runOnce()

	var all []string
	for _, m := range mails {
		code, body := f.search("u1", "q="+url.QueryEscape(m.query))
		ids := resultIDs(body)
		if code != 200 || body["total"] != 1.0 || len(ids) != 1 {
			t.Errorf("%s: GET /v1/search?q=%s = %d, total %v, results %v; want the %s mail alone", m.id, m.query, code, body["total"], ids, m.id)
			continue
		}
		if slices.Contains(all, ids[0]) {
			t.Errorf("%s: found %s, the mail of another language", m.id, ids[0])
		}
		all = append(all, ids[0])
	}
}
