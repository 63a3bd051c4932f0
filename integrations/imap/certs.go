package imap

import (
	"crypto/tls"
	"fmt"

	"searchsvc/integrations/tlstrust"
)

// ErrPinMismatch means the server's certificate is not the one whose
// SHA-256 fingerprint the account pins.
var ErrPinMismatch = tlstrust.ErrPinMismatch

// errBadCertificate is the Certificate field's validation message.
const errBadCertificate = tlstrust.BadField

// tlsConfig returns the TLS configuration for a's server: the dialer's,
// with a's host, trusting what its Certificate field asks
// (integrations/tlstrust).
func (d Dialer) tlsConfig(a Account) (*tls.Config, error) {
	cfg := &tls.Config{}
	if d.TLSConfig != nil {
		cfg = d.TLSConfig.Clone()
	}
	if cfg.ServerName == "" {
		cfg.ServerName = a.Host
	}
	if err := tlstrust.Apply(cfg, a.Certificate); err != nil {
		return nil, fmt.Errorf("imap: %w", err)
	}
	return cfg, nil
}
