// Package webdav connects a folder (a collection) on a WebDAV server (a
// Nextcloud, an ownCloud, a NAS) with a username and an app password, and
// syncs its files read-only. It speaks https only, so the password never
// crosses the network unencrypted; a server with its own certificate
// authority, or a self-signed certificate, is trusted through the form's
// certificate field, as an IMAP server is.
//
// A sync lists the collection with PROPFIND Depth: 1, one collection at a
// time (many servers refuse Depth: infinity), under bounds on the answer's
// size, its entries, the depth of the tree and the redirects followed
// (dav.go); it compares the listing with the stored items by their
// provider ids, which hold each file's ETag (or, without one, its
// modification time and length) and path, and only then downloads with
// GET the files that are new or changed (tasks.go). A file whose ETag is
// unchanged at another path was moved: its item is re-keyed without a
// download. Nothing on the server is ever written.
package webdav

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/tlstrust"
)

// Domain is the integration domain.
const Domain = "webdav"

// Names of the manual form's fields, also the keys of Credentials.Fields.
const (
	// FieldURL is the address of the collection to sync, https only.
	FieldURL      = "url"
	FieldUsername = "username"
	FieldPassword = "password"
	// FieldCertificate optionally holds the server's CA certificate in
	// PEM, or the SHA-256 fingerprint of its certificate, as for IMAP.
	FieldCertificate = "certificate"
)

// MaxConnections is how many WebDAV folders one user may connect.
const MaxConnections = 10

// maxFieldLen bounds the username and password (bytes), and maxURLLen
// the address.
const (
	maxFieldLen = 1024
	maxURLLen   = 2048
)

// DefaultMaxFileSize is the largest file downloaded for its text, in
// bytes (10 MiB, as for Dropbox); a larger one is stored by name and path
// only, without a download.
const DefaultMaxFileSize = 10 << 20

// Config is the sync's limits; zero fields take the defaults.
type Config struct {
	// MaxFileSize is the largest file downloaded (DefaultMaxFileSize).
	MaxFileSize int64
	// Extract bounds the text extraction (extract.DefaultLimits); its
	// MaxInput is raised to MaxFileSize.
	Extract extract.Limits
	// List bounds a listing (DefaultListLimits).
	List ListLimits
	// Observe, when set, is told of every answer the server gives (its
	// request's method and the status): tests count what a sync asks.
	Observe func(method string, status int)
}

func (c Config) withDefaults() Config {
	if c.MaxFileSize <= 0 {
		c.MaxFileSize = DefaultMaxFileSize
	}
	if c.Extract.MaxInput < c.MaxFileSize {
		c.Extract.MaxInput = c.MaxFileSize
	}
	c.List = c.List.withDefaults()
	return c
}

// Account is a WebDAV folder as the form gives it.
type Account struct {
	URL         *url.URL
	Username    string
	Password    string
	Certificate string
}

// Fields returns a as the credentials' fields.
func (a Account) Fields() map[string]string {
	f := map[string]string{FieldURL: a.URL.String(), FieldUsername: a.Username, FieldPassword: a.Password}
	if a.Certificate != "" {
		f[FieldCertificate] = a.Certificate
	}
	return f
}

// ParseFields reads and checks the form's fields. Errors are
// *integrations.ValidationError naming the field; an http address is
// refused.
func ParseFields(fields map[string]string) (Account, error) {
	invalid := func(field, msg string) (Account, error) {
		return Account{}, &integrations.ValidationError{Field: field, Message: msg}
	}
	raw := strings.TrimSpace(fields[FieldURL])
	if raw == "" {
		return invalid(FieldURL, "is required")
	}
	u, err := url.Parse(raw)
	switch {
	case len(raw) > maxURLLen:
		return invalid(FieldURL, "must be at most 2048 characters")
	case err != nil || !u.IsAbs() || u.Host == "" || u.Opaque != "":
		return invalid(FieldURL, "must be a full address, such as https://cloud.example.org/remote.php/dav/files/me/")
	case strings.EqualFold(u.Scheme, "http"):
		return invalid(FieldURL, "plain http is not supported: the password would cross the network unencrypted; "+
			"use the server's https address")
	case !strings.EqualFold(u.Scheme, "https"):
		return invalid(FieldURL, "must start with https://")
	case u.User != nil:
		return invalid(FieldURL, "must not hold a username or password; give them in their own fields")
	case u.RawQuery != "" || u.Fragment != "":
		return invalid(FieldURL, "must not hold a query (?) or a fragment (#)")
	}
	u.Scheme = "https"
	a := Account{URL: u, Username: fields[FieldUsername], Password: fields[FieldPassword],
		Certificate: strings.TrimSpace(fields[FieldCertificate])}
	switch {
	case a.Username == "":
		return invalid(FieldUsername, "is required")
	case len(a.Username) > maxFieldLen || strings.ContainsAny(a.Username, "\x00\r\n:"):
		return invalid(FieldUsername, "must be at most 1024 bytes on one line, without ':'")
	case a.Password == "":
		return invalid(FieldPassword, "is required")
	case len(a.Password) > maxFieldLen || strings.ContainsAny(a.Password, "\x00\r\n"):
		return invalid(FieldPassword, "must be at most 1024 bytes on one line")
	}
	if !tlstrust.Valid(a.Certificate) {
		return invalid(FieldCertificate, errBadCertificate)
	}
	return a, nil
}

