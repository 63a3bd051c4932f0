package imap

import (
	"context"
	"fmt"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/mail"
)

// Plan lists the examined folder (UID SEARCH), fetches the envelopes of
// the messages not stored under its UIDVALIDITY (Wanted) and plans its
// sync (PlanFolder). st is EXAMINE's answer; stored the IDs of the
// folder's items.
func (c *Client) Plan(ctx context.Context, folder string, st Status, stored []ID, lim Limits) (Plan, error) {
	server, err := c.SearchUIDs(ctx)
	if err != nil {
		return Plan{}, fmt.Errorf("imap: search: %w", err)
	}
	var envs []Envelope
	if wanted := Wanted(st, stored, server); len(wanted) > 0 {
		err := c.FetchEnvelopes(ctx, wanted, func(e Envelope) error {
			envs = append(envs, e)
			return nil
		})
		if err != nil {
			return Plan{}, fmt.Errorf("imap: envelopes: %w", err)
		}
	}
	return PlanFolder(folder, st, stored, server, envs, lim), nil
}

// DownloadBatch fetches one batch of the examined folder and returns its
// messages as items. validity is the folder's UIDVALIDITY, which the
// items' provider ids carry.
func (c *Client) DownloadBatch(ctx context.Context, folder string, validity uint32, b Batch) ([]integrations.Item, error) {
	items := make([]integrations.Item, 0, b.UIDs.Len())
	err := c.FetchMessages(ctx, b.UIDs, b.HeadersOnly, func(m Message) error {
		items = append(items, MessageItem(folder, validity, m))
		return nil
	})
	return items, err
}

// Titles of the items of messages that could not be kept whole.
const (
	tooLargeTitle   = "(message larger than 25 MiB: not downloaded)"
	unreadableTitle = "(unreadable message)"
	// tooLargeText is the text of a placeholder whose header was read.
	tooLargeText = "This message is larger than 25 MiB: only its header was downloaded."
)

// MessageItem turns a downloaded message into an item. A message over the
// size cap (HeaderOnly) becomes a placeholder with its header's subject,
// sender, recipients and date but no content, as Gmail's do, so that it
// is not downloaded again; one whose header cannot be read keeps its
// content under a placeholder title. The date is the Date field, else
// the server's INTERNALDATE.
func MessageItem(folder string, validity uint32, m Message) integrations.Item {
	id := ID{Folder: folder, UIDValidity: validity, UID: m.UID, Key: MessageKey(m.Raw)}
	item := integrations.Item{ProviderID: id.String(), Date: m.Date, Size: m.Size}
	parsed, err := mail.Parse(m.Raw)
	if err == nil {
		item.Title, item.From, item.To = parsed.Subject, parsed.From, parsed.To
		item.Thread, item.Refs = parsed.ThreadKeys()
		if !parsed.Date.IsZero() {
			item.Date = parsed.Date
		}
	}
	switch {
	case m.HeaderOnly:
		if item.Title == "" {
			item.Title = tooLargeTitle
		}
		item.Text = tooLargeText
	case err != nil:
		item.Title = unreadableTitle
		item.Raw = m.Raw
	default:
		item.Attachments = integrations.MailAttachments(&parsed)
		item.Text = mailExtractor.MailText(&parsed)
		item.Raw = m.Raw
	}
	return item
}

// mailExtractor reads the text of mail attachments, within the limits
// Dropbox files have by default.
var mailExtractor = extract.New(extract.Limits{})
