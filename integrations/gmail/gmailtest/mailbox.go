package gmailtest

import (
	"slices"
	"time"
)

// The mailbox's changes: new mail, mail out of date order, deletions, and
// the history Gmail keeps of them.

// historyBase is the history id of the mailbox before message 1; message
// seq of the first Options.Messages was added at historyBase+seq.
const historyBase = 1000

// Add delivers n new messages, newer than all others.
func (s *Server) Add(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.add()
	}
}

// AddDated delivers one new message dated date, which may be older than
// messages already listed (mail that arrives out of date order: its list
// position is by its date), and returns its seq.
func (s *Server) AddDated(date time.Time) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	seq := s.add()
	s.dates[seq] = date.UTC()
	return seq
}

func (s *Server) add() int {
	s.total++
	s.historyID++
	s.history = append(s.history, change{id: s.historyID, seq: s.total})
	s.order = nil
	return s.total
}

// Delete deletes message seq for good (as emptying the trash does): it
// leaves the list, messages.get answers 404, and history.list reports it
// in messagesDeleted.
func (s *Server) Delete(seq int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq < 1 || seq > s.total || s.deleted[seq] {
		return
	}
	s.deleted[seq] = true
	s.historyID++
	s.history = append(s.history, change{id: s.historyID, seq: seq, deleted: true})
	s.order = nil
}

// ExpireHistory forgets the history kept so far, as Gmail does after
// about a week: history.list from a history id older than the current
// one answers 404.
func (s *Server) ExpireHistory() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.history = nil
	s.oldest = s.historyID
}

// HistoryID returns the mailbox's current history id.
func (s *Server) HistoryID() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.historyID
}

// Counts returns the requests answered so far, failures included.
func (s *Server) Counts() Counts {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts
}

// date is the date of message seq; s.mu is held.
func (s *Server) date(seq int) time.Time {
	if d, ok := s.dates[seq]; ok {
		return d
	}
	return Date(seq)
}

// newer orders seqs as the list does: by date, then seq, newest first;
// s.mu is held.
func (s *Server) newer(a, b int) int {
	if c := s.date(b).Compare(s.date(a)); c != 0 {
		return c
	}
	return b - a
}

// listOrder returns the live seqs in list order; s.mu is held.
func (s *Server) listOrder() []int {
	if s.order == nil {
		s.order = make([]int, 0, s.total-len(s.deleted))
		for seq := s.total; seq >= 1; seq-- {
			if !s.deleted[seq] {
				s.order = append(s.order, seq)
			}
		}
		if len(s.dates) > 0 {
			slices.SortFunc(s.order, s.newer)
		}
	}
	return s.order
}

// Total returns how many messages the mailbox holds.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}
