package imap_test

import (
	"context"
	"crypto/tls"
	"errors"
	"strings"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/imap"
	"searchsvc/integrations/imap/imaptest"
)

// TestAuthenticatePlain: a server that disables LOGIN is logged in to
// with AUTHENTICATE PLAIN, with or without an initial response.
func TestAuthenticatePlain(t *testing.T) {
	for _, caps := range [][]string{
		{"IMAP4rev1", "LOGINDISABLED", "AUTH=PLAIN", "SASL-IR"},
		{"IMAP4rev1", "LOGINDISABLED", "AUTH=PLAIN"},
	} {
		srv := imaptest.New(t)
		srv.SetCaps(caps...)
		a, _ := imap.ParseFields(srv.Fields())
		if err := dialer(srv).Login(context.Background(), a); err != nil {
			t.Errorf("%v: %v", caps, err)
		}
		a.Password = "wrong"
		if err := dialer(srv).Login(context.Background(), a); !errors.Is(err, imap.ErrLoginRejected) {
			t.Errorf("%v, wrong password: got %v, want ErrLoginRejected", caps, err)
		}
		if n := srv.Stats().Commands["AUTHENTICATE"]; n != 2 {
			t.Errorf("%v: got %d AUTHENTICATE, want 2", caps, n)
		}
	}
}

// TestCertificateField: a server signed by its own authority is trusted
// through the certificate field, by PEM or by fingerprint; without it
// the error says unknown authority and points at the field.
func TestCertificateField(t *testing.T) {
	srv := imaptest.New(t)
	other := imaptest.New(t)
	tests := []struct {
		name    string
		cert    string
		field   string
		message string
	}{
		{"none", "", "certificate", "the server's TLS certificate is signed by an unknown authority; if the server is on your own network, " +
			"give its CA certificate (PEM) or the SHA-256 fingerprint of its certificate in the certificate field"},
		{"CA", srv.CAPEM(), "", ""},
		{"pin", srv.Fingerprint(), "", ""},
		{"pin, openssl output", "sha256 Fingerprint=" + srv.Fingerprint(), "", ""},
		{"pin, lower hex", strings.ToLower(strings.ReplaceAll(srv.Fingerprint(), ":", "")), "", ""},
		{"another CA", other.CAPEM(), "certificate", "the server's TLS certificate is signed by an unknown authority, not by the CA certificate given"},
		{"another pin", other.Fingerprint(), "certificate", "the server's TLS certificate does not match the SHA-256 fingerprint given"},
		{"garbage", "not a certificate", "certificate", "must be a CA certificate in PEM (-----BEGIN CERTIFICATE-----) or the SHA-256 fingerprint of the server's certificate (64 hex digits)"},
		{"bad PEM", "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n", "certificate", "must be a CA certificate in PEM (-----BEGIN CERTIFICATE-----) or the SHA-256 fingerprint of the server's certificate (64 hex digits)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fields := srv.Fields()
			if tt.cert != "" {
				fields["certificate"] = tt.cert
			}
			creds, err := imap.Definition().ValidateManual(context.Background(), fields, nil)
			if tt.message == "" {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				if creds.Fields["certificate"] != strings.TrimSpace(tt.cert) {
					t.Errorf("stored certificate field: got %q, want it kept", creds.Fields["certificate"])
				}
				// The stored credentials sync too.
				in, err := imap.Definition().New(integrations.Env{Credentials: creds})
				if err != nil {
					t.Fatal(err)
				}
				if ok, err := in.ValidateAuthentication(context.Background()); !ok || err != nil {
					t.Errorf("ValidateAuthentication: got %v, %v", ok, err)
				}
				return
			}
			assertValidation(t, err, tt.field, tt.message)
		})
	}
	t.Run("trusted, another host", func(t *testing.T) {
		d := imap.Dialer{TLSConfig: &tls.Config{RootCAs: srv.Pool(), ServerName: "imap.example.com"}}
		_, err := d.Definition().ValidateManual(context.Background(), srv.Fields(), nil)
		assertValidation(t, err, "host", "the server's TLS certificate is not valid for this host")
	})
}
