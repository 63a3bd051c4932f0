package gmail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
)

// maxErrorBody bounds what is read of an error answer, for its reason.
const maxErrorBody = 64 << 10

// ErrBadResponse is wrapped by the errors of an API answer that is not
// what Gmail sends: malformed JSON, a missing field, a different message.
var ErrBadResponse = errors.New("gmail: malformed API response")

// errTooLarge is returned by get for an answer larger than its limit.
var errTooLarge = errors.New("gmail: API response too large")

// get calls the Gmail API at path with query and the current access token,
// refreshed first if it is about to expire, and returns the body of a 2xx
// answer of at most limit bytes. Any other answer gives an
// *integrations.APIError; neither it nor any other error carries the
// token or the body.
func (m *mailbox) get(ctx context.Context, path string, query url.Values, limit int64) ([]byte, error) {
	creds, err := m.Tokens.Credentials(ctx)
	if err != nil {
		return nil, err
	}
	u := m.API + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+creds.AccessToken)
	req.Header.Set("Accept", "application/json")
	resp, err := m.Client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, m.apiError(resp)
	}
	if resp.ContentLength > limit {
		return nil, errTooLarge // said up front: not worth downloading
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(body)) > limit {
		return nil, errTooLarge
	}
	return body, nil
}

// apiError reads Google's error answer,
// {"error":{"code","message","status","errors":[{"reason"}]}}, into an
// APIError whose code is the first reason ("rateLimitExceeded",
// "authError"), else the status ("UNAUTHENTICATED"). The message is not
// kept: Google may echo the request in it.
func (m *mailbox) apiError(resp *http.Response) *integrations.APIError {
	body, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	var e struct {
		Error struct {
			Status string `json:"status"`
			Errors []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	var code string
	if json.Unmarshal(body, &e) == nil {
		if len(e.Error.Errors) > 0 {
			code = e.Error.Errors[0].Reason
		}
		if code == "" {
			code = e.Error.Status
		}
	}
	if !textguard.Word(code) {
		code = ""
	}
	return integrations.NewAPIError(resp, code, m.now())
}

// badResponse wraps err, a decoding failure, in ErrBadResponse.
func badResponse(err error) error {
	return fmt.Errorf("%w: %w", ErrBadResponse, err)
}
