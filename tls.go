package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"sync/atomic"
)

// certReloader serves the certificate in TLS_CERT_FILE / TLS_KEY_FILE and
// loads it again on SIGHUP, so a renewed certificate (certbot, acme.sh)
// takes effect without a restart. A reload that fails keeps the current
// certificate and is logged.
type certReloader struct {
	certFile, keyFile string
	cert              atomic.Pointer[tls.Certificate]
	log               *slog.Logger
}

func newCertReloader(certFile, keyFile string, log *slog.Logger) (*certReloader, error) {
	r := &certReloader{certFile: certFile, keyFile: keyFile, log: log}
	if err := r.load(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *certReloader) load() error {
	cert, err := tls.LoadX509KeyPair(r.certFile, r.keyFile)
	if err != nil {
		return fmt.Errorf("TLS_CERT_FILE/TLS_KEY_FILE: %w", err)
	}
	r.cert.Store(&cert)
	return nil
}

// reload is called on SIGHUP.
func (r *certReloader) reload() {
	if err := r.load(); err != nil {
		r.log.Error("reload TLS certificate; keeping the current one", "err", err)
		return
	}
	r.log.Info("reloaded TLS certificate", "cert_file", r.certFile)
}

func (r *certReloader) getCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return r.cert.Load(), nil
}

// tlsConfig is the server's TLS configuration: TLS 1.2 at least, the
// certificate from the reloader.
func (r *certReloader) tlsConfig() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: r.getCertificate}
}
