package webdav

import (
	"bytes"
	"net/url"
	"testing"
)

// FuzzParse: any answer, parsed under small limits, ends without a
// panic, keeps at most the entries asked for, each inside the folder.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/me/a%20b.txt</d:href><d:propstat><d:prop>` +
		`<d:getetag>"1"</d:getetag><d:getcontentlength>3</d:getcontentlength></d:prop></d:propstat></d:response></d:multistatus>`))
	f.Add([]byte(`<!DOCTYPE x [<!ENTITY a "aa">]><x>&a;</x>`))
	f.Add([]byte(`<d:multistatus xmlns:d="DAV:"><d:response><d:href>/dav/me/../etc/passwd</d:href></d:response>` +
		`<d:response><d:href>https://elsewhere/dav/me/x</d:href></d:response></d:multistatus>`))
	base, _ := url.Parse("https://cloud.example/dav/me/")
	d := &dav{base: base, typed: base, lim: ListLimits{MaxAnswerBytes: 4 << 10}.withDefaults()}
	f.Fuzz(func(t *testing.T, body []byte) {
		es, err := d.parse(base, bytes.NewReader(body), 5)
		if err != nil {
			return
		}
		if len(es) > 5 {
			t.Fatalf("%d entries, limit 5", len(es))
		}
		for _, e := range es {
			if _, ok := d.relOf(base, "/dav/me/"+e.rel, e.dir); !ok {
				t.Fatalf("entry %q outside the folder", e.rel)
			}
		}
	})
}
