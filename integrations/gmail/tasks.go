package gmail

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
	"searchsvc/integrations/mail"
	"searchsvc/integrations/textguard"
)

// Sync sizes.
const (
	// PageSize is how many message ids one getEmailList task asks for
	// (Gmail's maxResults: 100 by default, at most 500).
	PageSize = 100
	// MaxMessageSize is the largest message downloadEmail accepts, in
	// bytes: Gmail's limit on what a user can send. Gmail accepts incoming
	// mail up to 50 MB; such a message fails its task with
	// ErrMessageTooLarge.
	MaxMessageSize = 25 << 20
)

// Task payload keys of the email providers' tasks (getEmailList's page
// token, downloadEmail's id; see integrations.TaskStart), and getHistory's.
const (
	payloadPageToken      = "pageToken"
	payloadEmailID        = "emailId"
	payloadEmailIDs       = "emailIds"
	payloadStartHistoryID = "startHistoryId"
)

// TaskDownloadEmails downloads the new messages of one listed page or one
// history page, whose ids its payload holds (emailIds, comma-separated).
// One task a page rather than one a message (integrations.TaskDownloadEmail,
// still run for the tasks an earlier build queued) leaves one finished
// task in the main store's log per page, not one per mail, and commits the
// page's messages in one batch.
const TaskDownloadEmails = "downloadEmails"

// Bounds of a downloadEmails task.
const (
	// maxBatchIDs is the most ids one task carries: a history page's
	// worth (HistoryPageSize).
	maxBatchIDs = HistoryPageSize
	// maxBatchBytes bounds the raw mail one run holds before it returns:
	// what is left becomes a task of its own, so a page of large mail
	// never sits in memory at once.
	maxBatchBytes = 8 << 20
)

// WebURL, followed by a message id, opens the message in Gmail's web
// client: an item's link.
const WebURL = "https://mail.google.com/mail/#all/"

// Errors of the tasks, besides *integrations.APIError for an API answer
// other than 2xx and ErrBadResponse.
var (
	// ErrMessageTooLarge marks a raw message larger than MaxMessageSize.
	// downloadEmail does not fail on it: it outputs a placeholder item (see
	// placeholder), so the message is known and not fetched again each poll.
	// It wraps integrations.ErrSkip for any other caller.
	ErrMessageTooLarge = fmt.Errorf("gmail: message larger than 25 MiB: %w", integrations.ErrSkip)
	// ErrInvalidPayload fails a task whose emailId or pageToken cannot
	// have come from Gmail; no request is made.
	ErrInvalidPayload = fmt.Errorf("gmail: invalid task payload: %w", integrations.ErrSkip)
)

// Bounds on answers and payloads.
const (
	maxListBody  = 1 << 20 // a page of 100 ids takes about 6 KB
	maxPageToken = 512     // Gmail's are about 20 digits
	maxIDLen     = 64      // Gmail's are 16 hex digits
	// maxMessageBody is the largest messages.get answer: the raw message
	// in base64, its snippet, labels and the rest.
	maxMessageBody = MaxMessageSize/3*4 + 4 + 1<<20
)

// RunTask runs the email-provider tasks, as Google recommends a mailbox
// be synced: one full listing, then partial syncs from the mailbox's
// history.
//
//   - start, on a record without a sync state, takes the mailbox's
//     historyId (users.getProfile) and gives a getEmailList task for the
//     first page; with a listing under way that lost its task (dropped
//     after many failures), it gives the getEmailList of the page the
//     listing stopped at; after a finished listing, it runs the first
//     page of users.history.list from the stored historyId (see
//     history.go);
//   - getEmailList lists one page of message ids and gives one
//     downloadEmails task for the ids Env.Known does not report, and a
//     getEmailList task for the next page, if any; every page is listed,
//     so mail whose date puts it among stored mail is found too; the
//     sync state keeps the next page, and the last page ends the listing;
//   - getHistory runs a further page of users.history.list;
//   - downloadEmails fetches the messages of its ids, one after another,
//     and outputs them as Items (see downloadMany); downloadEmail, of
//     earlier builds, fetches one.
//
// A later sync thus costs one history request plus a download per new
// message, and reports the messages deleted in Gmail (TaskResult.Removed).
func (m *mailbox) RunTask(ctx context.Context, task integrations.Task) (integrations.TaskResult, error) {
	switch task.Type {
	case integrations.TaskStart:
		return m.start(ctx)
	case integrations.TaskGetEmailList:
		return m.list(ctx, task.Payload[payloadPageToken])
	case TaskGetHistory:
		return m.history(ctx, task.Payload[payloadStartHistoryID], task.Payload[payloadPageToken])
	case TaskDownloadEmails:
		return m.downloadMany(ctx, task.Payload[payloadEmailIDs])
	case integrations.TaskDownloadEmail:
		return m.download(ctx, task.Payload[payloadEmailID])
	}
	return integrations.TaskResult{}, fmt.Errorf("gmail task %q: %w", textguard.Name(task.Type), integrations.ErrUnsupportedTask)
}

