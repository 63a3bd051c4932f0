package syncer

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strings"
	"syscall"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/oauthclient"
	"searchsvc/integrations/records"
	"searchsvc/integrations/vault"
	"searchsvc/storage"
)

// What a failed task does to its record and its queue.

// fail records a task's failure and reports whether the session must stop.
func (r *run) fail(hard context.Context, t QueuedTask, err error) (stop bool) {
	return r.failKeeping(hard, t, err, nil)
}

// failKeeping is fail that also stores the values the failed task kept
// (TaskResult.State: a feed's last status, the time its server said to
// ask again), in the same log line as the failure.
func (r *run) failKeeping(hard context.Context, t QueuedTask, err error, state map[string]string) (stop bool) {
	f := classify(err, r.s.displayName(r.rec.Integration), hard.Err() != nil)
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
		r.s.outcomesOf(r.rec.Integration).parked.Add(1)
		r.parked = true
		log.Debug("task parked")
		if errors.Is(err, storage.ErrFailed) {
			r.breakOn(err) // the store refuses writes: rest, don't spin
		}
		return true
	case failReauth:
		r.s.outcomesOf(r.rec.Integration).reauth.Add(1)
		r.reauth = true
		log.Warn("authorization refused; the record needs to be reconnected")
		ops = append(ops, setStatus(records.StatusNeedsReauth, f.msg))
		for _, q := range r.s.tasks.Find(taskIndexRecord, r.rec.ID) {
			ops = append(ops, r.s.tasks.Delete(q.ID))
		}
		stop = true
	case failGone:
		r.s.outcomesOf(r.rec.Integration).skipped.Add(1)
		log.Info("task skipped: the item is gone at the provider or cannot be fetched")
		ops = append(ops, r.dropTask(t)...)
	default:
		var retryOps []storage.Op
		retryOps, stop = r.retryOrDrop(t, f, err, now, log)
		ops = append(ops, retryOps...)
		ops = append(ops, setStatus(records.StatusError, f.msg))
		r.failed = true
	}
	keepOps, kept := r.keepOps(state, now)
	ops = append(ops, keepOps...)
	if err := r.s.commitFor(r.rec.ID, ops...); err != nil {
		r.breakOn(err)
		if !errors.Is(err, records.ErrNotFound) && !errors.Is(err, records.ErrCredentialsChanged) && !errors.Is(err, storage.ErrNotFound) {
			r.log.Error("record sync failure", "err", err)
		}
		return true
	}
	r.setKept(kept)
	return stop
}

// dropTask returns the ops that remove the finished task t: none for a
// task kept in memory (idle.go).
func (r *run) dropTask(t QueuedTask) []storage.Op {
	if r.mem[t.ID] {
		return nil
	}
	return []storage.Op{r.s.tasks.Delete(t.ID)}
}

// setKept makes kept, unless nil, the record's committed values.
func (r *run) setKept(kept map[string]string) {
	if kept != nil {
		r.mu.Lock()
		r.kept = kept
		r.mu.Unlock()
	}
}

