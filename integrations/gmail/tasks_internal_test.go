package gmail

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestRawMessage(t *testing.T) {
	msg := []byte("Subject: ünïcode?\r\n\r\n>>>???<<<\r\n") // encodes to - and _
	tests := []struct {
		name, json string
		want       []byte
		err        bool
	}{
		{"padded", `"` + base64.URLEncoding.EncodeToString(msg) + `"`, msg, false},
		{"unpadded", `"` + base64.RawURLEncoding.EncodeToString(msg) + `"`, msg, false},
		{"escaped", `"` + strings.ReplaceAll(base64.URLEncoding.EncodeToString(msg), "=", `\u003d`) + `"`, msg, false},
		{"null", `null`, nil, false},
		{"standard alphabet", `"` + base64.StdEncoding.EncodeToString(msg) + `"`, nil, true},
		{"not a string", `123`, nil, true},
		{"garbage", `"!!!!"`, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r rawMessage
			err := r.UnmarshalJSON([]byte(tt.json))
			if (err != nil) != tt.err || !bytes.Equal(r, tt.want) {
				t.Errorf("got %q, %v; want %q, error %v", r, err, tt.want, tt.err)
			}
		})
	}

	atLimit := base64.RawURLEncoding.EncodedLen(MaxMessageSize)
	if tooLarge(atLimit) || !tooLarge(atLimit+1) {
		t.Errorf("tooLarge(%d), tooLarge(%d): got %v, %v; want false, true", atLimit, atLimit+1, tooLarge(atLimit), tooLarge(atLimit+1))
	}
	big := append(append([]byte{'"'}, bytes.Repeat([]byte{'A'}, atLimit+4)...), '"')
	var r rawMessage
	if err := r.UnmarshalJSON(big); !errors.Is(err, ErrMessageTooLarge) || r != nil {
		t.Errorf("%d bytes: got %d, %v; want ErrMessageTooLarge", MaxMessageSize+3, len(r), err)
	}
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"18f0000000000001": true, "aZ09-_": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "a.b": false, "a/b": false, "a%2f": false, "é": false, "a b": false,
	} {
		if got := validID(id); got != want {
			t.Errorf("validID(%q) = %v, want %v", id, got, want)
		}
	}
}

func TestInternalDate(t *testing.T) {
	for in, want := range map[string]time.Time{
		"1776151800000":        time.Date(2026, 4, 14, 7, 30, 0, 0, time.UTC),
		"":                     {},
		"-5":                   {},
		"soon":                 {},
		"99999999999999999999": {},
	} {
		if got := internalDate(in); !got.Equal(want) {
			t.Errorf("internalDate(%q) = %v, want %v", in, got, want)
		}
	}
}

// FuzzRawMessage checks the raw field decoder against encoding/base64 on
// any input: it never panics and accepts exactly what base64url decodes.
func FuzzRawMessage(f *testing.F) {
	f.Add([]byte(`"U3ViamVjdDogeA=="`))
	f.Add([]byte(`"U3ViamVjdDogeA"`))
	f.Add([]byte(`"U3Vi\u0061mVjdDogeA=="`))
	f.Add([]byte(`"-_-_"`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, in []byte) {
		var r rawMessage
		err := r.UnmarshalJSON(in)
		if err != nil || len(in) < 2 || bytes.IndexByte(in, '\\') >= 0 {
			return
		}
		if string(in) == "null" {
			return
		}
		want, werr := base64.RawURLEncoding.DecodeString(strings.TrimRight(string(in[1:len(in)-1]), "="))
		if werr != nil || !bytes.Equal(r, want) {
			t.Errorf("%q: got %q, want %q (%v)", in, r, want, werr)
		}
	})
}