// start runs the start task: see RunTask.
func (m *mailbox) start(ctx context.Context) (integrations.TaskResult, error) {
	st := m.syncState()
	switch {
	case st.Listing:
		return integrations.TaskResult{Tasks: []integrations.Task{listTask(st.PageToken)}}, nil
	case st.HistoryID != "":
		return m.history(ctx, st.HistoryID, "")
	}
	return m.fullListing(ctx, "gmail start")
}

// fullListing starts a listing of the whole mailbox: the mailbox's
// current historyId is taken first, so that whatever changes while the
// listing runs is in the history the next sync reads.
func (m *mailbox) fullListing(ctx context.Context, what string) (integrations.TaskResult, error) {
	h, err := m.historyID(ctx)
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("%s: %w", what, err)
	}
	st := syncState{HistoryID: h, Listing: true}
	return integrations.TaskResult{Tasks: []integrations.Task{listTask("")},
		State: forgetListed(st.kept(), m.syncState().Pages)}, nil
}

func listTask(pageToken string) integrations.Task {
	t := integrations.Task{Type: integrations.TaskGetEmailList}
	if pageToken != "" {
		t.Payload = map[string]string{payloadPageToken: pageToken}
	}
	return t
}

// listPage is messages.list's answer. resultSizeEstimate is not used.
type listPage struct {
	Messages []struct {
		ID string `json:"id"`
	} `json:"messages"`
	NextPageToken string `json:"nextPageToken"`
}

// list runs getEmailList for the page at pageToken ("" for the first).
func (m *mailbox) list(ctx context.Context, pageToken string) (integrations.TaskResult, error) {
	if !validPageToken(pageToken) {
		return integrations.TaskResult{}, fmt.Errorf("gmail getEmailList: pageToken: %w", ErrInvalidPayload)
	}
	query := url.Values{"maxResults": {strconv.Itoa(PageSize)}}
	if pageToken != "" {
		query.Set("pageToken", pageToken)
	}
	st := m.syncState()
	body, err := m.get(ctx, "/gmail/v1/users/me/messages", query, maxListBody)
	var ae *integrations.APIError
	if pageToken != "" && errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		// Gmail no longer takes the page token (a listing resumed long
		// after it stopped): list again from the first page, downloading
		// only what is not stored.
		pages := st.Pages
		st.Listing, st.PageToken, st.Pages = true, "", 0
		return integrations.TaskResult{Tasks: []integrations.Task{listTask("")}, State: forgetListed(st.kept(), pages)}, nil
	}
	if err != nil {
		return integrations.TaskResult{}, fmt.Errorf("gmail getEmailList: %w", err)
	}
	var page listPage
	if err := json.Unmarshal(body, &page); err != nil {
		return integrations.TaskResult{}, fmt.Errorf("gmail getEmailList: %w", badResponse(err))
	}
	if !validPageToken(page.NextPageToken) {
		return integrations.TaskResult{}, fmt.Errorf("gmail getEmailList: %w: nextPageToken", ErrBadResponse)
	}
	var res integrations.TaskResult
	seen := make(map[string]bool, len(page.Messages))
	ids := make([]string, 0, len(page.Messages))
	var fetch []string
	for _, msg := range page.Messages {
		// An id that cannot be Gmail's is skipped rather than failing the
		// page: the rest of the mailbox stays reachable.
		if !validID(msg.ID) || seen[msg.ID] {
			continue
		}
		seen[msg.ID] = true
		ids = append(ids, msg.ID)
		if m.known != nil && m.known(msg.ID) {
			continue
		}
		fetch = append(fetch, msg.ID)
	}
	res.Tasks = appendDownloads(res.Tasks, fetch)
	if page.NextPageToken != "" {
		res.Tasks = append(res.Tasks, listTask(page.NextPageToken))
	} else if res.Removed, err = m.unlisted(st, ids); err != nil {
		return integrations.TaskResult{}, fmt.Errorf("gmail getEmailList: %w", err)
	}
	res.State = afterPage(st, ids, page.NextPageToken)
	return res, nil
}

