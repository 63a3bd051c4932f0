package sessions

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"searchsvc/storage/uuid"
)

func TestSetCookie(t *testing.T) {
	for _, secure := range []bool{true, false} {
		e := newEnv(t, Config{Secure: secure})
		s := e.create("u")
		w := httptest.NewRecorder()
		e.m.SetCookie(w, s)

		headers := w.Result().Header.Values("Set-Cookie")
		if len(headers) != 1 {
			t.Fatalf("Set-Cookie headers %q, want one", headers)
		}
		want := "svc_session=" + s.ID + "; Path=/; Max-Age=604800; HttpOnly; Secure; SameSite=Strict"
		if !secure {
			want = strings.Replace(want, "; Secure", "", 1)
		}
		if headers[0] != want {
			t.Errorf("Secure=%v: Set-Cookie\n%q, want\n%q", secure, headers[0], want)
		}

		c, err := http.ParseSetCookie(headers[0])
		if err != nil {
			t.Fatalf("ParseSetCookie: %v", err)
		}
		if c.Name != CookieName || c.Value != s.ID || c.Path != "/" || c.Domain != "" ||
			c.MaxAge != 604800 || !c.HttpOnly || c.Secure != secure ||
			c.SameSite != http.SameSiteStrictMode || !c.Expires.IsZero() {
			t.Errorf("parsed cookie %+v, want the attributes SetCookie documents", c)
		}
	}
}

func TestSetCookieMaxAge(t *testing.T) {
	e := newEnv(t, Config{MaxAge: 36 * time.Hour, Secure: true})
	w := httptest.NewRecorder()
	e.m.SetCookie(w, e.create("u"))
	c, err := http.ParseSetCookie(w.Header().Get("Set-Cookie"))
	if err != nil || c.MaxAge != 129600 {
		t.Errorf("Max-Age %d, %v; want 129600 (SESSION_MAX_AGE)", c.MaxAge, err)
	}
}

func TestClearCookie(t *testing.T) {
	for _, secure := range []bool{true, false} {
		e := newEnv(t, Config{Secure: secure})
		w := httptest.NewRecorder()
		e.m.ClearCookie(w)
		got := w.Header().Values("Set-Cookie")
		want := "svc_session=; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=0; HttpOnly; Secure; SameSite=Strict"
		if !secure {
			want = strings.Replace(want, "; Secure", "", 1)
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("Secure=%v: Set-Cookie %q, want\n%q", secure, got, want)
		}
	}
}

