package sessions

import (
	"errors"
	"net/netip"
	"time"

	"searchsvc/httpx"
	"searchsvc/storage"
	"searchsvc/storage/uuid"
)

// Validate checks the session with id for a request from ip, for auth's
// Require between reading the cookie and looking up the user, in order:
//
//   - An id that is not a canonical UUID is never looked up; it and an
//     unknown id give ErrInvalid.
//   - A session past its expiresAt, or idle for longer than IdleTimeout (by
//     its in-memory lastAccessedAt), is deleted: ErrExpired.
//   - An address outside the session's creation /24 (IPv4) or /64 (IPv6) is
//     logged as suspicious; with BindIP the session is deleted: ErrInvalid.
//
// Otherwise lastAccessedAt becomes now in memory only, and with Sliding,
// when less than RenewThreshold is left, expiresAt becomes now plus MaxAge,
// durably, and renewed is true so the caller sends the cookie again (a
// renewal that would extend expiresAt by less than TouchInterval is
// skipped, so a threshold above MaxAge cannot cost a write per request). The
// common case, a valid session that needs no renewal, writes nothing; it
// computes the HMAC that finds the record (the id is never stored) and
// opens the record's sealed part only the first time the session is met,
// and then keeps the HMAC by id (keyOf), so that later requests of the
// session compute none.
func (m *Manager) Validate(id string, ip netip.Addr) (s Session, renewed bool, err error) {
	if !uuid.Valid(id) {
		return Session{}, false, ErrInvalid
	}
	key, cached := m.cachedKey(id)
	if !cached {
		key = m.key(id)
	}
	r, ok := m.tab.Get(key)
	if !ok {
		return Session{}, false, ErrInvalid
	}
	key = r.ID // the record's own string, which entries share
	e := m.lookup(key)
	s, err = m.openCached(r, e)
	if err != nil {
		m.log.Error("session record does not open", "user_id", r.UserID, "err", err)
		return Session{}, false, ErrInvalid
	}
	now := m.cfg.Now()
	last := s.LastAccessedAt
	if e != nil {
		if n := e.last.Load(); n > last.UnixNano() {
			last = time.Unix(0, n)
		}
	}
	if now.After(s.ExpiresAt) {
		m.expire(key, &s, "expired")
		return Session{}, false, ErrExpired
	}
	if now.Sub(last) > m.cfg.IdleTimeout {
		m.expire(key, &s, "idle")
		return Session{}, false, ErrExpired
	}
	if !m.addressOK(key, &s, e, ip) {
		return Session{}, false, ErrInvalid
	}
	e = m.keepOpened(key, e, &s, cached)
	e.touch(now)
	if now.After(last) {
		last = now
	}
	s.LastAccessedAt = last.UTC()

	if !m.cfg.Sliding || s.ExpiresAt.Sub(now) >= m.cfg.RenewThreshold {
		return s, false, nil
	}
	return m.renew(key, e, s, now)
}

// keepOpened keeps the opened secret fields of s, the session under key,
// in memory: in e, its entry (made when nil, and returned), and in the
// cache of opened keys unless id's key came from there.
func (m *Manager) keepOpened(key string, e *entry, s *Session, cached bool) *entry {
	if e == nil {
		e = m.entry(key)
		f := &secretFields{ID: s.ID, CSRFToken: s.CSRFToken, IPAddress: s.IPAddress, UserAgent: s.UserAgent,
			DeviceName: s.Metadata.DeviceName, Location: s.Metadata.Location}
		e.opened.Store(f)
		m.remember(key, f)
	} else if !cached {
		if f := e.opened.Load(); f != nil {
			m.remember(key, f)
		}
	}
	return e
}