// keepOps returns the ops that store what a failed task kept (its
// State), and the record's kept values once they are committed; none
// for an empty state.
func (r *run) keepOps(state map[string]string, now time.Time) ([]storage.Op, map[string]string) {
	if len(state) == 0 {
		return nil, nil
	}
	r.stageState(state)
	ops, kept, err := r.stateOps(now)
	r.mu.Lock()
	r.b.state = nil // the batch was flushed before the failure: only this
	r.mu.Unlock()
	if err != nil {
		r.log.Error("seal sync state", "err", err)
		return nil, nil
	}
	return ops, kept
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
// lastError: a sentence a person understands, safe to show, built from
// the failure's class, statuses and codes, never from a provider's text,
// a Go error's text or a token.
type failure struct {
	class      failClass
	msg        string
	retryAfter time.Duration
	drop       bool // do not retry at all
	bug        bool // a fault of this build, logged as an error
}

// retryOrDrop decides what becomes of task t after a failure of class
// f that is neither parked, for reauthorisation nor gone: dropped (a
// task this build cannot run, one the next sync runs again, one out of
// attempts) or retried after a backoff; stop says the run stops.
func (r *run) retryOrDrop(t QueuedTask, f failure, err error, now time.Time, log *slog.Logger) (ops []storage.Op, stop bool) {
	attempts, limit := t.Attempts+1, maxAttempts
	if f.class == failTemporary {
		limit = maxTemporaryAttempts
	}
	if f.drop {
		limit = 1
	}
	switch {
	case f.bug:
		// A task this build cannot run: never silent.
		r.s.outcomesOf(r.rec.Integration).dropped.Add(1)
		log.Error("task type not supported by this build; the record shows the error", "attempts", attempts)
		ops = append(ops, r.dropTask(t)...)
	case errors.Is(err, integrations.ErrNextSync):
		r.s.outcomesOf(r.rec.Integration).dropped.Add(1)
		log.Warn("task failed; the next sync runs it again")
		ops = append(ops, r.dropTask(t)...)
	case attempts >= limit:
		r.s.outcomesOf(r.rec.Integration).dropped.Add(1)
		log.Warn("task dropped", "attempts", attempts)
		ops = append(ops, r.dropTask(t)...)
	default:
		r.s.outcomesOf(r.rec.Integration).retried.Add(1)
		wait := max(f.retryAfter, backoff(attempts, r.s.rand))
		log.Warn("task failed; will retry", "attempts", attempts, "retry_in", wait)
		if r.mem[t.ID] {
			// A task kept in memory that must wait carries its
			// backoff from now on: it is stored.
			t.Attempts, t.NotBefore = attempts, now.Add(wait)
			ops = append(ops, r.s.tasks.Insert(t))
		} else {
			ops = append(ops, r.s.tasks.Update(t.ID, func(q *QueuedTask) error {
				q.Attempts, q.NotBefore = attempts, now.Add(wait)
				return nil
			}))
		}
		stop = true
	}
	return ops, stop
}

// classify sorts a task's (or an initialization's) error. name is the
// integration's display name ("Gmail"); shutdown says the task's context
// was cancelled because the service is stopping.
func classify(err error, name string, shutdown bool) failure {
	f := sortError(err, name, shutdown)
	if errors.Is(err, integrations.ErrNextSync) && (f.class == failTemporary || f.class == failPermanent) {
		f.drop, f.retryAfter = true, 0
		f.msg = strings.TrimSuffix(strings.TrimSuffix(f.msg, tryAgain), " It will be tried a few more times.") + " The next sync tries again."
	}
	return f
}

// tryAgain ends the message of a failure the sync retries by itself.
const tryAgain = " The sync will try again by itself."

// sortError is classify before ErrNextSync has its say.
func sortError(err error, name string, shutdown bool) failure {
	var (
		te  *oauthclient.TokenError
		ae  *integrations.APIError
		nc  *oauthclient.NotConfiguredError
		ve  *integrations.ValidationError
		ne  net.Error
		ua  x509.UnknownAuthorityError
		he  x509.HostnameError
		cie x509.CertificateInvalidError
	)
	reauth := failure{class: failReauth, msg: name + " refused the stored authorization. Connect it again to resume syncing."}
	unreachable := failure{class: failTemporary, msg: name + " could not be reached (network, name lookup or a timeout)." + tryAgain}
	switch {
	case shutdown && errors.Is(err, context.Canceled),
		errors.Is(err, records.ErrCredentialsChanged), errors.Is(err, records.ErrNotFound),
		errors.Is(err, storage.ErrFailed), errors.Is(err, storage.ErrClosed):
		return failure{class: failPark}
	case errors.Is(err, integrations.ErrReauthRequired), errors.Is(err, oauthclient.ErrNoRefreshToken), errors.Is(err, vault.ErrCannotOpen):
		return reauth
	case errors.Is(err, integrations.ErrSkip):
		return failure{class: failGone}
	case errors.As(err, &ve) && ve.Message != "":
		// The integration's own sentence, which knows better than a
		// status what went wrong (and whose 401 is one feed's, not
		// the record's authorization).
		return failure{class: failPermanent, msg: name + ": " + ve.Message + "."}
	case errors.As(err, &te):
		switch {
		case oauthclient.Revoked(te.Code), te.Code == "invalid_client", te.Code == "unauthorized_client",
			te.Status == 400, te.Status == 401:
			return reauth
		}
		return failure{class: failTemporary, retryAfter: te.RetryAfter,
			msg: fmt.Sprintf("%s's sign-in service did not renew the access (it answered %d).%s", name, te.Status, tryAgain)}
	case errors.As(err, &ae):
		if ae.Unauthorized() {
			return reauth
		}
		return apiFailure(ae, name)
	case errors.As(err, &nc):
		return failure{class: failTemporary,
			msg: "This server is not set up for " + name + ": the administrator must set " + nc.Var + "."}
	case errors.Is(err, vault.ErrUnknownKey):
		return failure{class: failTemporary,
			msg: "The stored credentials were sealed with a key this server no longer holds. The administrator must restore that key, or connect " + name + " again."}
	case errors.Is(err, integrations.ErrUnsupportedTask):
		return failure{class: failPermanent, drop: true, bug: true,
			msg: "This version of searchsvc cannot run a step of the " + name + " sync. This is a bug: please report it."}
	case errors.Is(err, errStoreContent):
		return failure{class: failTemporary, msg: "This server could not store the synced items (is its disk full?)." + tryAgain}
	case errors.Is(err, netguard.ErrPrivateAddress):
		return failure{class: failPermanent,
			msg: name + "'s address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true."}
	case errors.As(err, &ua):
		return failure{class: failPermanent,
			msg: name + "'s server presented a certificate signed by an unknown authority. Give its CA certificate or its fingerprint in the connection form."}
	case errors.As(err, &he):
		return failure{class: failPermanent, msg: name + "'s server presented a certificate for another name."}
	case errors.As(err, &cie):
		return failure{class: failPermanent, msg: name + "'s server presented a certificate that is expired or not valid."}
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, context.Canceled),
		errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET):
		return unreachable
	}
	return failure{class: failPermanent, msg: "A step of the " + name + " sync failed unexpectedly. It will be tried a few more times."}
}

// apiFailure sorts a provider API's refusal other than 401.
func apiFailure(ae *integrations.APIError, name string) failure {
	switch {
	case ae.Status == 429:
		return failure{class: failTemporary, retryAfter: ae.RetryAfter,
			msg: name + " asked the sync to slow down (too many requests)." + tryAgain}
	case ae.Temporary():
		return failure{class: failTemporary, retryAfter: ae.RetryAfter,
			msg: fmt.Sprintf("%s is having trouble at the moment (it answered %d).%s", name, ae.Status, tryAgain)}
	case ae.Status == 404 || ae.Status == 410:
		return failure{class: failGone}
	case ae.Status == 403:
		return failure{class: failPermanent,
			msg: name + " refused access (403). Check that the account still allows it, or connect it again."}
	}
	return failure{class: failPermanent,
		msg: fmt.Sprintf("%s refused a request of the sync (it answered %d). It will be tried a few more times.", name, ae.Status)}
}
