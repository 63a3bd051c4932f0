package slack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/textguard"
)

// Errors of the API client, besides *integrations.APIError for an HTTP
// answer other than 200 (a 429 carries its Retry-After, so the task that
// got it runs again from the same cursor once the wait is over).
var (
	// ErrBadResponse wraps the errors of an answer that is not what Slack
	// sends: not JSON, a message without a ts, a cursor that cannot be one.
	ErrBadResponse = errors.New("slack: malformed API response")
	// ErrConversationGone: the conversation was deleted, archived or left
	// since it was listed. It wraps integrations.ErrSkip.
	ErrConversationGone = fmt.Errorf("slack: conversation gone: %w", integrations.ErrSkip)
	// ErrInvalidArgument: a cursor, channel id, ts or user id that cannot
	// be Slack's; no request is made. It wraps integrations.ErrSkip.
	ErrInvalidArgument = fmt.Errorf("slack: invalid argument: %w", integrations.ErrSkip)
)

// Error is Slack's {"ok": false, "error": code} answer to a method. A dead
// token's codes also wrap integrations.ErrReauthRequired, "ratelimited"
// is an *integrations.APIError 429 instead, and a conversation gone
// ErrConversationGone.
type Error struct {
	Method string // "conversations.history"
	Code   string // "channel_not_found"
}

func (e *Error) Error() string { return "slack " + e.Method + ": " + e.Code }

// goneErrors are the codes of a conversation that can no longer be read.
var goneErrors = map[string]bool{"channel_not_found": true, "not_in_channel": true, "is_archived": true, "thread_not_found": true}

// Page sizes asked of Slack, within its limits (conversations.list and
// users.list: 1,000; history and replies: 999; Slack advises 200).
const (
	ListLimit    = 200
	HistoryLimit = 200
)

// Bounds on answers and arguments.
const (
	maxBody      = 16 << 20
	maxCursor    = 4096
	maxUsers     = 100_000 // users cached by one Client
	defaultWait  = time.Minute
	maxFieldText = 64 << 10 // bytes of a message's text kept
)

// Client calls Slack's Web API for one workspace. Users it reads are
// cached for its life: build one per sync. It is safe for concurrent use.
type Client struct {
	http  *http.Client
	api   string
	token func(context.Context) (string, error)
	now   func() time.Time

	mu    sync.Mutex
	users map[string]User
}

// NewClient returns a client for the Web API at apiBase (APIBaseURL in
// production). token gives the current access token; now is the clock for
// Retry-After dates, nil for time.Now.
func NewClient(hc *http.Client, apiBase string, token func(context.Context) (string, error), now func() time.Time) *Client {
	if now == nil {
		now = time.Now
	}
	return &Client{http: hc, api: apiBase, token: token, now: now, users: map[string]User{}}
}

// ConversationTypes are the conversations listed: every kind the user can
// be in.
const ConversationTypes = "public_channel,private_channel,mpim,im"

// Conversations lists one page of the conversations the user is in
// (conversations.list gives every public channel; those the user has not
// joined are left out here, as are archived ones); cursor is "" for the
// first page. A page may hold no conversation and still have a next one.
func (c *Client) Conversations(ctx context.Context, cursor string) (ConversationPage, error) {
	var body struct {
		Channels []Conversation `json:"channels"`
		Meta     meta           `json:"response_metadata"`
	}
	form := url.Values{"types": {ConversationTypes}, "exclude_archived": {"true"}, "limit": {strconv.Itoa(ListLimit)}}
	if err := c.call(ctx, "conversations.list", form, cursor, &body); err != nil {
		return ConversationPage{}, err
	}
	page := ConversationPage{NextCursor: body.Meta.NextCursor}
	for _, ch := range body.Channels {
		joined := ch.IsIM || ch.IsMPIM || ch.IsMember
		if joined && !ch.IsArchived && validID(ch.ID) && (ch.User == "" || validID(ch.User)) {
			page.Conversations = append(page.Conversations, ch)
		}
	}
	return page, nil
}

// History lists one page of a conversation's messages after oldest (a ts,
// exclusive; "" for all), newest first.
func (c *Client) History(ctx context.Context, channel, oldest, cursor string) (MessagePage, error) {
	if !validID(channel) || !validTS(oldest, true) {
		return MessagePage{}, fmt.Errorf("slack conversations.history: %w", ErrInvalidArgument)
	}
	form := url.Values{"channel": {channel}, "limit": {strconv.Itoa(HistoryLimit)}}
	if oldest != "" {
		form.Set("oldest", oldest)
	}
	return c.messages(ctx, "conversations.history", form, cursor)
}

// Replies lists one page of the thread under the message threadTS,
// oldest first, the parent included on the first page; oldest ("" for
// all) leaves out the replies up to it.
func (c *Client) Replies(ctx context.Context, channel, threadTS, oldest, cursor string) (MessagePage, error) {
	if !validID(channel) || !validTS(threadTS, false) || !validTS(oldest, true) {
		return MessagePage{}, fmt.Errorf("slack conversations.replies: %w", ErrInvalidArgument)
	}
	form := url.Values{"channel": {channel}, "ts": {threadTS}, "limit": {strconv.Itoa(HistoryLimit)}}
	if oldest != "" {
		form.Set("oldest", oldest)
	}
	return c.messages(ctx, "conversations.replies", form, cursor)
}

