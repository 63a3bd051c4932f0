package imap

import "testing"

// FuzzParseTrust: the certificate field never panics the parser, and a
// pin it accepts is a SHA-256.
func FuzzParseTrust(f *testing.F) {
	f.Add("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")
	f.Add("sha256 Fingerprint=" + "AB:" + "00112233445566778899aabbccddeeff00112233445566778899aabbccddee")
	f.Add("not a certificate")
	f.Fuzz(func(t *testing.T, v string) {
		tr, ok := parseTrust(v)
		if ok && tr.roots == nil && len(tr.pin) != 32 {
			t.Fatalf("parseTrust(%q): pin of %d bytes", v, len(tr.pin))
		}
	})
}
