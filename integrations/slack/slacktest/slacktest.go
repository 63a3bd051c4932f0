// Package slacktest is a fake Slack Web API for tests and benchmarks:
// conversations.list, conversations.history, conversations.replies,
// users.info and users.list over a workspace held in memory, with Slack's
// cursors, its {"ok": false} errors, per-method rate limits answered with
// 429 and Retry-After, and hooks to post, edit and delete messages, revoke
// the token and fail.
//
// It checks what Slack checks: the bearer token (not_authed, invalid_auth,
// token_revoked), cursors it issued for the same method and conversation
// (invalid_cursor), oldest and ts arguments (invalid_ts_oldest), types and
// limits (invalid_types, invalid_limit), known channels and users.
package slacktest

import (
	"context"
	"crypto/rand"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/slack"
)

// Conversation is a conversation of the fake workspace.
type Conversation struct {
	ID       string
	Name     string // empty for a DM
	Type     string // public_channel, private_channel, im or mpim
	User     string // a DM's other member
	Member   bool   // the user joined it (DMs and group DMs: always)
	Archived bool
	Messages []Message // oldest first
}

// Message is a message of the fake workspace.
type Message struct {
	TS, User, Text string
	EditedTS       string
	Replies        []Message // a thread, oldest first
	Deleted        bool      // a deleted parent kept as a tombstone for its replies
	Subtype        string    // channel_join and the like; "" for what a person wrote
}

// Options configure a fake workspace.
type Options struct {
	Conversations []Conversation
	Users         []slack.User
	// Mux and URL, when set, are where the API is served; else New starts
	// its own server.
	Mux *http.ServeMux
	URL string
	// PageSize caps a page below the request's limit; 0 leaves the limit.
	PageSize int
	// PerMinute limits each method to so many calls within a minute of
	// Now, as Slack's tiers do (Tier 3, conversations.history: about 50);
	// a method not listed is not limited.
	PerMinute map[string]int
	// Now is the clock of the rate limits; nil means time.Now.
	Now func() time.Time
}

// Server is a running fake Slack.
type Server struct {
	// URL is the Web API base, for SLACK_API_BASE_URL.
	URL string
	// AccessToken is the user token accepted.
	AccessToken string

	opts   Options
	client *http.Client
	secret string

	mu       sync.Mutex
	convs    []*Conversation
	byID     map[string]*Conversation
	users    map[string]slack.User
	userIDs  []string
	revoked  bool
	failures []failure
	calls    map[string][]time.Time // per method, within the last minute
	counts   map[string]int
	lastTS   int64 // micros of the newest ts issued
}

type failure struct {
	status     int
	retryAfter string
}

// Epoch is the time of ts 0 of Generate's messages: 2026-01-01 UTC.
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TS returns the ts of a time, as Slack writes it.
func TS(t time.Time) string {
	return fmt.Sprintf("%d.%06d", t.Unix(), t.Nanosecond()/1000)
}

// Generate returns a workspace of channels conversations (public channels,
// then a private one, a DM and a group DM in turn) of perChannel messages
// each, every tenth a thread parent with two replies, and its users.
func Generate(channels, perChannel int) Options {
	users := []slack.User{}
	for i := range 5 {
		u := slack.User{ID: fmt.Sprintf("U%07d", i+1), Name: fmt.Sprintf("user%d", i+1)}
		u.Profile.DisplayName = []string{"Ana", "Bo", "Chen Jiayi", "Dara", "Eli"}[i]
		users = append(users, u)
	}
	var convs []Conversation
	ts := epoch
	for c := range channels {
		conv := Conversation{ID: fmt.Sprintf("C%07d", c+1), Name: fmt.Sprintf("channel-%d", c+1), Type: "public_channel", Member: true}
		switch c % 4 {
		case 1:
			conv.Type, conv.ID = "private_channel", fmt.Sprintf("G%07d", c+1)
		case 2:
			conv.Type, conv.ID, conv.Name, conv.User = "im", fmt.Sprintf("D%07d", c+1), "", users[c%len(users)].ID
		case 3:
			conv.Type, conv.ID, conv.Name = "mpim", fmt.Sprintf("G%07d", c+1), "mpdm-user1--user2--me-1"
		}
		for m := range perChannel {
			ts = ts.Add(time.Second)
			msg := Message{TS: TS(ts), User: users[m%len(users)].ID, Text: fmt.Sprintf("message %d of %s: %s", m+1, conv.ID, words[m%len(words)])}
			if m%10 == 9 {
				for r := range 2 {
					msg.Replies = append(msg.Replies, Message{TS: TS(ts.Add(time.Duration(r+1) * time.Millisecond)),
						User: users[(m+r+1)%len(users)].ID, Text: fmt.Sprintf("reply %d to message %d", r+1, m+1)})
				}
			}
			conv.Messages = append(conv.Messages, msg)
		}
		convs = append(convs, conv)
	}
	return Options{Conversations: convs, Users: users}
}

var words = []string{"standup at ten", "the deploy went fine", "café on Friday?", "see the doc", "thanks!", "merged"}

