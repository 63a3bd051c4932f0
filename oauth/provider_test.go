package oauth

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"
)

// fakeProvider is an OAuth 2.0 authorization server for tests. Like a real
// one it checks, at the authorization endpoint, the client id, response
// type, redirect URI and an S256 PKCE challenge; at the token endpoint the
// client's HTTP Basic authentication, the grant type, a one-time code, the
// redirect URI of the authorization request (exactly equal) and the PKCE
// verifier against the challenge. It remembers every secret it handed out,
// so tests can look for them where they must not be.
type fakeProvider struct {
	*httptest.Server
	clientID, clientSecret string

	mu      sync.Mutex
	grants  map[string]*fakeGrant // by code
	issued  []string              // codes, access and refresh tokens handed out
	tokenFn func(access, refresh string) map[string]any
	tokens  int // requests that reached the token endpoint
}

type fakeGrant struct {
	redirectURI string
	challenge   string
	used        bool
}

func newFakeProvider(t testing.TB, clientID, clientSecret string) *fakeProvider {
	t.Helper()
	f := &fakeProvider{clientID: clientID, clientSecret: clientSecret, grants: make(map[string]*fakeGrant)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /authorize", f.authorize)
	mux.HandleFunc("POST /token", f.token)
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// setTokens changes the shape of successful token responses.
func (f *fakeProvider) setTokens(fn func(access, refresh string) map[string]any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokenFn = fn
}

// secrets returns every code and token the provider handed out.
func (f *fakeProvider) secrets() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.issued...)
}

func (f *fakeProvider) tokenRequests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens
}

// approve plays the user approving at the provider: it follows authURL
// and returns the redirect back to the service's callback.
func (f *fakeProvider) approve(t testing.TB, authURL string) *url.URL {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("provider's authorization page: got status %d, want 302", resp.StatusCode)
	}
	u, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func (f *fakeProvider) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("client_id") != f.clientID:
		http.Error(w, "unknown client", http.StatusBadRequest)
		return
	case err != nil || !redirect.IsAbs():
		http.Error(w, "bad redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code" || q.Get("state") == "":
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		http.Error(w, "PKCE S256 required", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	f.mu.Lock()
	f.grants[code] = &fakeGrant{redirectURI: q.Get("redirect_uri"), challenge: q.Get("code_challenge")}
	f.issued = append(f.issued, code)
	f.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (f *fakeProvider) token(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens++
	if err := r.ParseForm(); err != nil {
		fakeError(w, r, http.StatusBadRequest, "invalid_request")
		return
	}
	user, pass, ok := r.BasicAuth()
	id, err1 := url.QueryUnescape(user)
	secret, err2 := url.QueryUnescape(pass)
	if !ok || err1 != nil || err2 != nil || id != f.clientID || secret != f.clientSecret || r.PostForm.Has("client_secret") {
		fakeError(w, r, http.StatusUnauthorized, "invalid_client")
		return
	}
	form := r.PostForm
	g := f.grants[form.Get("code")]
	sum := sha256.Sum256([]byte(form.Get("code_verifier")))
	switch {
	case form.Get("grant_type") != "authorization_code":
		fakeError(w, r, http.StatusBadRequest, "unsupported_grant_type")
		return
	case g == nil || g.used:
		fakeError(w, r, http.StatusBadRequest, "invalid_grant")
		return
	case form.Get("redirect_uri") != g.redirectURI:
		fakeError(w, r, http.StatusBadRequest, "invalid_grant")
		return
	case base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		fakeError(w, r, http.StatusBadRequest, "invalid_grant")
		return
	}
	g.used = true
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	f.issued = append(f.issued, access, refresh)
	body := map[string]any{"access_token": access, "refresh_token": refresh, "token_type": "Bearer", "expires_in": 3600}
	if f.tokenFn != nil {
		body = f.tokenFn(access, refresh)
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// fakeError answers an RFC 6749 error whose description echoes the code
// it was sent, as some real providers do: the service must not log it.
func fakeError(w http.ResponseWriter, r *http.Request, status int, code string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": "refused code " + r.PostForm.Get("code")})
}
