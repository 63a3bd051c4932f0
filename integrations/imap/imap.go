// Package imap connects a mailbox on any IMAP server with a username and
// password given in a manual form, and syncs it read-only. It speaks
// implicit TLS only, so the password is never sent before the connection
// is encrypted; a server with its own certificate authority, or a
// self-signed certificate, is trusted through the form's certificate
// field.
//
// The pieces, in the order a sync uses them: Dialer.Dial logs in and
// returns a Client; Client.List and SyncedFolders choose the folders;
// Client.Examine and Unchanged tell whether a folder changed; Client.Plan
// lists it and plans with PlanFolder (pure: deletions of expunged mail,
// re-keys after a UIDVALIDITY change, bounded download batches); and
// Client.DownloadBatch downloads a batch as items. RunTask (tasks.go)
// runs these steps as tasks of the sync task system, each batch stored
// with its task. Every server answer goes through one bounded, fuzzed
// response parser.
package imap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/tlstrust"
)

// Domain is the integration domain.
const Domain = "imap"

// DefaultPort is the IMAP-over-TLS port (RFC 8314).
const DefaultPort = 993

// maxFieldLen bounds the username and password (bytes).
const maxFieldLen = 1024

// Names of the manual form's fields, also the keys of Credentials.Fields.
const (
	FieldHost     = "host"
	FieldPort     = "port"
	FieldUsername = "username"
	FieldPassword = "password"
	FieldTLS      = "tls"
	// FieldCertificate optionally holds the server's CA certificate in
	// PEM, or the SHA-256 fingerprint of its certificate, for a server
	// whose certificate no public authority signed (one on a LAN).
	FieldCertificate = "certificate"
)

// Account is an IMAP account as the form gives it. It prints and logs
// itself without the password.
type Account struct {
	Host     string
	Port     int
	Username string
	Password string
	// Certificate is the form's certificate field: "" to trust the
	// system's authorities, else a CA certificate in PEM or a SHA-256
	// fingerprint (see FieldCertificate).
	Certificate string
}

// String describes a without its password.
func (a Account) String() string {
	return fmt.Sprintf("imap.Account{%s@%s}", a.Username, net.JoinHostPort(a.Host, strconv.Itoa(a.Port)))
}

// Format makes every fmt verb print a without its password.
func (a Account) Format(f fmt.State, _ rune) { fmt.Fprint(f, a.String()) }

// LogValue makes slog log a without its password.
func (a Account) LogValue() slog.Value {
	return slog.GroupValue(slog.String("host", a.Host), slog.Int("port", a.Port), slog.String("username", a.Username))
}

// Fields returns a as the credentials' fields.
func (a Account) Fields() map[string]string {
	f := map[string]string{
		FieldHost: a.Host, FieldPort: strconv.Itoa(a.Port),
		FieldUsername: a.Username, FieldPassword: a.Password, FieldTLS: "true",
	}
	if a.Certificate != "" {
		f[FieldCertificate] = a.Certificate
	}
	return f
}

// ParseFields reads and checks the form's fields. Errors are
// *integrations.ValidationError naming the field; plaintext IMAP (tls
// false) is refused.
func ParseFields(fields map[string]string) (Account, error) {
	invalid := func(field, msg string) (Account, error) {
		return Account{}, &integrations.ValidationError{Field: field, Message: msg}
	}
	if v := strings.TrimSpace(fields[FieldTLS]); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return invalid(FieldTLS, "must be true or false")
		}
		if !on {
			return invalid(FieldTLS, "plain IMAP is not supported: the password would cross the network unencrypted; "+
				"use the server's TLS port (usually 993)")
		}
	}
	a := Account{
		Host:        strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(fields[FieldHost]), "["), "]"),
		Port:        DefaultPort,
		Username:    fields[FieldUsername],
		Password:    fields[FieldPassword],
		Certificate: strings.TrimSpace(fields[FieldCertificate]),
	}
	if !validHost(a.Host) {
		return invalid(FieldHost, "must be a host name or an IP address")
	}
	if v := strings.TrimSpace(fields[FieldPort]); v != "" {
		port, err := strconv.Atoi(v)
		if err != nil || port < 1 || port > 65535 {
			return invalid(FieldPort, "must be a number from 1 to 65535")
		}
		a.Port = port
	}
	switch {
	case a.Username == "":
		return invalid(FieldUsername, "is required")
	case len(a.Username) > maxFieldLen || strings.ContainsAny(a.Username, "\x00\r\n"):
		return invalid(FieldUsername, "must be at most 1024 bytes on one line")
	case a.Password == "":
		return invalid(FieldPassword, "is required")
	case len(a.Password) > maxFieldLen || strings.ContainsRune(a.Password, 0):
		return invalid(FieldPassword, "must be at most 1024 bytes, without NUL")
	}
	if !tlstrust.Valid(a.Certificate) {
		return invalid(FieldCertificate, errBadCertificate)
	}
	return a, nil
}

