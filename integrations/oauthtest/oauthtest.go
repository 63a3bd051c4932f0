// Package oauthtest is a fake OAuth 2.0 authorization server for tests. It
// checks what real providers check: the client id at the authorization
// endpoint; at the token endpoint the client's authentication, the grant
// type, a one-time code, the redirect URI of the authorization request and
// the PKCE verifier against the S256 challenge. It answers in the
// provider's own shape, errors included.
package oauthtest

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// Options configure a fake provider.
type Options struct {
	ClientID     string
	ClientSecret string
	// Basic and Body say which client authentication the token endpoint
	// accepts: HTTP Basic, client_id and client_secret in the form, or both.
	Basic bool
	Body  bool
	// Scope is the exact scope parameter the authorization request must carry.
	Scope string
	// AuthParams are further parameters the authorization request must carry.
	AuthParams map[string]string
	// Token shapes a successful token response; nil gives RFC 6749's
	// access_token, token_type Bearer, expires_in 3599, refresh_token, scope.
	Token func(t Issued) map[string]any
	// Error shapes an error answer from an RFC 6749 error code; nil gives
	// RFC 6749's 400 (401 for invalid_client) {"error", "error_description"}.
	Error func(code, description string) (status int, body map[string]any)
}

// Issued describes the tokens the fake issues for one token request.
type Issued struct {
	GrantType    string // authorization_code or refresh_token
	AccessToken  string
	RefreshToken string // empty on a refresh: refresh tokens are not rotated
	Scope        string
}

type grant struct {
	clientID    string
	redirectURI string
	challenge   string
	scope       string
	used        bool
}

// Server is a running fake provider. Its authorization endpoint is
// URL+"/authorize" and its token endpoint URL+"/token"; tests add the
// provider's API to Mux.
type Server struct {
	*httptest.Server
	Mux  *http.ServeMux
	opts Options

	mu            sync.Mutex
	grants        map[string]*grant // by code
	refresh       map[string]string // refresh token → scope
	live          map[string]bool   // access tokens that work
	family        map[string]string // token → the refresh token of its grant
	tokenRequests int
}

// New starts a fake provider, closed by t.Cleanup.
func New(t testing.TB, opts Options) *Server {
	t.Helper()
	s := &Server{
		Mux:     http.NewServeMux(),
		opts:    opts,
		grants:  make(map[string]*grant),
		refresh: make(map[string]string),
		live:    make(map[string]bool),
		family:  make(map[string]string),
	}
	s.Mux.HandleFunc("GET /authorize", s.authorize)
	s.Mux.HandleFunc("POST /token", s.token)
	s.Server = httptest.NewServer(s.Mux)
	t.Cleanup(s.Close)
	return s
}

// Authorize plays the user's browser: it follows authURL to the fake's
// authorization page, which approves at once, and returns the code from
// the redirect back. It fails the test if the page refuses the request or
// the redirect does not carry the state.
func (s *Server) Authorize(t testing.TB, authURL string) string {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(authURL)
	if err != nil {
		t.Fatalf("authorization request: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorization page: got status %d, want %d", resp.StatusCode, http.StatusFound)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		t.Fatalf("authorization redirect: %v", err)
	}
	sent, _ := url.Parse(authURL)
	if got, want := loc.Query().Get("state"), sent.Query().Get("state"); got != want {
		t.Fatalf("redirect state: got %q, want %q", got, want)
	}
	return loc.Query().Get("code")
}

// Live reports whether an access token was issued and not revoked.
func (s *Server) Live(accessToken string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.live[accessToken]
}

// Bearer reports whether r carries a live access token as a Bearer token.
func (s *Server) Bearer(r *http.Request) bool {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && s.Live(tok)
}

// Kill revokes a token and, as real providers do, the whole grant it
// belongs to: its refresh token and every access token issued from it.
// It reports whether the token was known.
func (s *Server) Kill(token string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	root, ok := s.family[token]
	if !ok {
		return false
	}
	for tok, r := range s.family {
		if r == root {
			delete(s.live, tok)
			delete(s.refresh, tok)
			delete(s.family, tok)
		}
	}
	return true
}

// Issue makes the fake accept token as a live access token of its own
// grant, for a provider that returns more than one token (Slack's bot and
// user tokens).
func (s *Server) Issue(token string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.live[token] = true
	s.family[token] = token
}

// TokenRequests returns how many requests reached the token endpoint.
func (s *Server) TokenRequests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tokenRequests
}

