package sync

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// What a failed task does to its record and its queue.

// fail records a task's failure and reports whether the session must stop.
func (r *run) fail(hard context.Context, t QueuedTask, err error) (stop bool) {
	f := classify(err, r.rec.Integration, hard.Err() != nil)
	f.msg = explained(err, f.msg)
	now := r.s.now().UTC()
	log := r.log.With("task", t.Type, "task_id", t.ID, "err", err)
	r.mu.Lock()
	prev := r.sealed
	r.mu.Unlock()
	setStatus := func(status, msg string) storage.Op {
		return r.s.records.FailureOp(r.rec.ID, status, msg, prev, now)
	}
	var ops []storage.Op
	switch f.class {
	case failPark:
		r.s.outcomes.parked.Add(1)
		log.Debug("task parked")
		if errors.Is(err, storage.ErrFailed) {
			r.broken = true // the store refuses writes: rest, don't spin
		}
		return true
	case failReauth:
		r.s.outcomes.reauth.Add(1)
		log.Warn("authorization refused; the record needs to be reconnected")
		ops = append(ops, setStatus(records.StatusNeedsReauth, f.msg))
		for _, q := range r.s.tasks.Find(taskIndexRecord, r.rec.ID) {
			ops = append(ops, r.s.tasks.Delete(q.ID))
		}
		stop = true
	case failGone:
		r.s.outcomes.skipped.Add(1)
		log.Info("task skipped: the item is gone at the provider or cannot be fetched")
		ops = append(ops, r.s.tasks.Delete(t.ID))
	default:
		attempts, limit := t.Attempts+1, maxAttempts
		if f.class == failTemporary {
			limit = maxTemporaryAttempts
		}
		if f.drop {
			limit = 1
		}
		if attempts >= limit {
			r.s.outcomes.dropped.Add(1)
			log.Warn("task dropped", "attempts", attempts)
			ops = append(ops, r.s.tasks.Delete(t.ID))
		} else {
			r.s.outcomes.retried.Add(1)
			wait := max(f.retryAfter, backoff(attempts, r.s.rand))
			log.Warn("task failed; will retry", "attempts", attempts, "retry_in", wait)
			ops = append(ops, r.s.tasks.Update(t.ID, func(q *QueuedTask) error {
				q.Attempts, q.NotBefore = attempts, now.Add(wait)
				return nil
			}))
			stop = true
		}
		ops = append(ops, setStatus(records.StatusError, f.msg))
	}
	if err := r.s.commitFor(r.rec.ID, ops...); err != nil {
		r.broken = true
		if !errors.Is(err, records.ErrNotFound) && !errors.Is(err, records.ErrCredentialsChanged) && !errors.Is(err, storage.ErrNotFound) {
			r.log.Error("record sync failure", "err", err)
		}
		return true
	}
	return stop
}

type failClass int

const (
	failPark      failClass = iota // shutdown, or the record changed: leave the task as it is
	failReauth                     // the provider refused the authorization
	failTemporary                  // 429, 5xx, network: retry after a backoff
	failPermanent                  // retry a few times, then drop
	failGone                       // the item went away at the provider, or ErrSkip: drop the task
)

// failure is what classify makes of a task's error. msg is the record's
// lastError: a short sentence safe to show the user, built from statuses
// and codes, never from a provider's text or a token.
type failure struct {
	class      failClass
	msg        string
	retryAfter time.Duration
	drop       bool // do not retry at all
}

// classify sorts a task's (or an initialization's) error. shutdown says
// the task's context was cancelled because the service is stopping.
func classify(err error, domain string, shutdown bool) failure {
	var (
		te *integrations.TokenError
		ae *integrations.APIError
		nc *integrations.NotConfiguredError
		ne net.Error
	)
	reauth := failure{class: failReauth, msg: domain + " refused the stored authorization; connect it again"}
	unreachable := failure{class: failTemporary, msg: "could not reach " + domain + "; will retry"}
	switch {
	case shutdown && errors.Is(err, context.Canceled),
		errors.Is(err, records.ErrCredentialsChanged), errors.Is(err, records.ErrNotFound),
		errors.Is(err, storage.ErrFailed), errors.Is(err, storage.ErrClosed):
		return failure{class: failPark}
	case errors.Is(err, integrations.ErrReauthRequired), errors.Is(err, integrations.ErrNoRefreshToken), errors.Is(err, vault.ErrCannotOpen):
		return reauth
	case errors.Is(err, integrations.ErrSkip):
		return failure{class: failGone}
	case errors.As(err, &te):
		switch {
		case integrations.Revoked(te.Code), te.Code == "invalid_client", te.Code == "unauthorized_client",
			te.Status == 400, te.Status == 401:
			return reauth
		}
		return failure{class: failTemporary, retryAfter: te.RetryAfter,
			msg: fmt.Sprintf("%s's token endpoint answered %d; will retry", domain, te.Status)}
	case errors.As(err, &ae):
		switch {
		case ae.Unauthorized():
			return reauth
		case ae.Temporary():
			return failure{class: failTemporary, retryAfter: ae.RetryAfter,
				msg: fmt.Sprintf("%s answered %d; will retry", domain, ae.Status)}
		case ae.Status == 404 || ae.Status == 410:
			return failure{class: failGone}
		}
		return failure{class: failPermanent, msg: fmt.Sprintf("%s answered %d", domain, ae.Status)}
	case errors.As(err, &nc):
		return failure{class: failTemporary, msg: nc.Error() + " on this server"}
	case errors.Is(err, vault.ErrUnknownKey):
		return failure{class: failTemporary, msg: "the stored credentials were sealed with a key this server does not hold"}
	case errors.Is(err, integrations.ErrUnsupportedTask):
		return failure{class: failPermanent, drop: true, msg: domain + " cannot sync yet"}
	case errors.Is(err, errStoreContent):
		return failure{class: failTemporary, msg: "could not store the synced items on this server; will retry"}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return unreachable
	}
	return failure{class: failPermanent, msg: "a sync step with " + domain + " failed"}
}
