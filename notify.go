package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// notifyWriteTimeout bounds one datagram to systemd. A full socket queue
// should not stall the caller: a lost READY=1 shows up as a start timeout,
// a lost WATCHDOG=1 is covered by the next one.
const notifyWriteTimeout = time.Second

// notifier is a minimal sd_notify(3) client: it sends state changes and
// watchdog keep-alives to the service manager over the unix datagram socket
// named by $NOTIFY_SOCKET. It uses the standard library only.
//
// Without $NOTIFY_SOCKET (not started by systemd, or Type= is not notify)
// every method is a no-op, as is every method of a nil *notifier.
type notifier struct {
	addr *net.UnixAddr // nil: no service manager to talk to
	err  error         // why $NOTIFY_SOCKET could not be used, reported by Ready

	// watchdog is the interval between keep-alives, half of WATCHDOG_USEC;
	// zero when systemd runs no watchdog for this process.
	watchdog time.Duration

	// log receives what cannot be returned (failed keep-alives, health
	// changes). It discards by default; run sets it to its logger.
	log *slog.Logger

	// newTicker is time.NewTicker in production; tests drive the ticks.
	newTicker func(time.Duration) (<-chan time.Time, func())
}

// newNotifier reads $NOTIFY_SOCKET, $WATCHDOG_USEC and $WATCHDOG_PID through
// getenv. NOTIFY_SOCKET is an absolute path or, starting with "@", a name in
// the abstract namespace. The watchdog is ignored when WATCHDOG_PID names
// another process (the variables were inherited, not meant for us) or when
// WATCHDOG_USEC is not a positive number of microseconds.
func newNotifier(getenv func(string) string) *notifier {
	n := &notifier{
		log: slog.New(slog.DiscardHandler),
		newTicker: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		},
	}
	sock := getenv("NOTIFY_SOCKET")
	switch {
	case sock == "":
		return n
	case strings.HasPrefix(sock, "/"), len(sock) > 1 && sock[0] == '@':
		// Go maps a leading "@" to the abstract namespace's leading NUL.
		n.addr = &net.UnixAddr{Name: sock, Net: "unixgram"}
	default:
		n.err = fmt.Errorf("NOTIFY_SOCKET %q: not an absolute path or @abstract name", sock)
		return n
	}
	if pid := getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return n
	}
	if usec, err := strconv.ParseInt(getenv("WATCHDOG_USEC"), 10, 64); err == nil && usec > 0 {
		// systemd's advice (sd_watchdog_enabled(3)): ping at half the timeout.
		n.watchdog = time.Duration(usec) * time.Microsecond / 2
	}
	return n
}

// Ready tells systemd that start-up is complete: configuration is valid and
// the listener is open. With Type=notify, units ordered after searchsvc start
// only then, and `systemctl start` returns only then.
func (n *notifier) Ready() error {
	if n != nil && n.err != nil {
		return n.err
	}
	return n.send("READY=1")
}

// startExtension is the time each EXTEND_TIMEOUT_USEC gives a start
// still under way, asked again every half of it; maxStartExtensions
// bounds how often, so a start that hangs still times out (after about
// 30 minutes).
const (
	startExtension     = 30 * time.Second
	maxStartExtensions = 120
)

// ExtendStart asks systemd for startExtension more start-up time at once
// and every startExtension/2 until ctx is done (the start is over) or it
// has asked maxStartExtensions times. A start that recovers the stores
// after a crash, finishes a compaction a crash cut short or moves an
// older data directory's texts into packs can outlast systemd's
// TimeoutStartSec (90 s by default) on an SD card; killed then, it would
// begin again from the start. Without a service manager it returns at
// once.
func (n *notifier) ExtendStart(ctx context.Context) {
	if n == nil || n.addr == nil {
		return
	}
	ticks, stop := n.newTicker(startExtension / 2)
	defer stop()
	msg := "EXTEND_TIMEOUT_USEC=" + strconv.FormatInt(startExtension.Microseconds(), 10)
	for i := range maxStartExtensions {
		if err := n.send(msg); err != nil {
			n.log.Warn("start-up time extension not sent", "err", err)
		}
		if i == maxStartExtensions-1 {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// Stopping tells systemd that a graceful shutdown has begun.
func (n *notifier) Stopping() error {
	return n.send("STOPPING=1")
}

// Status sets the one-line status shown by `systemctl status`. Line breaks
// are replaced, since each line of a notification is a separate assignment.
func (n *notifier) Status(s string) error {
	s = strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
	return n.send("STATUS=" + s)
}

// Watchdog sends WATCHDOG=1 at once and then every WATCHDOG_USEC/2 for as
// long as healthy() reports true, until ctx is done. An unhealthy service
// stops pinging, and so does one whose healthy() hangs: after WatchdogSec=
// systemd kills it and Restart=on-failure starts it again. Send errors are
// logged and pinging goes on. Without a watchdog it returns at once.
func (n *notifier) Watchdog(ctx context.Context, healthy func() bool) {
	if n == nil || n.addr == nil || n.watchdog <= 0 {
		return
	}
	ticks, stop := n.newTicker(n.watchdog)
	defer stop()
	wasHealthy := true
	for {
		ok := healthy()
		switch {
		case ok:
			if err := n.send("WATCHDOG=1"); err != nil {
				n.log.Warn("watchdog keep-alive not sent", "err", err)
			}
			if !wasHealthy {
				n.log.Info("watchdog: healthy again, keep-alives resumed")
			}
		case wasHealthy:
			n.log.Error("watchdog: unhealthy, keep-alives withheld; systemd restarts the service after WatchdogSec",
				"interval", n.watchdog.String())
		}
		wasHealthy = ok
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
	}
}

// send writes one notification datagram. Each call uses a fresh socket, as
// sd_notify(3) does, so there is no connection to keep or lose.
func (n *notifier) send(state string) error {
	if n == nil || n.addr == nil {
		return nil
	}
	c, err := net.DialUnix("unixgram", nil, n.addr)
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	c.SetWriteDeadline(time.Now().Add(notifyWriteTimeout))
	_, err = c.Write([]byte(state))
	err = errors.Join(err, c.Close())
	if err != nil {
		return fmt.Errorf("sd_notify %s: %w", state, err)
	}
	return nil
}
