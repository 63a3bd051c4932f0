package totp

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"hash"
	"strings"
	"testing"
	"time"
)

// The test vectors of RFC 6238, appendix B: 8-digit codes at six times
// for SHA-1, SHA-256 and SHA-512, each with the RFC's ASCII seed.
func TestRFC6238Vectors(t *testing.T) {
	seeds := map[string][]byte{
		"SHA1":   []byte("12345678901234567890"),
		"SHA256": []byte("12345678901234567890123456789012"),
		"SHA512": []byte("1234567890123456789012345678901234567890123456789012345678901234"),
	}
	hashes := map[string]func() hash.Hash{"SHA1": sha1.New, "SHA256": sha256.New, "SHA512": sha512.New}
	for _, tc := range []struct {
		unix int64
		alg  string
		want string
	}{
		{59, "SHA1", "94287082"}, {59, "SHA256", "46119246"}, {59, "SHA512", "90693936"},
		{1111111109, "SHA1", "07081804"}, {1111111109, "SHA256", "68084774"}, {1111111109, "SHA512", "25091201"},
		{1111111111, "SHA1", "14050471"}, {1111111111, "SHA256", "67062674"}, {1111111111, "SHA512", "99943326"},
		{1234567890, "SHA1", "89005924"}, {1234567890, "SHA256", "91819424"}, {1234567890, "SHA512", "93441116"},
		{2000000000, "SHA1", "69279037"}, {2000000000, "SHA256", "90698825"}, {2000000000, "SHA512", "38618901"},
		{20000000000, "SHA1", "65353130"}, {20000000000, "SHA256", "77737706"}, {20000000000, "SHA512", "47863826"},
	} {
		step := Step(time.Unix(tc.unix, 0))
		if got := HOTP(hashes[tc.alg], seeds[tc.alg], step, 8); got != tc.want {
			t.Errorf("%s at %d: got %s, want %s", tc.alg, tc.unix, got, tc.want)
		}
	}
}

// The service's 6-digit code is the last six digits of the RFC's SHA-1
// vector (truncation keeps the low digits).
func TestCodeSixDigits(t *testing.T) {
	secret := []byte("12345678901234567890")
	if got, want := Code(secret, Step(time.Unix(1111111109, 0))), "081804"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
}

func TestVerify(t *testing.T) {
	secret := []byte("12345678901234567890")
	now := time.Unix(1111111109, 0)
	cur := Step(now)
	for _, tc := range []struct {
		name     string
		code     string
		lastUsed int64
		step     int64
		ok       bool
	}{
		{"current period", Code(secret, cur), 0, cur, true},
		{"one period late", Code(secret, cur-1), 0, cur - 1, true},
		{"one period early", Code(secret, cur+1), 0, cur + 1, true},
		{"two periods late", Code(secret, cur-2), 0, 0, false},
		{"two periods early", Code(secret, cur+2), 0, 0, false},
		{"used already", Code(secret, cur), cur, 0, false},
		{"an earlier period's code after a later one was used", Code(secret, cur-1), cur, 0, false},
		{"a later code after an earlier was used", Code(secret, cur+1), cur, cur + 1, true},
		{"spaces around it", " " + Code(secret, cur) + "\n", 0, cur, true},
		{"too short", Code(secret, cur)[:5], 0, 0, false},
		{"too long", Code(secret, cur) + "0", 0, 0, false},
		{"empty", "", 0, 0, false},
		{"wrong", wrong(Code(secret, cur)), 0, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			step, ok := Verify(secret, tc.code, now, tc.lastUsed)
			if step != tc.step || ok != tc.ok {
				t.Fatalf("got %d, %v; want %d, %v", step, ok, tc.step, tc.ok)
			}
		})
	}
}

// wrong changes the code's last digit.
func wrong(code string) string {
	b := []byte(code)
	b[len(b)-1] = '0' + (b[len(b)-1]-'0'+1)%10
	return string(b)
}

func TestSecretAndURI(t *testing.T) {
	a, b := NewSecret(), NewSecret()
	if len(a) != SecretSize || string(a) == string(b) {
		t.Fatalf("secrets %x and %x: want two different %d-byte secrets", a, b, SecretSize)
	}
	secret := []byte("12345678901234567890")
	got := URI("searchsvc", "ada+x@example.org", secret)
	want := "otpauth://totp/searchsvc:ada+x@example.org?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=searchsvc&algorithm=SHA1&digits=6&period=30"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	if s := URI("searchsvc", "a b/c?d", secret); !strings.HasPrefix(s, "otpauth://totp/searchsvc:a%20b%2Fc%3Fd?secret=") {
		t.Fatalf("account not escaped: %s", s)
	}
}
