package main

import (
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// davServer is a WebDAV server over TLS holding /dav/notes.txt, for
// user "me" with the app password "app-password".
func davServer(t *testing.T) (*httptest.Server, string) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != "me" || p != "app-password" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		switch {
		case r.Method == "PROPFIND" && r.URL.Path == "/dav/":
			w.WriteHeader(http.StatusMultiStatus)
			fmt.Fprint(w, `<?xml version="1.0"?><d:multistatus xmlns:d="DAV:">`+
				`<d:response><d:href>/dav/</d:href><d:propstat><d:prop><d:resourcetype><d:collection/></d:resourcetype></d:prop></d:propstat></d:response>`)
			if r.Header.Get("Depth") == "1" {
				fmt.Fprint(w, `<d:response><d:href>/dav/notes.txt</d:href><d:propstat><d:prop><d:resourcetype/>`+
					`<d:getetag>"n1"</d:getetag><d:getcontentlength>27</d:getcontentlength>`+
					`<d:getlastmodified>Tue, 03 Mar 2026 10:00:00 GMT</d:getlastmodified></d:prop></d:propstat></d:response>`)
			}
			fmt.Fprint(w, `</d:multistatus>`)
		case r.Method == http.MethodGet && r.URL.Path == "/dav/notes.txt":
			fmt.Fprint(w, "the marmalade recipe, noted")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
}

// TestWebDAVConnections: a user connects the same WebDAV server twice,
// each with its label; each record says its source without the
// password; the file's words are found by search; an http address and a
// loopback one (without ALLOW_PRIVATE_TARGETS) are refused under the url
// field.
func TestWebDAVConnections(t *testing.T) {
	dav, ca := davServer(t)
	env := testEnv(t.TempDir())
	env["ALLOW_PRIVATE_TARGETS"] = "true"
	srv := startRun(t, env)
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "a@example.org", "password": "a long enough password", "name": "A"})
	fields := func(label string) map[string]any {
		return map[string]any{"fields": map[string]string{"url": dav.URL + "/dav/", "username": "me", "password": "app-password",
			"certificate": ca, "label": label}}
	}
	var ids []string
	for _, label := range []string{"Home NAS", "Work cloud"} {
		status, body, _ := c.do("POST", "/v1/user-integrations/webdav/credentials", fields(label))
		if status != 201 {
			t.Fatalf("connect %s: %d %v", label, status, body)
		}
		ids = append(ids, body["result"].(map[string]any)["id"].(string))
	}
	status, body, _ := c.do("GET", "/v1/user-integrations/"+ids[1], nil)
	rec, _ := body["result"].(map[string]any)
	if want := "me on " + dav.URL + "/dav/"; status != 200 || rec["label"] != "Work cloud" || rec["source"] != want {
		t.Errorf("record: got %d label %v source %v, want Work cloud, %s", status, rec["label"], rec["source"], want)
	}
	if strings.Contains(fmt.Sprint(body), "app-password") {
		t.Errorf("the record's view holds the password")
	}
	waitItems(t, c, 2)
	waitFor(t, "the file found", func() bool { got, _ := searchIDs(t, c, "q=marmalade"); return len(got) == 2 })

	status, body, _ = c.do("POST", "/v1/user-integrations/webdav/credentials",
		map[string]any{"fields": map[string]string{"url": "http://cloud.example.org/dav/", "username": "me", "password": "p"}})
	want := `[{"field":"fields.url","message":"plain http is not supported: the password would cross the network unencrypted; use the server's https address"}]`
	if e, _ := body["error"].(map[string]any); status != 400 || jsonString(e["details"]) != want {
		t.Errorf("http: got %d %v, want 400 with %s", status, body, want)
	}
}

// TestWebDAVPrivateRefusal: without ALLOW_PRIVATE_TARGETS a WebDAV
// server on loopback is refused under the url field with the sentence
// naming the setting, and is never reached.
func TestWebDAVPrivateRefusal(t *testing.T) {
	dav, ca := davServer(t)
	srv := startRun(t, testEnv(t.TempDir()))
	c := newClient(t, srv.URL)
	c.do("POST", "/v1/auth/register", map[string]string{"email": "a@example.org", "password": "a long enough password", "name": "A"})
	status, body, _ := c.do("POST", "/v1/user-integrations/webdav/credentials", map[string]any{"fields": map[string]string{
		"url": dav.URL + "/dav/", "username": "me", "password": "app-password", "certificate": ca}})
	want := `[{"field":"fields.url","message":"this host is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"}]`
	if e, _ := body["error"].(map[string]any); status != 400 || jsonString(e["details"]) != want {
		t.Errorf("got %d %v, want 400 with %s", status, body, want)
	}
}