func TestReadCookie(t *testing.T) {
	a, b := uuid.New(), uuid.New()
	tests := []struct {
		name    string
		headers []string // Cookie header lines; nil: none
		want    string
		wantErr error
	}{
		{"no header", nil, "", ErrNoCookie},
		{"empty header", []string{""}, "", ErrNoCookie},
		{"other cookies", []string{"theme=dark; lang=en"}, "", ErrNoCookie},
		{"empty value", []string{"svc_session="}, "", ErrNoCookie},
		{"empty quoted value", []string{`svc_session=""`}, "", ErrNoCookie},
		{"name only", []string{"svc_session"}, "", ErrNoCookie},
		{"one cookie", []string{"svc_session=" + a}, a, nil},
		{"among others", []string{"theme=dark; svc_session=" + a + "; lang=en"}, a, nil},
		{"spaces and tabs", []string{" \t theme=dark ;\tsvc_session=" + a + " \t; x=y"}, a, nil},
		{"space before =", []string{"svc_session =" + a}, a, nil},
		{"quoted", []string{`svc_session="` + a + `"`}, a, nil},
		{"first of two", []string{"svc_session=" + a + "; svc_session=" + b}, a, nil},
		{"first valid of several", []string{"svc_session=junk; svc_session=; svc_session=" + b}, b, nil},
		{"second header line", []string{"theme=dark", "svc_session=" + b}, b, nil},
		{"upper case", []string{"svc_session=" + strings.ToUpper(a)}, "", ErrInvalid},
		{"garbage", []string{"svc_session=hello"}, "", ErrInvalid},
		{"too long", []string{"svc_session=" + a + "0"}, "", ErrInvalid},
		{"too short", []string{"svc_session=" + a[:35]}, "", ErrInvalid},
		{"braces", []string{"svc_session={" + a + "}"}, "", ErrInvalid},
		{"no dashes", []string{"svc_session=" + strings.ReplaceAll(a, "-", "") + "abcd"}, "", ErrInvalid},
		{"space inside value", []string{"svc_session= " + a}, "", ErrInvalid},
		{"half-quoted", []string{`svc_session="` + a}, "", ErrInvalid},
		{"other name", []string{"svc_session2=" + a + "; SVC_SESSION=" + b}, "", ErrNoCookie},
		{"name prefix", []string{"xsvc_session=" + a}, "", ErrNoCookie},
		{"value has =", []string{"svc_session=" + a + "=x"}, "", ErrInvalid},
		{"NUL and controls", []string{"svc_session=\x00\x01\x7f"}, "", ErrInvalid},
		{"non-ASCII", []string{"svc_session=å" + a[2:]}, "", ErrInvalid},
		{"only separators", []string{";;;; ; ;"}, "", ErrNoCookie},
		{"many cookies", []string{strings.Repeat("x=y; ", 10000) + "svc_session=" + a}, a, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			for _, h := range tt.headers {
				r.Header.Add("Cookie", h)
			}
			got, err := ReadCookie(r)
			if got != tt.want || !errors.Is(err, tt.wantErr) {
				t.Errorf("ReadCookie = %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestReadCookieNilHeader(t *testing.T) {
	if _, err := ReadCookie(&http.Request{}); !errors.Is(err, ErrNoCookie) {
		t.Errorf("ReadCookie with a nil header = %v, want ErrNoCookie", err)
	}
}

func TestReadCookieRoundTrip(t *testing.T) {
	e := newEnv(t, Config{Secure: true})
	s := e.create("u")
	w := httptest.NewRecorder()
	e.m.SetCookie(w, s)
	r := httptest.NewRequest("GET", "/", nil)
	for _, c := range w.Result().Cookies() {
		r.AddCookie(c)
	}
	got, err := ReadCookie(r)
	if err != nil || got != s.ID {
		t.Fatalf("ReadCookie = %q, %v; want the id just set", got, err)
	}
	if _, _, err := e.m.Validate(got, homeIP); err != nil {
		t.Errorf("Validate(cookie) = %v", err)
	}
}

func TestReadCookieAllocs(t *testing.T) {
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Cookie", "theme=dark; svc_session="+uuid.New()+"; lang=en")
	if n := testing.AllocsPerRun(100, func() { ReadCookie(r) }); n != 0 {
		t.Errorf("ReadCookie allocates %v times, want 0", n)
	}
}

// FuzzReadCookie feeds arbitrary Cookie headers (lines split at '\n'):
// ReadCookie never panics, returns either a canonical UUID or one of its
// two errors, and agrees with net/http's own cookie parser on which
// svc_session cookie holds the session id.
func FuzzReadCookie(f *testing.F) {
	a := "0b0c9d3e-8d51-4f2a-9c1e-3f6a2b7d4e10"
	for _, s := range []string{
		"", "svc_session=" + a, "x=1; svc_session=" + a, `svc_session="` + a + `"`,
		"svc_session=; svc_session=" + a, "svc_session=bad\nsvc_session=" + a,
		"svc_session", ";;=;=", "svc_session=\"", "svc_session =\t" + a, "\xff\xfe;svc_session=" + a,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		r := &http.Request{Header: http.Header{"Cookie": strings.Split(header, "\n")}}
		got, err := ReadCookie(r)
		switch {
		case err == nil:
			if !uuid.Valid(got) {
				t.Fatalf("ReadCookie(%q) = %q, not a canonical UUID", header, got)
			}
		case errors.Is(err, ErrNoCookie), errors.Is(err, ErrInvalid):
			if got != "" {
				t.Fatalf("ReadCookie(%q) = %q with error %v", header, got, err)
			}
		default:
			t.Fatalf("ReadCookie(%q): unexpected error %v", header, err)
		}

		// net/http gives up on headers with more than 3000 cookies.
		if strings.Count(header, ";")+strings.Count(header, "\n") >= 3000 {
			return
		}
		want := ""
		for _, c := range r.CookiesNamed(CookieName) {
			if uuid.Valid(c.Value) {
				want = c.Value
				break
			}
		}
		if got != want {
			t.Fatalf("ReadCookie(%q) = %q, net/http finds %q", header, got, want)
		}
	})
}
