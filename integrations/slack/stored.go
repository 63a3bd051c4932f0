package slack

import (
	"fmt"
	"slices"
	"strings"
)

// What the sync knows of the stored messages: the provider ids of the
// record's items (Env.Stored), read once per instance into an index by
// conversation, thread and ts, and kept up to date with what the
// instance adds and removes.

// threadChanged reports whether the replies stored under parent differ
// from what Slack says of the thread.
func (s *syncer) threadChanged(channel string, parent Message) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.conv(channel).replies[parent.TS]
	if len(stored) != parent.ReplyCount {
		return true
	}
	latest := ""
	for ts := range stored {
		if latest == "" || compareTS(ts, latest) > 0 {
			latest = ts
		}
	}
	return latest != parent.LatestReply
}

// windowStart is the oldest argument of a conversation's history: the ts
// before its newest RecheckWindow stored messages, "" when it has fewer.
func (s *syncer) windowStart(channel string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ci := s.convs[channel]
	if ci == nil || len(ci.top) <= RecheckWindow {
		return ""
	}
	all := make([]string, 0, len(ci.top))
	for ts := range ci.top {
		all = append(all, ts)
	}
	slices.SortFunc(all, compareTS)
	return all[len(all)-RecheckWindow-1]
}

// missing returns the stored messages of channel within the range from
// (exclusive, or inclusive) to before (exclusive; "" for no bound) that
// are not in seen, and forgets them and their replies.
func (s *syncer) missing(channel, from string, inclusive bool, before string, seen map[string]bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	ci := s.conv(channel)
	var out []string
	for ts := range ci.top {
		if seen[ts] {
			continue
		}
		if from != "" {
			c := compareTS(ts, from)
			if c < 0 || c == 0 && !inclusive {
				continue
			}
		}
		if before != "" && compareTS(ts, before) >= 0 {
			continue
		}
		out = append(out, s.dropLocked(channel, "", ts, "")...)
		for rts := range ci.replies[ts] {
			out = append(out, s.dropLocked(channel, ts, rts, "")...)
		}
	}
	return out
}

// drop forgets the stored versions of a message other than keep, and
// returns them.
func (s *syncer) drop(channel, thread, ts, keep string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dropLocked(channel, thread, ts, keep)
}

func (s *syncer) dropLocked(channel, thread, ts, keep string) []string {
	ci := s.conv(channel)
	m := ci.top
	if thread != "" {
		m = ci.replies[thread]
	}
	var out, kept []string
	for _, pid := range m[ts] {
		if pid == keep {
			kept = append(kept, pid)
		} else {
			out = append(out, pid)
		}
	}
	switch {
	case len(kept) > 0:
		m[ts] = kept
	case m != nil:
		delete(m, ts)
	}
	return out
}

// add notes a provider id stored or about to be.
func (s *syncer) add(pid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addLocked(pid)
}

func (s *syncer) addLocked(pid string) {
	channel, thread, ts, _, ok := parseProviderID(pid)
	if !ok {
		return
	}
	ci := s.conv(channel)
	if thread == "" {
		if !slices.Contains(ci.top[ts], pid) {
			ci.top[ts] = append(ci.top[ts], pid)
		}
		return
	}
	if ci.replies[thread] == nil {
		ci.replies[thread] = map[string][]string{}
	}
	if !slices.Contains(ci.replies[thread][ts], pid) {
		ci.replies[thread][ts] = append(ci.replies[thread][ts], pid)
	}
}

// conv returns the index of channel, made if needed; s.mu is held.
func (s *syncer) conv(channel string) *convIndex {
	if s.convs == nil {
		s.convs = map[string]*convIndex{}
	}
	ci := s.convs[channel]
	if ci == nil {
		ci = &convIndex{top: map[string][]string{}, replies: map[string]map[string][]string{}}
		s.convs[channel] = ci
	}
	return ci
}

// load reads the stored provider ids once per instance.
func (s *syncer) load() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.loaded {
		return nil
	}
	if s.stored != nil {
		pids, err := s.stored()
		if err != nil {
			return fmt.Errorf("slack: read stored items: %w", err)
		}
		for _, pid := range pids {
			s.addLocked(pid)
		}
	}
	s.loaded = true
	return nil
}

// providerID is a message's provider id (see TaskListConversations).
func providerID(channel, thread, ts, edited string) string {
	var b strings.Builder
	b.WriteString(channel)
	if thread != "" {
		b.WriteString("/" + thread)
	}
	b.WriteString("/" + ts)
	if edited != "" {
		b.WriteString("@" + edited)
	}
	return b.String()
}

// parseProviderID splits a provider id of providerID's; ok is false for
// anything else.
func parseProviderID(pid string) (channel, thread, ts, edited string, ok bool) {
	base, edited, hasEdit := strings.Cut(pid, "@")
	if hasEdit && !validTS(edited, false) {
		return "", "", "", "", false
	}
	parts := strings.Split(base, "/")
	switch len(parts) {
	case 2:
		channel, ts = parts[0], parts[1]
	case 3:
		channel, thread, ts = parts[0], parts[1], parts[2]
		if !validTS(thread, false) {
			return "", "", "", "", false
		}
	default:
		return "", "", "", "", false
	}
	if !validID(channel) || !validTS(ts, false) {
		return "", "", "", "", false
	}
	return channel, thread, ts, edited, true
}

// compareTS orders two valid ts by time.
func compareTS(a, b string) int {
	as, af, _ := strings.Cut(a, ".")
	bs, bf, _ := strings.Cut(b, ".")
	if c := len(as) - len(bs); c != 0 {
		return c
	}
	if c := strings.Compare(as, bs); c != 0 {
		return c
	}
	af, bf = strings.TrimRight(af, "0"), strings.TrimRight(bf, "0")
	return strings.Compare(af, bf)
}
