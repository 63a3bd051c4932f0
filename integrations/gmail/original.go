package gmail

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"

	"searchsvc/integrations"
)

// errOriginalTooLarge fails a fetch of a message over MaxMessageSize,
// which the sync keeps as a placeholder.
var errOriginalTooLarge = &integrations.ExplainedError{
	Message: "the message is larger than 25 MiB, which this server does not download",
	Err:     integrations.ErrSkip,
}

// Fetch downloads the raw message of the item with providerID (a Gmail
// message id) again, for the download routes: messages.get with
// format=raw, as downloadEmail does. A message Gmail no longer has (404)
// wraps integrations.ErrGone.
func (m *mailbox) Fetch(ctx context.Context, providerID string) (io.ReadCloser, error) {
	if !validID(providerID) {
		return nil, fmt.Errorf("gmail fetch: %w: not a message id", integrations.ErrGone)
	}
	body, err := m.get(ctx, "/gmail/v1/users/me/messages/"+providerID, url.Values{"format": {"raw"}}, maxMessageBody)
	var ae *integrations.APIError
	switch {
	case errors.Is(err, errTooLarge):
		return nil, errOriginalTooLarge
	case errors.As(err, &ae) && (ae.Status == 404 || ae.Status == 410):
		return nil, fmt.Errorf("gmail fetch: %w: %w", integrations.ErrGone, err)
	case err != nil:
		return nil, fmt.Errorf("gmail fetch: %w", err)
	}
	var msg fullMessage
	err = json.Unmarshal(body, &msg)
	switch {
	case errors.Is(err, ErrMessageTooLarge):
		return nil, errOriginalTooLarge
	case err != nil:
		return nil, fmt.Errorf("gmail fetch: %w", badResponse(err))
	case msg.ID != providerID || len(msg.Raw) == 0:
		return nil, fmt.Errorf("gmail fetch: %w: not the message asked for", ErrBadResponse)
	}
	return integrations.NewWhole(msg.Raw), nil
}
