package slacktest

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"searchsvc/integrations/slack"
)

// handle wraps a method with the checks every call gets, in Slack's
// order: rate limit, then authentication.
func (s *Server) handle(method string, fn func(url.Values) (map[string]any, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[method]++
		var f failure
		if len(s.failures) > 0 {
			f, s.failures = s.failures[0], s.failures[1:]
		}
		if limit := s.opts.PerMinute[method]; limit > 0 && f.status == 0 {
			now := s.now()
			calls := slices.DeleteFunc(s.calls[method], func(t time.Time) bool { return now.Sub(t) >= time.Minute })
			if len(calls) >= limit {
				wait := time.Minute - now.Sub(calls[0])
				f = failure{http.StatusTooManyRequests, strconv.Itoa(int((wait + time.Second - 1) / time.Second))}
			} else {
				calls = append(calls, now)
			}
			s.calls[method] = calls
		}
		revoked := s.revoked
		s.mu.Unlock()
		if f.status != 0 {
			if f.retryAfter != "" {
				w.Header().Set("Retry-After", f.retryAfter)
			}
			if f.status == http.StatusTooManyRequests {
				writeJSON(w, f.status, map[string]any{"ok": false, "error": "ratelimited"})
				return
			}
			http.Error(w, http.StatusText(f.status), f.status)
			return
		}
		if r.Method != http.MethodPost && r.Method != http.MethodGet {
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		if err := r.ParseForm(); err != nil {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_form_data"})
			return
		}
		token, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case !ok || token == "":
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "not_authed"})
			return
		case token != s.AccessToken:
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "invalid_auth"})
			return
		case revoked:
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": "token_revoked"})
			return
		}
		s.mu.Lock()
		body, code := fn(r.Form)
		s.mu.Unlock()
		if code != "" {
			writeJSON(w, http.StatusOK, map[string]any{"ok": false, "error": code})
			return
		}
		body["ok"] = true
		writeJSON(w, http.StatusOK, body)
	}
}

// page cuts items at the form's cursor and limit; scope ties the cursor
// to one method and conversation. It returns the page, the next cursor
// and an error code.
func page[T any](s *Server, form url.Values, scope string, items []T, maxLimit int) ([]T, string, string) {
	limit := 100
	if v := form.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return nil, "", "invalid_limit"
		}
		limit = n
	}
	if s.opts.PageSize > 0 {
		limit = min(limit, s.opts.PageSize)
	}
	offset := 0
	if c := form.Get("cursor"); c != "" {
		raw, err := base64.StdEncoding.DecodeString(c)
		rest, ok := strings.CutPrefix(string(raw), s.secret+"|"+scope+"|")
		n, nerr := strconv.Atoi(rest)
		if err != nil || !ok || nerr != nil || n < 0 || n > len(items) {
			return nil, "", "invalid_cursor"
		}
		offset = n
	}
	end := min(offset+limit, len(items))
	next := ""
	if end < len(items) {
		next = base64.StdEncoding.EncodeToString([]byte(s.secret + "|" + scope + "|" + strconv.Itoa(end)))
	}
	return items[offset:end], next, ""
}

func meta(next string) map[string]string { return map[string]string{"next_cursor": next} }

func (s *Server) list(form url.Values) (map[string]any, string) {
	types := map[string]bool{}
	for _, t := range strings.Split(cmp.Or(form.Get("types"), "public_channel"), ",") {
		switch t {
		case "public_channel", "private_channel", "im", "mpim":
			types[t] = true
		default:
			return nil, "invalid_types"
		}
	}
	exclude := form.Get("exclude_archived") == "true" || form.Get("exclude_archived") == "1"
	var out []map[string]any
	for _, c := range s.convs {
		if !types[c.Type] || exclude && c.Archived {
			continue
		}
		out = append(out, convJSON(c))
	}
	items, next, code := page(s, form, "list|"+form.Get("types"), out, 1000)
	if code != "" {
		return nil, code
	}
	return map[string]any{"channels": nonNil(items), "response_metadata": meta(next)}, ""
}