// validHost reports whether h is an IP address or a DNS name.
func validHost(h string) bool {
	if net.ParseIP(h) != nil {
		return true
	}
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(strings.TrimSuffix(h, "."), ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// Definition returns the IMAP definition with the zero Dialer.
func Definition() integrations.Definition { return Dialer{}.Definition() }

// Definition returns the IMAP definition, logging in with d; tests give a
// Dialer that trusts their server's certificate.
func (d Dialer) Definition() integrations.Definition {
	return integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "IMAP mailbox",
			Kind:        integrations.KindEmail,
			AuthType:    integrations.AuthManual,
			Fields: []integrations.Field{
				{Name: FieldHost, Label: "Server", Type: integrations.FieldText, Required: true},
				{Name: FieldPort, Label: "Port", Type: integrations.FieldNumber, Default: strconv.Itoa(DefaultPort)},
				{Name: FieldUsername, Label: "Username", Type: integrations.FieldText, Required: true},
				{Name: FieldPassword, Label: "Password", Type: integrations.FieldPassword, Required: true, Secret: true},
				{Name: FieldTLS, Label: "TLS (implicit, as on port 993)", Type: integrations.FieldBool, Default: "true"},
				{Name: FieldCertificate, Label: "Server certificate, for a server on your own network: its CA certificate (PEM) or the SHA-256 fingerprint of its certificate (optional)", Type: integrations.FieldMultiline},
				integrations.LabelField(),
			},
			MaxConnections: MaxConnections,
		},
		Describe: describe,
		ValidateManual: func(ctx context.Context, fields map[string]string, _ *http.Client) (integrations.Credentials, error) {
			a, err := ParseFields(fields)
			if err != nil {
				return integrations.Credentials{}, err
			}
			if err := d.Login(ctx, a); err != nil {
				return integrations.Credentials{}, explain(ctx, a, err)
			}
			return integrations.Credentials{Fields: a.Fields()}, nil
		},
		New: func(env integrations.Env) (integrations.Integration, error) {
			a, err := ParseFields(env.Credentials.Fields)
			if err != nil {
				return nil, fmt.Errorf("imap: stored credentials: %w", err)
			}
			return newMailbox(d, a, env), nil
		},
	}
}

// MaxConnections is how many mailboxes one user may connect.
const MaxConnections = 10

// describe names a mailbox's record by its host, and says its source as
// the username at the server, without the password.
func describe(c integrations.Credentials) (name, source string) {
	host, user, port := c.Fields[FieldHost], c.Fields[FieldUsername], c.Fields[FieldPort]
	if port != "" && port != strconv.Itoa(DefaultPort) {
		host = net.JoinHostPort(host, port)
	}
	return host, user + " on " + host
}

// explain turns a login failure into a message for the user, naming the
// field to fix. Only a cancellation by the caller stays a plain error.
func explain(ctx context.Context, a Account, err error) error {
	if errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return err
	}
	v := &integrations.ValidationError{Field: FieldHost, Err: err}
	var (
		se         *ServerError
		dnsErr     *net.DNSError
		certErr    *tls.CertificateVerificationError
		hostErr    x509.HostnameError
		unknownErr x509.UnknownAuthorityError
		invalidErr x509.CertificateInvalidError
		opErr      *net.OpError
	)
	switch {
	case errors.Is(err, ErrLoginRejected):
		v.Field, v.Message = FieldPassword, "the server refused the username or password"
		if errors.As(err, &se) && se.Text != "" {
			v.Message += " (" + se.Text + ")"
		}
	case errors.Is(err, netguard.ErrPrivateAddress):
		v.Message = "this host is not on the public internet; " + netguard.Advice
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
	case errors.As(err, &invalidErr) && (invalidErr.Reason == x509.Expired):
		v.Message = "the server's TLS certificate is outside its dates of validity (expired, or valid from a later date)"
	case errors.As(err, &hostErr), errors.As(err, &certErr):
		v.Message = "the server's TLS certificate is not valid for this host"
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrLineTooLong):
		v.Message = "the server did not answer as an IMAP server over TLS does"
		if errors.As(err, &se) && se.Text != "" {
			v.Message += " (" + se.Status + " " + se.Text + ")"
		}
	case errors.As(err, &opErr) && opErr.Op == "dial":
		v.Message = "could not connect to " + net.JoinHostPort(a.Host, strconv.Itoa(a.Port))
	default:
		v.Message = "could not log in over TLS: the server may not offer implicit TLS on this port"
	}
	return v
}
