// Package oauth serves the two OAuth routes: GET
// /v1/user-integration/oauth/{integration}/authorize starts an authorization
// for the signed-in user and sends the browser to the provider; GET
// /v1/user-integration/oauth/{integration}/callback receives the provider's
// redirect, checks it, trades the code for tokens and stores them sealed
// as the user's integration record.
//
// An authorization in flight is kept in memory, found by its one-time
// state, and bound to the session that started it, to the integration, to
// a PKCE (S256) verifier and to the browser through the svc_oauth cookie.
// The controller calls the integration's static OAuth operations only; it
// never builds an integration instance and runs no tasks.
package oauth

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/auth"
	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/records"
	"searchsvc/integrations/textguard"
	"searchsvc/sessions"
	"searchsvc/storage/uuid"
)

// exchangeTimeout bounds the token exchange at the callback, while the
// user's browser waits for the redirect.
const exchangeTimeout = 30 * time.Second

// Config configures Handlers.
type Config struct {
	Registry *integrations.Registry
	Records  *records.Records
	Sessions *sessions.Manager
	// Getenv reads <P>_OAUTH_CLIENT_ID, <P>_OAUTH_CLIENT_SECRET and the
	// provider URL overrides.
	Getenv func(string) string
	// Client makes the requests to the providers' token endpoints. Nil
	// means a client with a 30-second timeout.
	Client *http.Client
	// RedirectBase is OAUTH_REDIRECT_BASE_URL; the callback is this plus
	// /v1/user-integration/oauth/<integration>/callback.
	RedirectBase *url.URL
	// FrontendURL is FRONTEND_URL; results go to its /integrations page.
	FrontendURL *url.URL
	// Secure is SESSION_SECURE, the svc_oauth cookie's Secure flag.
	Secure bool
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Logger receives the flow's events; nil discards them.
	Logger *slog.Logger
	// OnConnect is told about a record just connected, for example to
	// queue a first sync. It must not run tasks. May be nil.
	OnConnect func(records.Record)
}

// Handlers serves the authorize and callback routes. It is safe for
// concurrent use.
type Handlers struct {
	cfg     Config
	log     *slog.Logger
	pending *pendingSet
}

