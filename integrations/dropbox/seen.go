package dropbox

import (
	"crypto/sha256"
	"encoding/base64"
	"strconv"
)

// The seen set of a full listing over stored items: see stateSeenPages.

// seenPages returns how many pages of a full listing are kept.
func (s *syncer) seenPages() int {
	n, err := strconv.Atoi(s.state(stateSeenPages))
	if err != nil || n < 0 {
		return 0
	}
	return min(n, maxSeenPages)
}

// forgetSeen sets, in state, every key of a full listing to "".
func (s *syncer) forgetSeen(state map[string]string) {
	for k := range s.seenPages() {
		state[seenKey(k)] = ""
	}
	state[stateSeenPages] = ""
}

// seenHash is a provider id's short hash in a page's seen key.
func seenHash(pid string) []byte {
	sum := sha256.Sum256([]byte(pid))
	return sum[:seenHashLen]
}

// decodeSeen reads a page's seen key; garbage reads as nothing seen,
// which only keeps stored items a little longer.
func decodeSeen(v string) []byte {
	b, err := base64.RawStdEncoding.DecodeString(v)
	if err != nil || len(b)%seenHashLen != 0 {
		return nil
	}
	return b
}

// storedCount returns how many provider ids are stored.
func (s *syncer) storedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, pids := range s.byID {
		n += len(pids)
	}
	return n
}

// unseen returns the stored provider ids whose hash is not in seen, and
// forgets them.
func (s *syncer) unseen(seen []byte) []string {
	set := make(map[string]bool, len(seen)/seenHashLen)
	for i := 0; i+seenHashLen <= len(seen); i += seenHashLen {
		set[string(seen[i:i+seenHashLen])] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, pids := range s.byID {
		for _, pid := range pids {
			if !set[string(seenHash(pid))] {
				out = append(out, pid)
			}
		}
	}
	for _, pid := range out {
		s.dropLocked(pid)
	}
	return out
}