// renew moves the expiry of s, the session under key with entry e, to
// now plus MaxAge, when that gains enough to be worth a write; it answers
// as Validate does.
func (m *Manager) renew(key string, e *entry, s Session, now time.Time) (Session, bool, error) {
	exp := toSecond(now.Add(m.cfg.MaxAge))
	// A renewal that gains less than the renewal step is not worth a
	// write. With RenewThreshold below MaxAge a renewal gains at least
	// MaxAge-RenewThreshold and the next one waits as long, so writes are
	// bounded by the settings; the step matters when RenewThreshold >=
	// MaxAge, which would otherwise cost a write on every request. It
	// never exceeds a quarter of MaxAge, so that a configured renewal of a
	// short-lived session (SESSION_MAX_AGE of seconds) does renew.
	if exp.Sub(s.ExpiresAt) < min(m.cfg.TouchInterval, m.cfg.MaxAge/4) {
		return s, false, nil
	}
	// One renewal per session at a time: concurrent requests of the same
	// session would only write the same thing again.
	if !e.renewing.CompareAndSwap(false, true) {
		return s, false, nil
	}
	defer e.renewing.Store(false)
	err := m.store.Commit(m.tab.Update(key, func(r *record) error {
		r.Expires = secs(exp)
		// The write is made anyway: let lastAccessedAt ride along.
		if n := secs(now); n > r.Accessed {
			r.Accessed = n
		}
		return nil
	}))
	switch {
	case errors.Is(err, storage.ErrNotFound): // deleted meanwhile
		return Session{}, false, ErrInvalid
	case err != nil:
		// The session is still valid until its old expiry; serve the
		// request and try again on the next one.
		m.log.Error("cannot renew session", "user_id", s.UserID, "session_ref", Ref(s.ID), "err", err)
		return s, false, nil
	}
	s.ExpiresAt = exp
	return s, true, nil
}

// expire deletes a session met past its expiry or idle timeout. The request
// is refused whether or not the delete is written: the session stays
// expired, and the next request, Cleanup or compaction removes it.
func (m *Manager) expire(key string, s *Session, reason string) {
	err := m.store.Commit(m.tab.DeleteIfExists(key, nil))
	if err != nil {
		m.log.Error("cannot delete expired session", "user_id", s.UserID, "session_ref", Ref(s.ID), "reason", reason, "err", err)
		return
	}
	m.forget(key)
	m.log.Info("session expired", "user_id", s.UserID, "session_ref", Ref(s.ID), "reason", reason)
}

// addressOK checks ip against the address s was created from. A mismatch
// (outside the same /24 or /64) is logged as suspicious, once per foreign
// network, since mobile clients move; with BindIP the session is deleted
// and addressOK reports false.
func (m *Manager) addressOK(key string, s *Session, e *entry, ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	var created netip.Addr
	if s.IPAddress != "" {
		created, _ = netip.ParseAddr(s.IPAddress) // written by Create, so valid
	}
	if ip == created || httpx.SameNetwork(ip, created) {
		return true
	}
	if m.cfg.BindIP {
		m.log.Warn("suspicious session address", "user_id", s.UserID, "session_ref", Ref(s.ID),
			"ip", ip, "created_ip", s.IPAddress, "action", "session deleted")
		err := m.store.Commit(m.tab.DeleteIfExists(key, nil))
		if err != nil {
			m.log.Error("cannot delete session", "user_id", s.UserID, "session_ref", Ref(s.ID), "err", err)
		} else {
			m.forget(key)
		}
		return false
	}
	if e == nil {
		e = m.entry(key)
	}
	network := foreignNetwork(ip)
	e.mu.Lock()
	seen := e.warnedAny && e.warned == network
	e.warned, e.warnedAny = network, true
	e.mu.Unlock()
	if !seen {
		m.log.Warn("suspicious session address", "user_id", s.UserID, "session_ref", Ref(s.ID),
			"ip", ip, "created_ip", s.IPAddress, "action", "logged")
	}
	return true
}

// foreignNetwork is the /24 or /64 of ip, the unit of the address check.
func foreignNetwork(ip netip.Addr) netip.Prefix {
	bits := 64
	if ip.Is4() {
		bits = 24
	}
	p, _ := ip.Prefix(bits) // the zero Prefix for the zero Addr
	return p
}