func downloadTask(id string) integrations.Task {
	return integrations.Task{Type: integrations.TaskDownloadEmail, Payload: map[string]string{payloadEmailID: id}}
}

// appendDownloads appends the downloadEmails tasks of ids (valid, and at
// most a page's) to ts: none for no id.
func appendDownloads(ts []integrations.Task, ids []string) []integrations.Task {
	for len(ids) > 0 {
		n := min(len(ids), maxBatchIDs)
		ts = append(ts, integrations.Task{Type: TaskDownloadEmails,
			Payload: map[string]string{payloadEmailIDs: strings.Join(ids[:n], ",")}, Items: n})
		ids = ids[n:]
	}
	return ts
}

// downloadMany runs downloadEmails: it downloads its messages in order
// and outputs them. Work done is never thrown away for a message that
// fails: a failure after the first message returns the messages so far,
// with the rest as a downloadEmails task of its own; a failure at the
// first (unless the service is stopping) returns it as a downloadEmail
// task, which fails with the retries and the words of a single message,
// then the rest, which waits behind it. So one bad message costs the page
// one more task, not its other messages, and a listing never loses mail
// to a message it cannot read. After maxBatchBytes of raw mail the run
// stops likewise and the rest follows.
func (m *mailbox) downloadMany(ctx context.Context, list string) (integrations.TaskResult, error) {
	ids := strings.Split(list, ",")
	if len(ids) > maxBatchIDs || slices.ContainsFunc(ids, func(id string) bool { return !validID(id) }) {
		return integrations.TaskResult{}, fmt.Errorf("gmail downloadEmails: emailIds: %w", ErrInvalidPayload)
	}
	var res integrations.TaskResult
	var held int64
	for i, id := range ids {
		if held >= maxBatchBytes {
			res.Tasks = appendDownloads(nil, ids[i:])
			break
		}
		one, err := m.download(ctx, id)
		switch {
		case err == nil:
			res.Output = append(res.Output, one.Output...)
			for _, it := range one.Output {
				held += int64(len(it.Raw))
			}
			continue
		case i > 0:
			res.Tasks = appendDownloads(nil, ids[i:])
		case len(ids) == 1 || ctx.Err() != nil:
			return integrations.TaskResult{}, err
		default:
			res.Tasks = appendDownloads([]integrations.Task{downloadTask(id)}, ids[1:])
		}
		break
	}
	return res, nil
}

// fullMessage is messages.get's answer with format=raw.
type fullMessage struct {
	ID           string     `json:"id"`
	ThreadID     string     `json:"threadId"`
	InternalDate string     `json:"internalDate"` // ms since the epoch, as a string
	Raw          rawMessage `json:"raw"`
}

