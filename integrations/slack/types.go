package slack

import (
	"context"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations/textguard"
)

// Conversation is one channel, private channel, DM or group DM.
type Conversation struct {
	ID         string `json:"id"`
	Name       string `json:"name"` // empty for a DM
	IsChannel  bool   `json:"is_channel"`
	IsGroup    bool   `json:"is_group"`
	IsIM       bool   `json:"is_im"`
	IsMPIM     bool   `json:"is_mpim"`
	IsPrivate  bool   `json:"is_private"`
	IsArchived bool   `json:"is_archived"`
	IsMember   bool   `json:"is_member"` // channels only: the user joined it
	User       string `json:"user"`      // a DM's other member
}

// Message is one message of a conversation or thread.
type Message struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"` // "" for a plain message; "tombstone" for a deleted thread parent
	TS      string `json:"ts"`      // the message's id in its conversation, and its time
	User    string `json:"user"`
	BotID   string `json:"bot_id"`
	Text    string `json:"text"`
	// ThreadTS is the parent's ts for a thread parent or reply; ReplyCount
	// and LatestReply are set on a parent.
	ThreadTS    string `json:"thread_ts"`
	ReplyCount  int    `json:"reply_count"`
	LatestReply string `json:"latest_reply"`
	// Edited is set once the message was edited: who and when (a ts).
	Edited *struct {
		User string `json:"user"`
		TS   string `json:"ts"`
	} `json:"edited"`
}

// Deleted reports whether the message stands for one that was deleted:
// Slack keeps a deleted thread parent as a tombstone while replies
// remain. Other deleted messages are simply absent from the history.
func (m Message) Deleted() bool { return m.Subtype == "tombstone" }

// Time returns the message's ts as a time; zero if it is not one.
func (m Message) Time() time.Time { return TSTime(m.TS) }

// User is one member of the workspace.
type User struct {
	ID       string `json:"id"`
	Name     string `json:"name"` // the handle
	RealName string `json:"real_name"`
	Deleted  bool   `json:"deleted"`
	IsBot    bool   `json:"is_bot"`
	Profile  struct {
		DisplayName string `json:"display_name"`
		RealName    string `json:"real_name"`
	} `json:"profile"`
}

// DisplayName is what Slack shows for the user: the display name, else the
// real name, else the handle.
func (u User) DisplayName() string {
	for _, s := range []string{u.Profile.DisplayName, u.Profile.RealName, u.RealName, u.Name} {
		if s != "" {
			return s
		}
	}
	return u.ID
}

// ConversationPage is one page of conversations.list; NextCursor is empty
// on the last.
type ConversationPage struct {
	Conversations []Conversation
	NextCursor    string
}

// MessagePage is one page of conversations.history or .replies;
// NextCursor is empty on the last.
type MessagePage struct {
	Messages   []Message // newest first for history; oldest first for replies
	HasMore    bool
	NextCursor string
}

// UserPage is one page of users.list; NextCursor is empty on the last.
type UserPage struct {
	Users      []User
	NextCursor string
}

// Title is the title of a conversation's items: "#general" for a channel,
// "DM with Ana" for a DM (the other member's name, read through User),
// "Group DM with ana, bo" for a group DM (from the names Slack gives it).
func (c *Client) Title(ctx context.Context, conv Conversation) (string, error) {
	switch {
	case conv.IsIM:
		u, err := c.User(ctx, conv.User)
		if err != nil {
			return "", err
		}
		return "DM with " + u.DisplayName(), nil
	case conv.IsMPIM:
		// Slack names a group DM "mpdm-ana--bo--me-1".
		name := strings.TrimPrefix(conv.Name, "mpdm-")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i]
		}
		return "Group DM with " + strings.Join(strings.Split(name, "--"), ", "), nil
	}
	return "#" + conv.Name, nil
}

// TSTime reads a Slack ts ("1767225600.000100", seconds and micros since
// the epoch) as a time; zero if it is not one.
func TSTime(ts string) time.Time {
	if !validTS(ts, false) {
		return time.Time{}
	}
	sec, frac, _ := strings.Cut(ts, ".")
	s, _ := strconv.ParseInt(sec, 10, 64)
	var ns int64
	if frac != "" {
		f := (frac + "000000000")[:9]
		ns, _ = strconv.ParseInt(f, 10, 64)
	}
	return time.Unix(s, ns).UTC()
}

// validTS reports whether ts can be a Slack ts: up to 12 digits, and
// optionally '.' and up to 9 digits. empty says "" is accepted.
func validTS(ts string, empty bool) bool {
	if ts == "" {
		return empty
	}
	sec, frac, dot := strings.Cut(ts, ".")
	return len(sec) >= 1 && len(sec) <= 12 && digits(sec) && (!dot || len(frac) >= 1 && len(frac) <= 9 && digits(frac))
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validID reports whether s can be a Slack id (C…, D…, G…, U…, W…): 1 to
// 32 upper-case letters and digits.
func validID(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= 'A' && s[i] <= 'Z' || s[i] >= '0' && s[i] <= '9') {
			return false
		}
	}
	return true
}

// validCursor reports whether s can be a Slack cursor: empty, or up to
// maxCursor printable ASCII characters.
func validCursor(s string) bool { return textguard.Token(s, maxCursor) }