func convJSON(c *Conversation) map[string]any {
	m := map[string]any{"id": c.ID, "is_archived": c.Archived, "created": epoch.Unix(),
		"is_channel": c.Type == "public_channel", "is_group": c.Type == "private_channel",
		"is_im": c.Type == "im", "is_mpim": c.Type == "mpim", "is_private": c.Type != "public_channel"}
	if c.Type == "im" {
		m["user"] = c.User
	} else {
		m["name"] = c.Name
		m["is_member"] = c.Member
	}
	return m
}

func (s *Server) conversation(form url.Values) (*Conversation, string) {
	c := s.byID[form.Get("channel")]
	if c == nil {
		return nil, "channel_not_found"
	}
	if c.Type == "private_channel" && !c.Member {
		return nil, "channel_not_found"
	}
	return c, ""
}

// oldest reads the oldest argument: a ts, or 0 when absent.
func oldest(form url.Values) (int64, bool) {
	v := form.Get("oldest")
	if v == "" {
		return 0, true
	}
	sec, frac, _ := strings.Cut(v, ".")
	if _, err := strconv.ParseUint(sec, 10, 40); err != nil {
		return 0, false
	}
	if frac != "" {
		if _, err := strconv.ParseUint(frac, 10, 32); err != nil || len(frac) > 6 {
			return 0, false
		}
	}
	return micros(v), true
}

func (s *Server) history(form url.Values) (map[string]any, string) {
	c, code := s.conversation(form)
	if code != "" {
		return nil, code
	}
	after, ok := oldest(form)
	if !ok {
		return nil, "invalid_ts_oldest"
	}
	var out []map[string]any
	for i := len(c.Messages) - 1; i >= 0; i-- { // newest first
		m := c.Messages[i]
		if micros(m.TS) <= after {
			break
		}
		out = append(out, messageJSON(m, ""))
	}
	items, next, code := page(s, form, "history|"+c.ID+"|"+form.Get("oldest"), out, 999)
	if code != "" {
		return nil, code
	}
	return map[string]any{"messages": nonNil(items), "has_more": next != "", "response_metadata": meta(next)}, ""
}

func (s *Server) replies(form url.Values) (map[string]any, string) {
	c, code := s.conversation(form)
	if code != "" {
		return nil, code
	}
	ts := form.Get("ts")
	i := slices.IndexFunc(c.Messages, func(m Message) bool { return m.TS == ts })
	if i < 0 {
		return nil, "thread_not_found"
	}
	after, ok := oldest(form)
	if !ok {
		return nil, "invalid_ts_oldest"
	}
	parent := c.Messages[i]
	out := []map[string]any{messageJSON(parent, "")}
	for _, r := range parent.Replies {
		if micros(r.TS) > after {
			out = append(out, messageJSON(r, parent.TS))
		}
	}
	items, next, code := page(s, form, "replies|"+c.ID+"|"+ts+"|"+form.Get("oldest"), out, 999)
	if code != "" {
		return nil, code
	}
	return map[string]any{"messages": items, "has_more": next != "", "response_metadata": meta(next)}, ""
}

// messageJSON is a message as Slack shows it; parent is set for a reply.
func messageJSON(m Message, parent string) map[string]any {
	j := map[string]any{"type": "message", "ts": m.TS, "user": m.User, "text": m.Text}
	if parent != "" {
		j["thread_ts"] = parent
	}
	if len(m.Replies) > 0 {
		j["thread_ts"] = m.TS
		j["reply_count"] = len(m.Replies)
		j["latest_reply"] = m.Replies[len(m.Replies)-1].TS
	}
	if m.EditedTS != "" {
		j["edited"] = map[string]string{"user": m.User, "ts": m.EditedTS}
	}
	if m.Subtype != "" {
		j["subtype"] = m.Subtype
	}
	if m.Deleted {
		j["subtype"] = "tombstone"
		j["user"] = "USLACKBOT"
	}
	return j
}

func (s *Server) userInfo(form url.Values) (map[string]any, string) {
	u, ok := s.users[form.Get("user")]
	if !ok {
		return nil, "user_not_found"
	}
	return map[string]any{"user": u}, ""
}

func (s *Server) userList(form url.Values) (map[string]any, string) {
	all := make([]slack.User, 0, len(s.userIDs))
	for _, id := range s.userIDs {
		all = append(all, s.users[id])
	}
	items, next, code := page(s, form, "users", all, 1000)
	if code != "" {
		return nil, code
	}
	return map[string]any{"members": items, "response_metadata": meta(next)}, ""
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}