// Definition returns the WebDAV definition for cfg.
func Definition(cfg Config) integrations.Definition {
	cfg = cfg.withDefaults()
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "WebDAV folder",
			Kind:        integrations.KindFiles,
			AuthType:    integrations.AuthManual,
			Fields: []integrations.Field{
				{Name: FieldURL, Label: "Folder address", Type: integrations.FieldURL, Required: true,
					Help: "The https address of the folder to search, as the server's WebDAV settings show it (Nextcloud: https://cloud.example.org/remote.php/dav/files/USERNAME/). Its sub-folders are searched too; nothing in it is ever changed."},
				{Name: FieldUsername, Label: "Username", Type: integrations.FieldText, Required: true},
				{Name: FieldPassword, Label: "App password", Type: integrations.FieldPassword, Required: true, Secret: true,
					Help: "An app password made for this service in the server's security settings, rather than your own password."},
				{Name: FieldCertificate, Label: "Server certificate, for a server on your own network: its CA certificate (PEM) or the SHA-256 fingerprint of its certificate (optional)", Type: integrations.FieldMultiline},
				integrations.LabelField(),
			},
			MaxConnections: MaxConnections,
		},
		Describe: describe,
		Sources:  func(c integrations.Credentials) []string { return []string{c.Fields[FieldURL]} },
		Details:  details,
		ValidateManual: func(ctx context.Context, fields map[string]string, client *http.Client) (integrations.Credentials, error) {
			a, err := ParseFields(fields)
			if err != nil {
				return integrations.Credentials{}, err
			}
			d, err := newDAV(a, client, cfg, nil)
			if err != nil {
				return integrations.Credentials{}, err
			}
			defer d.close()
			if err := d.check(ctx); err != nil {
				return integrations.Credentials{}, explain(ctx, a, err)
			}
			return integrations.Credentials{Fields: a.Fields()}, nil
		},
		New: func(env integrations.Env) (integrations.Integration, error) { return newConnected(env, cfg) },
	}
}

// describe names a record by its host and says its source as the
// folder's address (never the password, which the address cannot hold).
func describe(c integrations.Credentials) (name, source string) {
	u, err := url.Parse(c.Fields[FieldURL])
	if err != nil {
		return "", ""
	}
	return u.Host, c.Fields[FieldUsername] + " on " + u.String()
}

// details says of the folder how its last listing went.
func details(c integrations.Credentials, state func(string) string) []integrations.SourceDetail {
	return []integrations.SourceDetail{{Source: c.Fields[FieldURL], Status: state(stateStatus)}}
}

// explain turns a failed check of the form into a message for the user,
// naming the field to fix. Only a cancellation by the caller stays a
// plain error.
func explain(ctx context.Context, a Account, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return err
	}
	v := &integrations.ValidationError{Field: FieldURL, Err: err}
	var (
		ae         *integrations.APIError
		he         *hostileError
		dnsErr     *net.DNSError
		certErr    *tls.CertificateVerificationError
		hostErr    x509.HostnameError
		unknownErr x509.UnknownAuthorityError
		invalidErr x509.CertificateInvalidError
	)
	switch {
	case errors.Is(err, netguard.ErrPrivateAddress):
		v.Message = "this host is not on the public internet; " + netguard.Advice
	case errors.As(err, &ae) && ae.Status == http.StatusUnauthorized:
		v.Field, v.Message = FieldPassword, "the server refused the username or app password"
	case errors.As(err, &ae) && (ae.Status == http.StatusNotFound || ae.Status == http.StatusGone):
		v.Message = "the server has no folder at this address"
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		v.Message = "the server does not let this user read this folder"
	case errors.As(err, &ae) && (ae.Status == http.StatusMethodNotAllowed || ae.Status == http.StatusNotImplemented):
		v.Message = "the server does not offer WebDAV at this address"
	case errors.As(err, &ae):
		v.Message = "the server could not list the folder (it answered " + http.StatusText(ae.Status) + "); try again later"
	case errors.Is(err, errNotCollection):
		v.Message = "is a file, not a folder; give the address of the folder that holds it"
	case errors.As(err, &he):
		v.Message = "the server " + he.what
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded):
		v.Message = "the server did not answer in time"
	case errors.As(err, &dnsErr):
		v.Message = "no such host"
	case errors.Is(err, ErrPinMismatch):
		v.Field, v.Message = FieldCertificate, "the server's TLS certificate does not match the SHA-256 fingerprint given"
	case errors.As(err, &unknownErr):
		v.Field = FieldCertificate
		v.Message = "the server's TLS certificate is signed by an unknown authority; if the server is on your own network, " +
			"give its CA certificate (PEM) or the SHA-256 fingerprint of its certificate in the certificate field"
		if a.Certificate != "" {
			v.Message = "the server's TLS certificate is signed by an unknown authority, not by the CA certificate given"
		}
	case errors.As(err, &invalidErr) && invalidErr.Reason == x509.Expired:
		v.Message = "the server's TLS certificate is outside its dates of validity (expired, or valid from a later date)"
	case errors.As(err, &hostErr), errors.As(err, &certErr):
		v.Message = "the server's TLS certificate is not valid for this host"
	default:
		v.Message = "could not connect to " + a.URL.Host + " over https"
	}
	return v
}
