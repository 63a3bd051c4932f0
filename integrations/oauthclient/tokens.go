package oauthclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
)

// maxTokenResponse bounds what is read from a token endpoint (bytes).
const maxTokenResponse = 1 << 20

// MaxExpiresIn is the longest access token lifetime ValidateTokens accepts.
// Real providers issue hours (Google 1 h, Dropbox 4 h, Slack 12 h); more
// than a year is a broken or hostile response.
const MaxExpiresIn = 366 * 24 * time.Hour

// tokenRequest posts form to the token endpoint, authenticating the client
// as the provider wants, and returns the decoded response. Any answer that
// is not a successful token response is a *TokenError.
func (p *Provider) tokenRequest(ctx context.Context, form url.Values) (map[string]any, error) {
	inParams := p.spec.AuthStyle == oauth2.AuthStyleInParams
	if inParams {
		form.Set("client_id", p.clientID)
		form.Set("client_secret", p.clientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.tokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if !inParams {
		// RFC 6749 2.3.1: both parts are form-encoded before Basic encoding.
		req.SetBasicAuth(url.QueryEscape(p.clientID), url.QueryEscape(p.clientSecret))
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := readLimited(resp.Body, maxTokenResponse)
	if err != nil {
		return nil, fmt.Errorf("read token response: %w", err)
	}
	raw, perr := decodeTokenBody(resp.Header.Get("Content-Type"), body)
	code, desc := providerError(raw)
	if perr == nil && code == "" && resp.StatusCode/100 == 2 && raw["ok"] != false {
		return raw, nil
	}
	if perr != nil && desc == "" {
		desc = "unreadable token response"
	}
	return nil, &TokenError{Status: resp.StatusCode, Code: code, Description: desc,
		RetryAfter: integrations.RetryAfter(resp.Header.Get("Retry-After"), p.now())}
}

// decodeTokenBody decodes a token endpoint's answer: a JSON object, or the
// form encoding some providers still send.
func decodeTokenBody(contentType string, body []byte) (map[string]any, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/x-www-form-urlencoded" || mt == "text/plain" {
		vals, err := url.ParseQuery(string(body))
		if err != nil {
			return nil, err
		}
		raw := make(map[string]any, len(vals))
		for k := range vals {
			raw[k] = vals.Get(k)
		}
		return raw, nil
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw map[string]any
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	if raw == nil {
		return nil, errors.New("token response is null")
	}
	return raw, nil
}

// providerError returns the error code and description of a decoded error
// response: RFC 6749's {"error": "...", "error_description": "..."},
// Slack's {"ok": false, "error": "..."} or Dropbox's {"error": {".tag": ...}}.
func providerError(raw map[string]any) (code, desc string) {
	switch v := raw["error"].(type) {
	case string:
		code = v
	case map[string]any:
		code, _ = v[".tag"].(string)
	}
	desc, _ = raw["error_description"].(string)
	return strings.ToValidUTF8(textguard.Truncate(code, 64), ""), strings.ToValidUTF8(textguard.Truncate(desc, 256), "")
}

// ParseTokenResponse is the RFC 6749 (section 5.1) token response parser:
// access_token and token_type "bearer" (any case) are required;
// refresh_token, expires_in and scope are optional. It does not fill the
// client id and secret.
func ParseTokenResponse(raw map[string]any, now time.Time) (integrations.Credentials, error) {
	access, err := StringField(raw, "access_token", true)
	if err != nil {
		return integrations.Credentials{}, err
	}
	tokenType, err := StringField(raw, "token_type", true)
	if err != nil {
		return integrations.Credentials{}, err
	}
	if !strings.EqualFold(tokenType, "bearer") {
		return integrations.Credentials{}, &InvalidTokensError{Field: "token_type", Reason: fmt.Sprintf("is %q, want bearer", strings.ToValidUTF8(textguard.Truncate(tokenType, 32), ""))}
	}
	refresh, err := StringField(raw, "refresh_token", false)
	if err != nil {
		return integrations.Credentials{}, err
	}
	scope, err := StringField(raw, "scope", false)
	if err != nil {
		return integrations.Credentials{}, err
	}
	expiresAt, err := ExpiresAt(raw["expires_in"], now)
	if err != nil {
		return integrations.Credentials{}, err
	}
	return integrations.Credentials{
		AccessToken:  access,
		RefreshToken: refresh,
		ExpiresAt:    expiresAt,
		TokenType:    tokenType,
		Scope:        scope,
	}, nil
}

// StringField returns raw[key] as a string. An absent or empty value is an
// *InvalidTokensError when required; a value that is not a string always is.
func StringField(raw map[string]any, key string, required bool) (string, error) {
	v, ok := raw[key]
	if !ok || v == nil {
		if required {
			return "", &InvalidTokensError{Field: key, Reason: "missing"}
		}
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", &InvalidTokensError{Field: key, Reason: "is not a string"}
	}
	if s == "" && required {
		return "", &InvalidTokensError{Field: key, Reason: "missing"}
	}
	return s, nil
}

// ExpiresAt turns an expires_in value (seconds, as a JSON number, a Go
// integer or a decimal string) into an absolute time after now. A nil value
// means the token does not expire and gives the zero time. A value that is
// not a whole number of seconds between 1 and MaxExpiresIn is an
// *InvalidTokensError.
func ExpiresAt(v any, now time.Time) (time.Time, error) {
	invalid := func(reason string) (time.Time, error) {
		return time.Time{}, &InvalidTokensError{Field: "expires_in", Reason: reason}
	}
	var secs float64
	switch v := v.(type) {
	case nil:
		return time.Time{}, nil
	case json.Number:
		f, err := v.Float64()
		if err != nil {
			return invalid("is not a number")
		}
		secs = f
	case float64:
		secs = v
	case int:
		secs = float64(v)
	case int64:
		secs = float64(v)
	case string:
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil {
			return invalid("is not a number")
		}
		secs = float64(n)
	default:
		return invalid("is not a number")
	}
	switch {
	case math.IsNaN(secs) || secs != math.Trunc(secs):
		return invalid("is not a whole number of seconds")
	case secs <= 0:
		return invalid("is not positive")
	case secs > MaxExpiresIn.Seconds():
		return invalid("is implausibly long")
	}
	return now.Add(time.Duration(secs) * time.Second), nil
}

// readLimited reads r to its end, failing if it holds more than limit bytes.
func readLimited(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("response larger than %d bytes", limit)
	}
	return b, nil
}

// ReadError reads a provider's error answer, bounded, into a *TokenError
// carrying the status and the provider's error code. It does not close the
// body.
func ReadError(resp *http.Response) *TokenError {
	body, _ := readLimited(resp.Body, maxTokenResponse)
	raw, _ := decodeTokenBody(resp.Header.Get("Content-Type"), body)
	code, desc := providerError(raw)
	return &TokenError{Status: resp.StatusCode, Code: code, Description: desc,
		RetryAfter: integrations.RetryAfter(resp.Header.Get("Retry-After"), time.Now())}
}
