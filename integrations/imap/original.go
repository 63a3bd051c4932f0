package imap

import (
	"context"
	"errors"
	"fmt"
	"io"

	"searchsvc/integrations"
)

// errOriginalTooLarge fails a fetch of a message over the size cap, of
// which the sync kept only the header section.
var errOriginalTooLarge = &integrations.ExplainedError{
	Message: "the message is larger than 25 MiB, which this server does not download",
	Err:     integrations.ErrSkip,
}

// Fetch downloads the raw message of the item with providerID (an ID's
// String) again, for the download routes: EXAMINE its folder, then UID
// FETCH (BODY.PEEK[]), so nothing is marked read. A folder gone or
// refused, a folder renumbered since (UIDVALIDITY changed) and a UID the
// server no longer has all wrap integrations.ErrGone: the message is not
// where the item says any more.
func (m *mailbox) Fetch(ctx context.Context, providerID string) (io.ReadCloser, error) {
	id, err := ParseID(providerID)
	if err != nil {
		return nil, fmt.Errorf("imap fetch: %w: %w", integrations.ErrGone, err)
	}
	raw, err := m.fetchRaw(ctx, id)
	if err != nil {
		if errors.Is(err, integrations.ErrGone) || errors.Is(err, integrations.ErrSkip) {
			return nil, err
		}
		return nil, m.taskError(ctx, err)
	}
	return integrations.NewWhole(raw), nil
}

func (m *mailbox) fetchRaw(ctx context.Context, id ID) ([]byte, error) {
	c, err := m.conn(ctx)
	if err != nil {
		return nil, err
	}
	st, err := m.examine(ctx, c, id.Folder)
	var se *ServerError
	if errors.As(err, &se) && se.Status == "NO" {
		return nil, fmt.Errorf("imap fetch: examine: %w", integrations.ErrGone)
	}
	if err != nil {
		return nil, fmt.Errorf("imap fetch: examine: %w", err)
	}
	if st.UIDValidity != id.UIDValidity {
		return nil, fmt.Errorf("imap fetch: folder renumbered: %w", integrations.ErrGone)
	}
	var raw []byte
	tooLarge := false
	err = c.FetchMessages(ctx, UIDSet{{id.UID, id.UID}}, false, func(msg Message) error {
		raw, tooLarge = msg.Raw, msg.HeaderOnly
		return nil
	})
	switch {
	case err != nil:
		return nil, fmt.Errorf("imap fetch: %w", err)
	case tooLarge:
		return nil, errOriginalTooLarge
	case raw == nil:
		return nil, fmt.Errorf("imap fetch: no such UID: %w", integrations.ErrGone)
	}
	return raw, nil
}
