package webdav

import (
	"crypto/tls"
	"fmt"

	"searchsvc/integrations/tlstrust"
)

// ErrPinMismatch means the server's certificate is not the one whose
// SHA-256 fingerprint the connection pins.
var ErrPinMismatch = tlstrust.ErrPinMismatch

// errBadCertificate is the certificate field's validation message.
const errBadCertificate = tlstrust.BadField

// tlsConfig returns the TLS configuration the certificate field asks for
// (integrations/tlstrust).
func tlsConfig(certificate string) (*tls.Config, error) {
	cfg := &tls.Config{}
	if err := tlstrust.Apply(cfg, certificate); err != nil {
		return nil, fmt.Errorf("webdav: %w", err)
	}
	return cfg, nil
}
