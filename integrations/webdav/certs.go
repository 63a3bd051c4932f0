// The certificate field, read as the IMAP form reads its own (integrations/imap/certs.go):
// kept a copy here so that either package can change without the other.

package webdav

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
// SHA-256 fingerprint the account pins.
var ErrPinMismatch = errors.New("webdav: the server's certificate does not match the pinned SHA-256 fingerprint")

// errBadCertificate is the Certificate field's validation message.
const errBadCertificate = "must be a CA certificate in PEM (-----BEGIN CERTIFICATE-----) or the SHA-256 fingerprint of the server's certificate (64 hex digits)"

// trust is what the Certificate field asks of the server's certificate:
// a chain to one of its own authorities, or the exact certificate whose
// SHA-256 it pins.
type trust struct {
	roots *x509.CertPool
	pin   []byte
}

// parseTrust reads the Certificate field: PEM certificates (the server's
// CA, or a self-signed server certificate), or a SHA-256 fingerprint in
// hex, with or without ':' separators and a "sha256" prefix, as openssl
// x509 -fingerprint -sha256 prints it.
func parseTrust(v string) (trust, bool) {
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

// tlsConfig returns the TLS configuration the certificate field asks
// for: the system's authorities when it is empty, its own authorities,
// or the one certificate it pins.
func tlsConfig(certificate string) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if certificate == "" {
		return cfg, nil
	}
	t, ok := parseTrust(certificate)
	if !ok {
		return nil, errors.New("webdav: certificate field " + errBadCertificate)
	}
	if t.roots != nil {
		cfg.RootCAs = t.roots
		return cfg, nil
	}
	// A pin names the one certificate to accept: neither a chain nor the
	// host name matter then, and VerifyConnection checks the pin instead.
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
	return cfg, nil
}