func (c *Client) messages(ctx context.Context, method string, form url.Values, cursor string) (MessagePage, error) {
	var body struct {
		Messages []Message `json:"messages"`
		HasMore  bool      `json:"has_more"`
		Meta     meta      `json:"response_metadata"`
	}
	if err := c.call(ctx, method, form, cursor, &body); err != nil {
		return MessagePage{}, err
	}
	page := MessagePage{HasMore: body.HasMore, NextCursor: body.Meta.NextCursor}
	for _, m := range body.Messages {
		// A message without a usable ts cannot be stored or paged past:
		// it is dropped rather than failing the conversation.
		if !validTS(m.TS, false) || m.ThreadTS != "" && !validTS(m.ThreadTS, false) {
			continue
		}
		if len(m.Text) > maxFieldText {
			m.Text = strings.ToValidUTF8(textguard.Truncate(m.Text, maxFieldText), "")
		}
		page.Messages = append(page.Messages, m)
	}
	return page, nil
}

// User returns the member id, from the cache or users.info.
func (c *Client) User(ctx context.Context, id string) (User, error) {
	if !validID(id) {
		return User{}, fmt.Errorf("slack users.info: %w", ErrInvalidArgument)
	}
	c.mu.Lock()
	u, ok := c.users[id]
	c.mu.Unlock()
	if ok {
		return u, nil
	}
	var body struct {
		User User `json:"user"`
	}
	if err := c.call(ctx, "users.info", url.Values{"user": {id}}, "", &body); err != nil {
		return User{}, err
	}
	if body.User.ID != id {
		return User{}, fmt.Errorf("slack users.info: %w: another user", ErrBadResponse)
	}
	c.remember(body.User)
	return body.User, nil
}

// Users lists one page of the workspace's members and caches them, so
// that a sync can fill the cache in a few calls rather than one per user.
func (c *Client) Users(ctx context.Context, cursor string) (UserPage, error) {
	var body struct {
		Members []User `json:"members"`
		Meta    meta   `json:"response_metadata"`
	}
	if err := c.call(ctx, "users.list", url.Values{"limit": {strconv.Itoa(ListLimit)}}, cursor, &body); err != nil {
		return UserPage{}, err
	}
	page := UserPage{NextCursor: body.Meta.NextCursor}
	for _, u := range body.Members {
		if validID(u.ID) {
			c.remember(u)
			page.Users = append(page.Users, u)
		}
	}
	return page, nil
}

func (c *Client) remember(u User) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.users) < maxUsers {
		c.users[u.ID] = u
	}
}

// meta is Slack's response_metadata.
type meta struct {
	NextCursor string `json:"next_cursor"`
}

// deadToken reports whether a method's error code means the token is dead.
func deadToken(code string) bool { return deadTokenErrors[code] }

// call POSTs form (with cursor, if any) to method and decodes an ok
// answer into into.
func (c *Client) call(ctx context.Context, method string, form url.Values, cursor string, into any) error {
	if !validCursor(cursor) {
		return fmt.Errorf("slack %s: %w: cursor", method, ErrInvalidArgument)
	}
	if cursor != "" {
		form.Set("cursor", cursor)
	}
	token, err := c.token(ctx)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.api+"/"+method, strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		ae := integrations.NewAPIError(resp, "", c.now())
		if ae.Status == http.StatusTooManyRequests {
			ae.Code = "ratelimited"
			if ae.RetryAfter == 0 {
				ae.RetryAfter = defaultWait
			}
		}
		return fmt.Errorf("slack %s: %w", method, ae)
	}
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return fmt.Errorf("slack %s: %w", method, err)
	}
	if len(raw) > maxBody {
		return fmt.Errorf("slack %s: %w: answer over %d bytes", method, ErrBadResponse, maxBody)
	}
	var status struct {
		OK    bool   `json:"ok"`
		Error string `json:"error"`
		Meta  meta   `json:"response_metadata"`
	}
	if err := json.Unmarshal(raw, &status); err != nil {
		return fmt.Errorf("slack %s: %w: %w", method, ErrBadResponse, err)
	}
	if !status.OK {
		return c.methodError(method, status.Error, resp)
	}
	if !validCursor(status.Meta.NextCursor) {
		return fmt.Errorf("slack %s: %w: next_cursor", method, ErrBadResponse)
	}
	if err := json.Unmarshal(raw, into); err != nil {
		return fmt.Errorf("slack %s: %w: %w", method, ErrBadResponse, err)
	}
	return nil
}

// methodError maps an {"ok": false} answer.
func (c *Client) methodError(method, code string, resp *http.Response) error {
	if !textguard.Word(code) {
		code = "unknown_error"
	}
	e := &Error{Method: method, Code: code}
	switch {
	case deadToken(code):
		return fmt.Errorf("%w: %w", integrations.ErrReauthRequired, e)
	case code == "ratelimited":
		wait := integrations.RetryAfter(resp.Header.Get("Retry-After"), c.now())
		if wait == 0 {
			wait = defaultWait
		}
		return fmt.Errorf("slack %s: %w", method, &integrations.APIError{Status: http.StatusTooManyRequests, Code: code, RetryAfter: wait})
	case goneErrors[code]:
		return fmt.Errorf("%w: %w", ErrConversationGone, e)
	}
	return e
}