// New starts a fake Slack.
func New(tb testing.TB, opts Options) *Server {
	tb.Helper()
	s := &Server{opts: opts, AccessToken: "xoxp-" + rand.Text(), secret: rand.Text()[:10],
		byID: map[string]*Conversation{}, users: map[string]slack.User{}, calls: map[string][]time.Time{}, counts: map[string]int{}}
	for i := range opts.Conversations {
		c := opts.Conversations[i]
		c.Messages = slices.Clone(c.Messages)
		s.convs = append(s.convs, &c)
		s.byID[c.ID] = &c
		for _, m := range c.Messages {
			s.lastTS = max(s.lastTS, micros(m.TS))
			for _, r := range m.Replies {
				s.lastTS = max(s.lastTS, micros(r.TS))
			}
		}
	}
	for _, u := range opts.Users {
		s.users[u.ID] = u
		s.userIDs = append(s.userIDs, u.ID)
	}
	mux := opts.Mux
	if mux == nil {
		mux = http.NewServeMux()
		srv := httptest.NewServer(mux)
		tb.Cleanup(srv.Close)
		s.URL, s.client = srv.URL, srv.Client()
	} else {
		s.URL, s.client = opts.URL, http.DefaultClient
	}
	mux.HandleFunc("/conversations.list", s.handle("conversations.list", s.list))
	mux.HandleFunc("/conversations.history", s.handle("conversations.history", s.history))
	mux.HandleFunc("/conversations.replies", s.handle("conversations.replies", s.replies))
	mux.HandleFunc("/users.info", s.handle("users.info", s.userInfo))
	mux.HandleFunc("/users.list", s.handle("users.list", s.userList))
	return s
}

// Client returns a client for the server New started.
func (s *Server) Client() *http.Client { return s.client }

// Token returns AccessToken, as slack.NewClient wants it.
func (s *Server) Token(context.Context) (string, error) { return s.AccessToken, nil }

// Provider returns a Slack provider whose API is this server.
func (s *Server) Provider(tb testing.TB) *oauthclient.Provider {
	tb.Helper()
	vars := map[string]string{
		"SLACK_OAUTH_CLIENT_ID": "slacktest-client", "SLACK_OAUTH_CLIENT_SECRET": "slacktest-secret",
		"SLACK_OAUTH_AUTH_URL": s.URL + "/oauth/v2/authorize", "SLACK_OAUTH_TOKEN_URL": s.URL + "/oauth.v2.access",
		"SLACK_OAUTH_REVOKE_URL": s.URL + "/auth.revoke", "SLACK_API_BASE_URL": s.URL,
	}
	p, err := oauthclient.NewProvider(slack.Definition(), func(k string) string { return vars[k] }, s.client)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

// Post adds a message by user to a conversation and returns its ts.
func (s *Server) Post(channel, user, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byID[channel]
	ts := s.nextTS()
	c.Messages = append(c.Messages, Message{TS: ts, User: user, Text: text})
	return ts
}

// Reply adds a reply to the thread under parent and returns its ts.
func (s *Server) Reply(channel, parent, user, text string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.message(channel, parent)
	ts := s.nextTS()
	m.Replies = append(m.Replies, Message{TS: ts, User: user, Text: text})
	return ts
}

// Edit changes a message's text and marks it edited now.
func (s *Server) Edit(channel, ts, text string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.message(channel, ts)
	m.Text, m.EditedTS = text, s.nextTS()
}

// Delete deletes a message: a thread parent with replies stays as a
// tombstone, as in Slack; any other message is gone.
func (s *Server) Delete(channel, ts string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byID[channel]
	i := slices.IndexFunc(c.Messages, func(m Message) bool { return m.TS == ts })
	if i < 0 {
		return
	}
	if len(c.Messages[i].Replies) > 0 {
		c.Messages[i].Deleted, c.Messages[i].Text = true, "This message was deleted."
		return
	}
	c.Messages = slices.Delete(c.Messages, i, i+1)
}

// Join adds a channel_join message to a conversation and returns its ts.
func (s *Server) Join(channel, user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.byID[channel]
	ts := s.nextTS()
	c.Messages = append(c.Messages, Message{TS: ts, User: user, Subtype: "channel_join", Text: "<@" + user + "> has joined the channel"})
	return ts
}

// Leave makes the user leave a channel: conversations.list shows it as
// not joined.
func (s *Server) Leave(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[channel].Member = false
}

// Archive archives a conversation.
func (s *Server) Archive(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.byID[channel].Archived = true
}

// Remove deletes a conversation: it leaves every list.
func (s *Server) Remove(channel string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.byID, channel)
	s.convs = slices.DeleteFunc(s.convs, func(c *Conversation) bool { return c.ID == channel })
}

// Revoke makes the token answer token_revoked.
func (s *Server) Revoke() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.revoked = true
}

// Fail makes the next n calls answer HTTP status, with retryAfter as
// Retry-After if not empty.
func (s *Server) Fail(n, status int, retryAfter string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures = append(s.failures, failure{status, retryAfter})
	}
}

// Calls returns how many calls of method were answered, failures included.
func (s *Server) Calls(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method]
}

func (s *Server) message(channel, ts string) *Message {
	c := s.byID[channel]
	for i := range c.Messages {
		if c.Messages[i].TS == ts {
			return &c.Messages[i]
		}
	}
	panic("slacktest: no message " + ts + " in " + channel)
}

// nextTS issues a ts after every other, a millisecond on.
func (s *Server) nextTS() string {
	s.lastTS += 1000
	return fmt.Sprintf("%d.%06d", s.lastTS/1e6, s.lastTS%1e6)
}

func micros(ts string) int64 {
	sec, frac, _ := strings.Cut(ts, ".")
	a, _ := strconv.ParseInt(sec, 10, 64)
	b, _ := strconv.ParseInt((frac + "000000")[:6], 10, 64)
	return a*1e6 + b
}

func (s *Server) now() time.Time {
	if s.opts.Now != nil {
		return s.opts.Now()
	}
	return time.Now()
}
