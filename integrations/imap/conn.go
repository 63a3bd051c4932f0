package imap

import (
	"net"
	"os"
	"sync"
	"time"
)

// timedConn gives every read and write on a connection its own deadline,
// so a server that stops answering, or answers a byte at a time, cannot
// hold a sync: each read must make progress within the timeout. abort
// ends it for good (the caller's context is done).
type timedConn struct {
	net.Conn
	timeout time.Duration
	now     func() time.Time

	mu      sync.Mutex
	aborted bool
}

func (c *timedConn) arm(set func(time.Time) error) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.aborted {
		return os.ErrDeadlineExceeded
	}
	return set(c.now().Add(c.timeout))
}

func (c *timedConn) Read(p []byte) (int, error) {
	if err := c.arm(c.Conn.SetReadDeadline); err != nil {
		return 0, err
	}
	return c.Conn.Read(p)
}

func (c *timedConn) Write(p []byte) (int, error) {
	if err := c.arm(c.Conn.SetWriteDeadline); err != nil {
		return 0, err
	}
	return c.Conn.Write(p)
}

// abort unblocks a read or write in progress and fails every later one.
func (c *timedConn) abort() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.aborted = true
	c.Conn.SetDeadline(time.Unix(1, 0))
}
