package slack

import (
	"slices"
	"strconv"
	"strings"
)

// What a workspace keeps between syncs (Env.State), each under a key of
// its own so that a task writes only what it changed:
//
//   - "win.<channel>": where the next history read of the conversation
//     starts (oldest, exclusive): the ts before its newest RecheckWindow
//     messages of any kind, joins and file-only posts included, as the
//     last complete read saw them. So a conversation whose messages are
//     mostly joins is not read from its first message at every sync, and
//     a second sync with nothing new reads one page.
//   - "convs.<page>" and "convs": the conversations each page of the
//     listing that runs listed, and how many pages it read. At its last
//     page the items of the conversations stored and no longer listed
//     (left, archived, deleted) are removed and the keys forgotten.

const (
	stateConvPages = "convs"
	// maxConvPages bounds the pages of a listing the keys are read for.
	maxConvPages = 10000
)

func windowKey(channel string) string { return "win." + channel }
func convsKey(n int) string           { return "convs." + strconv.Itoa(n) }

// value reads a kept value; "" when none is kept.
func (s *syncer) value(key string) string {
	if s.state == nil {
		return ""
	}
	return s.state(key)
}

// oldest is where a conversation's history read starts: its kept window
// when a complete read left one, else the ts before its newest
// RecheckWindow stored messages (what a workspace synced before windows
// were kept reads once).
func (s *syncer) oldest(channel string) string {
	if v := s.value(windowKey(channel)); v != "" && validTS(v, false) {
		return v
	}
	return s.windowStart(channel)
}

// windowMark returns the ts before the newest RecheckWindow messages of a
// history read, given a page of it (newest first) and how many messages
// the pages before it held; "" when the window ends on a later page.
func windowMark(page []Message, before int) string {
	if before+len(page) <= RecheckWindow || before > RecheckWindow {
		return ""
	}
	ts := make([]string, 0, len(page))
	for _, m := range page {
		ts = append(ts, m.TS)
	}
	slices.SortFunc(ts, func(a, b string) int { return compareTS(b, a) })
	return ts[RecheckWindow-before]
}

// convPages returns the number of pages the listing that runs kept.
func (s *syncer) convPages() int {
	n, err := strconv.Atoi(s.value(stateConvPages))
	if err != nil || n < 0 {
		return 0
	}
	return min(n, maxConvPages)
}

// listedState is the state a listing's page n (ids its conversations)
// leaves while more pages follow: its ids and the count of pages, and, at
// the first page, the keys of a listing that started over forgotten.
func (s *syncer) listedState(n int, ids []string) map[string]string {
	state := map[string]string{convsKey(n): strings.Join(ids, ","), stateConvPages: strconv.Itoa(n + 1)}
	if n == 0 {
		for k := 1; k < s.convPages(); k++ {
			state[convsKey(k)] = ""
		}
	}
	return state
}

// unlisted removes the conversations stored and listed by no page of the
// listing (n pages before the last one, whose ids are ids), and returns
// their items' provider ids and the state that forgets the listing's keys
// and their windows.
func (s *syncer) unlisted(n int, ids []string) ([]string, map[string]string) {
	state := map[string]string{stateConvPages: ""}
	listed := map[string]bool{}
	for _, id := range ids {
		listed[id] = true
	}
	for k := range max(n, s.convPages()) {
		if k < n {
			for id := range strings.SplitSeq(s.value(convsKey(k)), ",") {
				listed[id] = true
			}
		}
		state[convsKey(k)] = ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var removed []string
	for channel, ci := range s.convs {
		if listed[channel] {
			continue
		}
		for _, pids := range ci.top {
			removed = append(removed, pids...)
		}
		for _, replies := range ci.replies {
			for _, pids := range replies {
				removed = append(removed, pids...)
			}
		}
		delete(s.convs, channel)
		state[windowKey(channel)] = ""
	}
	return removed, state
}