// download runs downloadEmail for the message id.
func (m *mailbox) download(ctx context.Context, id string) (integrations.TaskResult, error) {
	if !validID(id) {
		return integrations.TaskResult{}, fmt.Errorf("gmail downloadEmail: emailId: %w", ErrInvalidPayload)
	}
	fail := func(err error) (integrations.TaskResult, error) {
		return integrations.TaskResult{}, fmt.Errorf("gmail downloadEmail %s: %w", id, err)
	}
	body, err := m.get(ctx, "/gmail/v1/users/me/messages/"+id, url.Values{"format": {"raw"}}, maxMessageBody)
	if errors.Is(err, errTooLarge) {
		return placeholder(id), nil
	}
	if err != nil {
		return fail(err)
	}
	var msg fullMessage
	err = json.Unmarshal(body, &msg)
	body = nil // the raw message is decoded: let the answer go
	switch {
	case errors.Is(err, ErrMessageTooLarge):
		return placeholder(id), nil
	case err != nil:
		return fail(badResponse(err))
	case msg.ID != id:
		return fail(fmt.Errorf("%w: answer for another message", ErrBadResponse))
	case len(msg.Raw) == 0:
		return fail(fmt.Errorf("%w: no raw message", ErrBadResponse))
	}
	parsed, err := mail.Parse(msg.Raw)
	if err != nil {
		return fail(err)
	}
	date := parsed.Date
	if date.IsZero() {
		date = internalDate(msg.InternalDate)
	}
	item := integrations.Item{
		ProviderID: id,
		Link:       WebURL + id,
		Title:      parsed.Subject,
		From:       parsed.From,
		To:         parsed.To,
		Date:       date,
		Size:       int64(len(msg.Raw)),
		Text:       mailExtractor.MailText(&parsed),
		Raw:        msg.Raw,
	}
	item.Attachments = integrations.MailAttachments(&parsed)
	if validID(msg.ThreadID) {
		item.Thread, item.Refs = msg.ThreadID, []string{msg.ThreadID}
	}
	return integrations.TaskResult{Output: []integrations.Item{item}}, nil
}

// mailExtractor reads the text of mail attachments, within the limits
// Dropbox files have by default.
var mailExtractor = extract.New(extract.Limits{})

// rawMessage decodes the raw field, base64url (RFC 4648 §5) with or
// without padding, straight from the JSON answer, without the copy a
// string field would make.
type rawMessage []byte

func (r *rawMessage) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' {
		return errors.New("raw is not a string")
	}
	s := b[1 : len(b)-1]
	if bytes.IndexByte(s, '\\') >= 0 { // escaped: not Google's, but valid JSON
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		s = []byte(str)
	}
	s = bytes.TrimRight(s, "=")
	if tooLarge(len(s)) {
		return ErrMessageTooLarge
	}
	out := make([]byte, base64.RawURLEncoding.DecodedLen(len(s)))
	n, err := base64.RawURLEncoding.Decode(out, s)
	if err != nil {
		return fmt.Errorf("raw is not base64url: %w", err)
	}
	*r = out[:n]
	return nil
}

// tooLarge reports whether n characters of unpadded base64 can decode to
// more than MaxMessageSize bytes.
func tooLarge(n int) bool {
	return base64.RawURLEncoding.DecodedLen(n) > MaxMessageSize
}

// internalDate reads messages.get's internalDate, the time Gmail received
// the message in ms since the epoch; garbage gives the zero time.
func internalDate(ms string) time.Time {
	n, err := strconv.ParseInt(ms, 10, 64)
	if err != nil || n <= 0 || n > 1<<50 {
		return time.Time{}
	}
	return time.UnixMilli(n).UTC()
}

// validID reports whether id can be a Gmail message id: 1 to 64 ASCII
// letters, digits, '-' or '_'. Anything else could change the request path.
func validID(id string) bool {
	if len(id) == 0 || len(id) > maxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// validPageToken reports whether t can be a Gmail page token: empty, or up
// to maxPageToken printable ASCII characters. It is sent query-escaped.
func validPageToken(t string) bool { return textguard.Token(t, maxPageToken) }

// tooLargeTitle is the title of the placeholder item of a message over
// MaxMessageSize.
const tooLargeTitle = "(message larger than 25 MiB: not downloaded)"

// placeholder is the result of a downloadEmail whose message is over
// MaxMessageSize: a placeholder item, with no content, so that the store
// knows the id and later syncs do not download it again only to refuse it.
func placeholder(id string) integrations.TaskResult {
	return integrations.TaskResult{Output: []integrations.Item{{ProviderID: id, Title: tooLargeTitle}}}
}
