package tlstrust

import (
	"crypto/tls"
	"testing"
)

// FuzzParse: the certificate field never panics the parser, and a pin it
// accepts is a SHA-256.
func FuzzParse(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	f.Add("sha256 Fingerprint=" + "AB:" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddee")
	f.Add("not a certificate")
	f.Fuzz(func(t *testing.T, v string) {
		tr, ok := parse(v)
		if ok && tr.roots == nil && len(tr.pin) != 32 {
			t.Fatalf("parse(%q): pin of %d bytes", v, len(tr.pin))
		}
	})
}

// TestApply: an empty field keeps the system's authorities, a pin makes
// the pin the only check, garbage is refused; TLS 1.2 at least.
func TestApply(t *testing.T) {
	cfg := &tls.Config{}
	if err := Apply(cfg, ""); err != nil || cfg.InsecureSkipVerify || cfg.RootCAs != nil || cfg.MinVersion != tls.VersionTLS12 {
		t.Errorf("empty: %v %+v", err, cfg)
	}
	cfg = &tls.Config{}
	if err := Apply(cfg, "SHA256 Fingerprint=00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF"); err != nil ||
		!cfg.InsecureSkipVerify || cfg.VerifyConnection == nil {
		t.Errorf("pin: %v", err)
	}
	if err := cfg.VerifyConnection(tls.ConnectionState{}); err != ErrPinMismatch {
		t.Errorf("no certificate against a pin: %v", err)
	}
	if err := Apply(&tls.Config{}, "garbage"); err == nil || err.Error() != "certificate field "+BadField || Valid("garbage") || Valid(" ") {
		t.Errorf("garbage: %v", err)
	}
}
