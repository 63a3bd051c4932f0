package webdav_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"maps"
	"net/http"
	"strings"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/webdav"
)

// TestForm: the form's fields are checked before anything is sent, then
// against the server (a PROPFIND Depth 0 of the folder), each failure a
// field error a user can act on, never quoting the password.
func TestForm(t *testing.T) {
	dav := newFakeDAV(t)
	dav.put("a.txt", "alpha")
	def := webdav.Definition(webdav.Config{})
	pin := sha256.Sum256(dav.srv.Certificate().Raw)
	with := func(changes map[string]string) map[string]string {
		f := dav.fields()
		for k, v := range changes {
			if v == "-" {
				delete(f, k)
			} else {
				f[k] = v
			}
		}
		return f
	}
	cases := []struct {
		name          string
		fields        map[string]string
		client        *http.Client
		field, reason string
	}{
		{"http", with(map[string]string{webdav.FieldURL: "http://cloud.example/dav/"}), nil, webdav.FieldURL,
			"plain http is not supported: the password would cross the network unencrypted; use the server's https address"},
		{"ftp", with(map[string]string{webdav.FieldURL: "ftp://cloud.example/dav/"}), nil, webdav.FieldURL, "must start with https://"},
		{"user in url", with(map[string]string{webdav.FieldURL: "https://me:pw@cloud.example/dav/"}), nil, webdav.FieldURL,
			"must not hold a username or password; give them in their own fields"},
		{"no password", with(map[string]string{webdav.FieldPassword: "-"}), nil, webdav.FieldPassword, "is required"},
		{"bad certificate", with(map[string]string{webdav.FieldCertificate: "not a cert"}), nil, webdav.FieldCertificate,
			"must be a CA certificate in PEM (-----BEGIN CERTIFICATE-----) or the SHA-256 fingerprint of the server's certificate (64 hex digits)"},
		{"wrong password", with(map[string]string{webdav.FieldPassword: "wrong"}), &http.Client{}, webdav.FieldPassword,
			"the server refused the username or app password"},
		{"no certificate", with(map[string]string{webdav.FieldCertificate: "-"}), &http.Client{}, webdav.FieldCertificate,
			"the server's TLS certificate is signed by an unknown authority; if the server is on your own network, give its CA certificate (PEM) or the SHA-256 fingerprint of its certificate in the certificate field"},
		{"wrong pin", with(map[string]string{webdav.FieldCertificate: strings.Repeat("ab", 32)}), &http.Client{}, webdav.FieldCertificate,
			"the server's TLS certificate does not match the SHA-256 fingerprint given"},
		{"a file", with(map[string]string{webdav.FieldURL: dav.srv.URL + davRoot + "a.txt"}), &http.Client{}, webdav.FieldURL,
			"is a file, not a folder; give the address of the folder that holds it"},
		{"no folder", with(map[string]string{webdav.FieldURL: dav.srv.URL + "/elsewhere/"}), &http.Client{}, webdav.FieldURL,
			"the server has no folder at this address"},
		{"private", dav.fields(), (&netguard.Dialer{}).Client(10 * time.Second), webdav.FieldURL,
			"this host is not on the public internet; " + netguard.Advice},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dav.counts()
			_, err := def.ValidateManual(context.Background(), c.fields, c.client)
			var ve *integrations.ValidationError
			if !errors.As(err, &ve) || ve.Field != c.field || ve.Message != c.reason {
				t.Fatalf("got %v, want %s: %s", err, c.field, c.reason)
			}
			if strings.Contains(ve.Error(), "app-password") {
				t.Errorf("the error quotes the password: %v", ve)
			}
			if c.client == nil && len(dav.counts()) != 0 {
				t.Errorf("a request was sent for a form refused on its face")
			}
		})
	}
	for name, cert := range map[string]string{"CA": dav.certPEM(), "pin": hex.EncodeToString(pin[:])} {
		creds, err := def.ValidateManual(context.Background(), with(map[string]string{webdav.FieldCertificate: cert}), &http.Client{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := with(map[string]string{webdav.FieldCertificate: strings.TrimSpace(cert)})
		if !maps.Equal(creds.Fields, want) {
			t.Errorf("%s: stored fields %v, want %v", name, creds.Fields, want)
		}
	}
	name, source := def.Describe(integrations.Credentials{Fields: dav.fields()})
	if host := strings.TrimPrefix(dav.srv.URL, "https://"); name != host || source != "me on "+dav.srv.URL+davRoot {
		t.Errorf("describe: %q, %q", name, source)
	}
}