// NewHandlers returns the handlers of cfg. Without a Registry, Records,
// Sessions, RedirectBase or FrontendURL it is an error.
func NewHandlers(cfg Config) (*Handlers, error) {
	if cfg.Registry == nil || cfg.Records == nil || cfg.Sessions == nil || cfg.RedirectBase == nil || cfg.FrontendURL == nil {
		return nil, errors.New("oauth: NewHandlers needs Registry, Records, Sessions, RedirectBase and FrontendURL")
	}
	if cfg.Getenv == nil {
		cfg.Getenv = func(string) string { return "" }
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 30 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Handlers{cfg: cfg, log: cfg.Logger, pending: newPendingSet(MaxPending)}, nil
}

// Operation names of the envelope.
const (
	opAuthorize = "userIntegration.authorize"
	opCallback  = "userIntegration.callback"
)

func errIntegrationNotFound() *httpx.Error {
	return httpx.NewError(http.StatusNotFound, "integration_not_found", "integration not found")
}

// oauthDefinition returns the OAuth integration named by the path, or
// false for an unknown or manual one.
func (h *Handlers) oauthDefinition(r *http.Request) (integrations.Definition, bool) {
	def, ok := h.cfg.Registry.Get(r.PathValue("integration"))
	return def, ok && def.OAuth != nil
}

// provider builds the integration's Provider with this deployment's
// configuration and clock.
func (h *Handlers) provider(def integrations.Definition) (*oauthclient.Provider, error) {
	p, err := oauthclient.NewProvider(def, h.cfg.Getenv, h.cfg.Client)
	if err != nil {
		return nil, err
	}
	p.Now = h.cfg.Now
	return p, nil
}

// redirectURI is the callback of domain under OAUTH_REDIRECT_BASE_URL.
func (h *Handlers) redirectURI(domain string) string {
	u := *h.cfg.RedirectBase
	u.RawQuery, u.Fragment = "", ""
	return u.JoinPath("v1", "user-integration", "oauth", domain, "callback").String()
}

// Authorize serves GET /v1/user-integration/oauth/{integration}/authorize
// behind auth's Require. It answers 404 for an unknown or
// manual integration, 403 when the userId parameter is not the caller's
// id, 500 naming the variable when the client id or secret is not set,
// and 503 when too many authorizations are in flight; otherwise it keeps
// the authorization, sets svc_oauth and redirects (302) to the provider.
func (h *Handlers) Authorize() http.Handler {
	return httpx.Handle(opAuthorize, h.authorize)
}

func (h *Handlers) authorize(w http.ResponseWriter, r *http.Request) error {
	def, ok := h.oauthDefinition(r)
	if !ok {
		return errIntegrationNotFound()
	}
	domain := def.Manifest.Domain
	user, uok := auth.UserFrom(r.Context())
	sess, sok := auth.SessionFrom(r.Context())
	if !uok || !sok {
		return httpx.Internal(errors.New("oauth: authorize reached without auth's Require"))
	}
	if r.URL.Query().Get("userId") != user.ID {
		return httpx.Forbidden("forbidden", "forbidden")
	}
	p, err := h.provider(def)
	if err != nil {
		return httpx.Internal(fmt.Errorf("oauth provider %s: %w", domain, err))
	}
	state := uuid.New()
	verifier := oauth2.GenerateVerifier()
	authURL, err := p.GenerateAuthorizationURL(h.redirectURI(domain), state, verifier)
	if err != nil {
		var nc *oauthclient.NotConfiguredError
		if errors.As(err, &nc) {
			// The message names the variable to set, for the
			// administrator (openapi.json, this route's 500); the error
			// level log line is the one WriteError makes for a 5xx.
			return &httpx.Error{Status: http.StatusInternalServerError,
				Code: "integration_not_configured", Message: nc.Error(), Cause: err}
		}
		return httpx.Internal(fmt.Errorf("authorization URL of %s: %w", domain, err))
	}

	now := h.cfg.Now()
	// A browser that already holds a binding this server gave to this
	// session (another integration being connected in another tab) keeps
	// it, so that both flows can finish.
	binding := readCookie(r)
	if binding == "" || !h.pending.bound(sess.ID, hashBinding(binding), now) {
		binding = newBinding()
	}
	err = h.pending.put(&pending{
		state:     state,
		userID:    user.ID,
		sessionID: sess.ID,
		domain:    domain,
		verifier:  verifier,
		binding:   hashBinding(binding),
		expires:   now.Add(StateTTL),
	}, now)
	if err != nil {
		h.log.Warn("authorization refused: too many in flight", "user_id", user.ID, "integration", domain, "limit", MaxPending)
		return &httpx.Error{Status: http.StatusServiceUnavailable,
			Code: "too_many_authorizations", Message: "too many authorizations in progress; try again in a few minutes",
			RetryAfter: time.Minute}
	}
	setCookie(w, binding, h.cfg.Secure)
	h.log.Info("authorization started", "user_id", user.ID, "session_ref", sessions.Ref(sess.ID), "integration", domain)
	redirect(w, authURL)
	return nil
}

// Messages of the frontend's error page, worded as openapi.json gives
// them for the callback route.
const msgInvalidState = "authorization failed, invalid state token"

func msgCancelled(domain string) string { return domain + " authorization was cancelled" }
func msgFailed(domain string) string    { return "failed to complete " + domain + " authorization" }

// Callback serves GET /v1/user-integration/oauth/{integration}/callback
// without auth's Require: the browser does not send the
// SameSite=Strict session cookie on the provider's cross-site redirect.
// An unknown or manual integration is a 404; everything else is a 302 to
// the frontend's /integrations page with status=success or status=error
// and one of the messages above.
func (h *Handlers) Callback() http.Handler {
	return httpx.Handle(opCallback, h.callback)
}

func (h *Handlers) callback(w http.ResponseWriter, r *http.Request) error {
	def, ok := h.oauthDefinition(r)
	if !ok {
		return errIntegrationNotFound()
	}
	binding := readCookie(r)
	location := h.complete(r, def, binding)
	// The cookie goes once no flow of this browser needs it any more.
	if binding == "" || !h.pending.inUse(hashBinding(binding)) {
		clearCookie(w, h.cfg.Secure)
	}
	redirect(w, location)
	return nil
}

// complete runs the callback's checks and the exchange, and returns the
// frontend page to send the browser to.
func (h *Handlers) complete(r *http.Request, def integrations.Definition, binding string) string {
	domain := def.Manifest.Domain
	q := r.URL.Query()
	p, reason := h.checkState(q.Get("state"), domain, binding)
	if p == nil {
		h.log.Warn("callback refused: invalid state", "integration", domain, "reason", reason)
		return h.failure(domain, msgInvalidState)
	}
	log := h.log.With("user_id", p.userID, "integration", domain)
	if q.Has("error") {
		code := q.Get("error")
		log.Info("provider ended the authorization", "provider_error", clean(code))
		if code == "access_denied" {
			return h.failure(domain, msgCancelled(domain))
		}
		return h.failure(domain, msgFailed(domain))
	}
	code := q.Get("code")
	if code == "" {
		log.Warn("callback without a code")
		return h.failure(domain, msgFailed(domain))
	}
	creds, err := h.exchange(r.Context(), def, code, p)
	if err != nil {
		logExchange(log, err)
		return h.failure(domain, msgFailed(domain))
	}
	rec, err := h.cfg.Records.Connect(p.userID, domain, creds)
	if err != nil {
		log.Error("store integration record", "err", err)
		return h.failure(domain, msgFailed(domain))
	}
	log.Info("integration connected", "record_id", rec.ID, "auth", "oauth")
	if h.cfg.OnConnect != nil {
		h.cfg.OnConnect(rec)
	}
	return h.frontend("status=success&integration=" + escape(domain))
}

// checkState consumes the authorization of state and returns it if the
// callback may go on: the state is known and unexpired, was issued for
// domain, to the browser presenting binding, and the session that started
// it still exists. Otherwise it returns nil and the reason, for the log.
func (h *Handlers) checkState(state, domain, binding string) (*pending, string) {
	if state == "" {
		return nil, "no state"
	}
	p, ok := h.pending.take(state)
	now := h.cfg.Now()
	switch {
	case !ok:
		return nil, "unknown or already used state"
	case !now.Before(p.expires):
		return nil, "expired state"
	case p.domain != domain:
		return nil, "state issued for another integration"
	case binding == "":
		return nil, "no svc_oauth cookie"
	}
	got := hashBinding(binding)
	if subtle.ConstantTimeCompare(got[:], p.binding[:]) != 1 {
		return nil, "svc_oauth cookie does not match"
	}
	s, ok := h.cfg.Sessions.Get(p.sessionID)
	if !ok || s.UserID != p.userID || !now.Before(s.ExpiresAt) {
		return nil, "session ended"
	}
	return p, ""
}

// exchange trades the code for tokens with the authorization's redirect
// URI and verifier, and validates them into credentials.
func (h *Handlers) exchange(ctx context.Context, def integrations.Definition, code string, p *pending) (integrations.Credentials, error) {
	prov, err := h.provider(def)
	if err != nil {
		return integrations.Credentials{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, exchangeTimeout)
	defer cancel()
	raw, err := prov.ExchangeCodeForTokens(ctx, code, h.redirectURI(p.domain), p.verifier)
	if err != nil {
		return integrations.Credentials{}, err
	}
	return prov.ValidateTokens(raw)
}

// logExchange logs why the exchange or validation failed, with what the
// provider said (status, error code) and never a token, code or secret.
func logExchange(log *slog.Logger, err error) {
	var te *oauthclient.TokenError
	var it *oauthclient.InvalidTokensError
	var nc *oauthclient.NotConfiguredError
	switch {
	case errors.As(err, &te):
		// Not the description: a provider may echo the code in it.
		log.Warn("token exchange refused by the provider", "status", te.Status, "provider_error", te.Code)
	case errors.As(err, &it):
		log.Warn("token response refused; nothing stored", "field", it.Field, "reason", it.Reason)
	case errors.As(err, &nc):
		log.Error("token exchange impossible: " + nc.Error())
	default:
		// Transport errors name the token URL, never the form it carried.
		log.Warn("token exchange failed", "err", err)
	}
}

// failure is the frontend's error page with message.
func (h *Handlers) failure(domain, message string) string {
	return h.frontend("status=error&integration=" + escape(domain) + "&message=" + escape(message))
}

// frontend returns FRONTEND_URL/integrations with the query, whose
// parameters are in the documented order.
func (h *Handlers) frontend(query string) string {
	u := *h.cfg.FrontendURL
	u.Fragment = ""
	v := u.JoinPath("integrations")
	v.RawQuery = query
	return v.String()
}

// escape encodes s for a query value, spaces as %20 so that both
// URLSearchParams and decodeURIComponent read it back.
func escape(s string) string {
	return strings.ReplaceAll(url.QueryEscape(s), "+", "%20")
}

// redirect answers 302 to location, without a body.
func redirect(w http.ResponseWriter, location string) {
	w.Header().Set("Location", location)
	w.WriteHeader(http.StatusFound)
}

// clean makes a provider-sent string safe and short for a log line.
func clean(s string) string {
	s = textguard.Truncate(s, 64)
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '\uFFFD' {
			return -1
		}
		return r
	}, strings.ToValidUTF8(s, ""))
}
