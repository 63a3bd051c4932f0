// Package tlstrust reads the certificate field of the forms that connect
// a server the user names (IMAP, WebDAV): empty for the system's
// authorities, the server's own CA (or self-signed certificate) in PEM,
// or the SHA-256 fingerprint of the one certificate to accept.
package tlstrust

import (
	"crypto/sha256"
	"crypto/subtle"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"strings"
)

// ErrPinMismatch means the server's certificate is not the one whose
// SHA-256 fingerprint the field pins.
var ErrPinMismatch = errors.New("the server's certificate does not match the pinned SHA-256 fingerprint")

// BadField is the field's validation message.
const BadField = "must be a CA certificate in PEM (-----BEGIN CERTIFICATE-----) or the SHA-256 fingerprint of the server's certificate (64 hex digits)"

// trust is what the field asks of the server's certificate: a chain to
// one of its own authorities, or the exact certificate whose SHA-256 it
// pins.
type trust struct {
	roots *x509.CertPool
	pin   []byte
}

// Valid reports whether v is a certificate field Apply accepts; empty is.
func Valid(v string) bool {
	if v == "" {
		return true
	}
	_, ok := parse(v)
	return ok
}

// parse reads a non-empty field: PEM certificates, or a SHA-256
// fingerprint in hex, with or without ':' separators and a "sha256"
// prefix, as openssl x509 -fingerprint -sha256 prints it.
func parse(v string) (trust, bool) {
	v = strings.TrimSpace(v)
	if strings.HasPrefix(v, "-----BEGIN") {
		pool := x509.NewCertPool()
		n := 0
		rest := []byte(v)
		for {
			var block *pem.Block
			block, rest = pem.Decode(rest)
			if block == nil {
				break
			}
			if block.Type != "CERTIFICATE" {
				return trust{}, false
			}
			cert, err := x509.ParseCertificate(block.Bytes)
			if err != nil {
				return trust{}, false
			}
			pool.AddCert(cert)
			n++
		}
		if n == 0 || strings.TrimSpace(string(rest)) != "" {
			return trust{}, false
		}
		return trust{roots: pool}, true
	}
	s := strings.ToLower(v)
	if i := strings.LastIndexAny(s, "= "); i >= 0 && strings.Contains(s[:i+1], "sha256") {
		s = s[i+1:] // "SHA256 Fingerprint=AB:CD…"
	}
	s = strings.TrimPrefix(s, "sha256:")
	s = strings.NewReplacer(":", "", " ", "").Replace(s)
	pin, err := hex.DecodeString(s)
	if err != nil || len(pin) != sha256.Size {
		return trust{}, false
	}
	return trust{pin: pin}, true
}

// Apply makes cfg trust what the field asks, at TLS 1.2 or later: the
// system's authorities for an empty field, the field's own for
// certificates, or only the pinned certificate (its chain and host name
// then do not matter; VerifyConnection checks the pin, in constant time).
// An unreadable field is an error saying what the field must be.
func Apply(cfg *tls.Config, field string) error {
	cfg.MinVersion = max(cfg.MinVersion, tls.VersionTLS12)
	if field == "" {
		return nil
	}
	t, ok := parse(field)
	if !ok {
		return errors.New("certificate field " + BadField)
	}
	if t.roots != nil {
		cfg.RootCAs = t.roots
		return nil
	}
	cfg.InsecureSkipVerify = true
	cfg.VerifyConnection = func(cs tls.ConnectionState) error {
		if len(cs.PeerCertificates) == 0 {
			return ErrPinMismatch
		}
		sum := sha256.Sum256(cs.PeerCertificates[0].Raw)
		if subtle.ConstantTimeCompare(sum[:], t.pin) != 1 {
			return ErrPinMismatch
		}
		return nil
	}
	return nil
}