func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	redirect, err := url.Parse(q.Get("redirect_uri"))
	switch {
	case q.Get("client_id") != s.opts.ClientID:
		http.Error(w, "invalid_client: unknown client_id", http.StatusBadRequest)
		return
	case err != nil || !redirect.IsAbs():
		http.Error(w, "invalid_request: redirect_uri", http.StatusBadRequest)
		return
	case q.Get("response_type") != "code":
		http.Error(w, "unsupported_response_type", http.StatusBadRequest)
		return
	case q.Get("code_challenge_method") != "S256" || len(q.Get("code_challenge")) != 43:
		http.Error(w, "invalid_request: PKCE S256 challenge required", http.StatusBadRequest)
		return
	case q.Get("scope") != s.opts.Scope:
		http.Error(w, "invalid_scope: got "+q.Get("scope"), http.StatusBadRequest)
		return
	case q.Get("state") == "":
		http.Error(w, "invalid_request: state required", http.StatusBadRequest)
		return
	}
	for k, v := range s.opts.AuthParams {
		if q.Get(k) != v {
			http.Error(w, "invalid_request: "+k+" must be "+v, http.StatusBadRequest)
			return
		}
	}
	code := rand.Text()
	s.mu.Lock()
	s.grants[code] = &grant{
		clientID:    q.Get("client_id"),
		redirectURI: q.Get("redirect_uri"),
		challenge:   q.Get("code_challenge"),
		scope:       q.Get("scope"),
	}
	s.mu.Unlock()
	back := redirect.Query()
	back.Set("code", code)
	back.Set("state", q.Get("state"))
	redirect.RawQuery = back.Encode()
	http.Redirect(w, r, redirect.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	issued, code, desc := s.issue(r)
	if code != "" {
		shape := s.opts.Error
		if shape == nil {
			shape = rfcError
		}
		status, body := shape(code, desc)
		writeJSON(w, status, body)
		return
	}
	// Shaped outside the lock, so that Token may call Issue.
	shape := s.opts.Token
	if shape == nil {
		shape = rfcToken
	}
	writeJSON(w, http.StatusOK, shape(issued))
}

// issue checks a token request and issues its tokens, or returns an RFC
// 6749 error code and description.
func (s *Server) issue(r *http.Request) (issued Issued, code, desc string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tokenRequests++
	if ct := r.Header.Get("Content-Type"); ct != "application/x-www-form-urlencoded" {
		return Issued{}, "invalid_request", "content type " + ct
	}
	if err := r.ParseForm(); err != nil {
		return Issued{}, "invalid_request", "unreadable form"
	}
	if code, desc := s.authenticate(r); code != "" {
		return Issued{}, code, desc
	}
	f := r.PostForm
	switch f.Get("grant_type") {
	case "authorization_code":
		g := s.grants[f.Get("code")]
		switch {
		case g == nil || g.used:
			return Issued{}, "invalid_grant", "code does not exist, was used or has expired"
		case g.clientID != s.opts.ClientID:
			return Issued{}, "invalid_grant", "code was issued to another client"
		case f.Get("redirect_uri") != g.redirectURI:
			return Issued{}, "invalid_grant", "redirect_uri mismatch"
		case s256(f.Get("code_verifier")) != g.challenge:
			return Issued{}, "invalid_grant", "invalid code verifier"
		}
		g.used = true
		issued = Issued{GrantType: "authorization_code", AccessToken: rand.Text(), RefreshToken: rand.Text(), Scope: g.scope}
		s.refresh[issued.RefreshToken] = g.scope
		s.family[issued.RefreshToken] = issued.RefreshToken
		s.family[issued.AccessToken] = issued.RefreshToken
	case "refresh_token":
		scope, ok := s.refresh[f.Get("refresh_token")]
		if !ok {
			return Issued{}, "invalid_grant", "token has been expired or revoked"
		}
		issued = Issued{GrantType: "refresh_token", AccessToken: rand.Text(), Scope: scope}
		s.family[issued.AccessToken] = f.Get("refresh_token")
	default:
		return Issued{}, "unsupported_grant_type", "grant_type " + f.Get("grant_type")
	}
	s.live[issued.AccessToken] = true
	return issued, "", ""
}

// authenticate checks the client's credentials at the token endpoint. It
// returns an RFC 6749 error code, or "" when the client is authenticated.
func (s *Server) authenticate(r *http.Request) (code, desc string) {
	user, pass, basic := r.BasicAuth()
	_, inBody := r.PostForm["client_secret"]
	switch {
	case basic && inBody:
		return "invalid_request", "more than one client authentication method"
	case basic && !s.opts.Basic, inBody && !s.opts.Body, !basic && !inBody:
		return "invalid_client", "unsupported or missing client authentication"
	case basic:
		id, err1 := url.QueryUnescape(user)
		secret, err2 := url.QueryUnescape(pass)
		if err1 != nil || err2 != nil || id != s.opts.ClientID || secret != s.opts.ClientSecret {
			return "invalid_client", "bad client credentials"
		}
	default:
		if r.PostForm.Get("client_id") != s.opts.ClientID || r.PostForm.Get("client_secret") != s.opts.ClientSecret {
			return "invalid_client", "bad client credentials"
		}
	}
	return "", ""
}

func rfcToken(t Issued) map[string]any {
	body := map[string]any{
		"access_token": t.AccessToken,
		"token_type":   "Bearer",
		"expires_in":   3599,
		"scope":        t.Scope,
	}
	if t.RefreshToken != "" {
		body["refresh_token"] = t.RefreshToken
	}
	return body
}

func rfcError(code, desc string) (int, map[string]any) {
	status := http.StatusBadRequest
	if code == "invalid_client" {
		status = http.StatusUnauthorized
	}
	return status, map[string]any{"error": code, "error_description": desc}
}

func s256(verifier string) string {
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
