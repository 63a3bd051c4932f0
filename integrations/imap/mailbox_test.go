package imap

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
)

// TestTaskError: each failure a sync meets gets its sentence, and needs
// the user (ErrReauthRequired) only for a refused password or a
// certificate no longer trusted; the errors the scheduler retries stay in
// the chain.
func TestTaskError(t *testing.T) {
	refused := func(text string, err error) error { return &ServerError{Status: "NO", Text: text, err: err} }
	for _, tc := range []struct {
		name    string
		err     error
		msg     string // "" means the error is returned as it is
		reauth  bool
		netErr  bool // a net.Error stays in the chain (retried as a network failure)
		wrapped error
	}{
		{"password", refused("[AUTHENTICATIONFAILED] Authentication failed.", ErrLoginRejected), msgLoginRejected, true, false, ErrLoginRejected},
		{"password, no code", refused("Login failed", ErrLoginRejected), msgLoginRejected, true, false, ErrLoginRejected},
		{"login unavailable", refused("[UNAVAILABLE] Try again later", ErrLoginRejected), msgLoginLater, false, false, ErrLoginRejected},
		{"login in use", refused("[inuse] Mailbox locked", ErrLoginRejected), msgLoginLater, false, false, ErrLoginRejected},
		{"pin", fmt.Errorf("imap: connect: %w", ErrPinMismatch), msgCertificate, true, false, ErrPinMismatch},
		{"unknown authority", fmt.Errorf("imap: connect: %w", x509.UnknownAuthorityError{}), msgCertificate, true, false, nil},
		{"private", fmt.Errorf("imap: connect: %w", netguard.ErrPrivateAddress), msgPrivate, false, false, netguard.ErrPrivateAddress},
		{"read deadline", fmt.Errorf("imap: fetch: %w", &net.OpError{Op: "read", Err: os.ErrDeadlineExceeded}), msgTimeout, false, true, os.ErrDeadlineExceeded},
		{"login deadline", fmt.Errorf("imap: %w", context.DeadlineExceeded), msgTimeout, false, true, context.DeadlineExceeded},
		{"cut", fmt.Errorf("imap: fetch: %w", io.ErrUnexpectedEOF), msgCut, false, false, io.ErrUnexpectedEOF},
		{"reset", fmt.Errorf("imap: fetch: %w", &net.OpError{Op: "read", Err: syscall.ECONNRESET}), msgCut, false, true, syscall.ECONNRESET},
		{"refused connection", fmt.Errorf("imap: connect: %w", &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}), msgConnect, false, true, syscall.ECONNREFUSED},
		{"no such host", fmt.Errorf("imap: connect: %w", &net.DNSError{Err: "no such host", IsNotFound: true}), msgConnect, false, true, nil},
		{"protocol", fmt.Errorf("imap: search: %w: 9 UIDs for 3 messages", ErrProtocol), msgProtocol, false, false, ErrProtocol},
		{"line too long", ErrLineTooLong, msgProtocol, false, false, ErrLineTooLong},
		{"command refused", refused("Search failed", ErrRefused), msgRefused, false, false, ErrRefused},
		{"other", errors.New("something else"), "", false, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &mailbox{}
			err := m.taskError(context.Background(), tc.err)
			var ee *integrations.ExplainedError
			switch {
			case tc.msg == "" && err != tc.err:
				t.Fatalf("got %v, want the error as it is", err)
			case tc.msg != "" && (!errors.As(err, &ee) || ee.Message != tc.msg):
				t.Fatalf("got %v, want the sentence %q", err, tc.msg)
			}
			if got := errors.Is(err, integrations.ErrReauthRequired); got != tc.reauth {
				t.Errorf("ErrReauthRequired: got %v, want %v", got, tc.reauth)
			}
			var ne net.Error
			if got := errors.As(err, &ne); got != tc.netErr {
				t.Errorf("a net.Error in the chain: got %v, want %v", got, tc.netErr)
			}
			if tc.wrapped != nil && !errors.Is(err, tc.wrapped) {
				t.Errorf("got %v, want it to wrap %v", err, tc.wrapped)
			}
		})
	}

	// A shutdown's cancellation stays as it is, so the task is parked.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	in := fmt.Errorf("imap: fetch: %w", context.Canceled)
	if err := (&mailbox{}).taskError(ctx, in); err != in {
		t.Errorf("cancelled: got %v, want the error as it is", err)
	}
}
