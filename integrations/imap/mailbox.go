package imap

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strings"
	"syscall"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
)

// mailbox is one connected IMAP account, as the sync task system runs it
// (tasks.go). It holds one connection for the session of tasks it is
// built for, opened by the first task that needs it and logged out by
// Shutdown, so a sync logs in once, not once per batch.
type mailbox struct {
	dialer  Dialer
	account Account
	limits  Limits

	kept        func(key string) string
	providerIDs func() ([]string, error)

	client   *Client
	selected string // the folder the client examined
	status   Status // its EXAMINE answer

	// byFolder are the stored items by folder, listed once a session
	// (see folderItems); planned are the folders handed out since.
	byFolder map[string][]storedItem
	planned  map[string]bool
}

func newMailbox(d Dialer, a Account, env integrations.Env) *mailbox {
	lim := d.Limits.orDefaults()
	if d.MaxMessageSize > 0 {
		lim.MaxMessageSize = min(lim.MaxMessageSize, d.MaxMessageSize)
	}
	return &mailbox{dialer: d, account: a, limits: lim, kept: env.State, providerIDs: env.ProviderIDs}
}

// Initialize has nothing to prepare: the first task connects.
func (m *mailbox) Initialize(context.Context) error { return nil }

// ValidateAuthentication logs in and out again.
func (m *mailbox) ValidateAuthentication(ctx context.Context) (bool, error) {
	err := m.dialer.Login(ctx, m.account)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, ErrLoginRejected):
		return false, nil
	default:
		return false, err
	}
}

// Shutdown logs out, if a task logged in.
func (m *mailbox) Shutdown(ctx context.Context) error {
	if m.client == nil {
		return nil
	}
	c := m.client
	m.client, m.selected = nil, ""
	return c.Logout(ctx)
}

// conn returns the session's connection, logging in if there is none.
func (m *mailbox) conn(ctx context.Context) (*Client, error) {
	if m.client != nil {
		return m.client, nil
	}
	c, err := m.dialer.Dial(ctx, m.account)
	if err != nil {
		return nil, err
	}
	m.client = c
	return c, nil
}

// drop forgets the connection after an error that may have left it
// unusable; the next task logs in again.
func (m *mailbox) drop() {
	if m.client != nil {
		m.client.Close()
	}
	m.client, m.selected = nil, ""
}

// examine makes folder the examined one, unless it is already.
func (m *mailbox) examine(ctx context.Context, c *Client, folder string) (Status, error) {
	if m.selected == folder {
		return m.status, nil
	}
	m.selected = ""
	st, err := c.Examine(ctx, folder)
	if err != nil {
		return Status{}, err
	}
	m.selected, m.status = folder, st
	return st, nil
}

// stateKey is the prefix of the sync state's keys (TaskResult.State,
// read through Env.State) that hold the folders' states, FolderState in
// JSON, one key per folder. Kept state is committed in the same log line
// as the batch of the task that set it, so a folder's state is never
// ahead of its items; it is sealed, rotated and deleted with the record.
const stateKey = "folder:"

// state returns the kept state of folder; zero if none.
func (m *mailbox) state(folder string) FolderState {
	var st FolderState
	if m.kept == nil {
		return FolderState{Name: folder}
	}
	if v := m.kept(stateKey + folder); v != "" && json.Unmarshal([]byte(v), &st) == nil && st.Name == folder {
		return st
	}
	return FolderState{Name: folder}
}

// stateValue returns st as the sync state's key and value.
func stateValue(st FolderState) (string, string, error) {
	b, err := json.Marshal(st)
	if err != nil {
		return "", "", err
	}
	return stateKey + st.Name, string(b), nil
}

// storedItem is one stored item: its provider id as stored
// and as parsed.
type storedItem struct {
	pid string
	id  ID
}

// stored returns the record's stored IMAP items; ids that are not IMAP
// message ids (none should be) are left out.
func (m *mailbox) stored() ([]storedItem, error) {
	if m.providerIDs == nil {
		return nil, nil
	}
	pids, err := m.providerIDs()
	if err != nil {
		return nil, err
	}
	out := make([]storedItem, 0, len(pids))
	for _, pid := range pids {
		if id, err := ParseID(pid); err == nil {
			out = append(out, storedItem{pid: pid, id: id})
		}
	}
	return out, nil
}

// listStored lists the stored items and keeps them by folder for
// folderItems.
func (m *mailbox) listStored() ([]storedItem, error) {
	all, err := m.stored()
	if err != nil {
		return nil, err
	}
	m.byFolder, m.planned = make(map[string][]storedItem), make(map[string]bool)
	for _, s := range all {
		m.byFolder[s.id.Folder] = append(m.byFolder[s.id.Folder], s)
	}
	return all, nil
}

// folderItems returns the stored items of folder. Listing them opens
// every item of the record (ProviderIDs), so the list is made once a
// session and handed out folder by folder: a folder's items change only
// through its own tasks (its plan's deletions and re-keys, its batches),
// which all run after its plan, so each folder's part of the list is
// true until that folder is planned. A folder planned a second time in
// the session lists again.
func (m *mailbox) folderItems(folder string) ([]storedItem, error) {
	if m.byFolder == nil || m.planned[folder] {
		if _, err := m.listStored(); err != nil {
			return nil, err
		}
	}
	m.planned[folder] = true
	items := m.byFolder[folder]
	delete(m.byFolder, folder)
	return items, nil
}

// Sentences of the record's lastError for what can go wrong in a sync.
// They name neither the server nor a folder: a record's lastError is
// stored in plain text.
const (
	msgLoginRejected = "the IMAP server refused the username or password; connect it again with the right ones"
	msgLoginLater    = "the IMAP server refused the login for now; will retry"
	msgCertificate   = "the IMAP server's TLS certificate is no longer the one trusted (it changed, or expired); " +
		"connect again, with its new CA certificate or fingerprint in the certificate field if it is on your network"
	msgTimeout     = "the IMAP server did not answer in time; will retry"
	msgCut         = "the IMAP server closed the connection in the middle of an answer; will retry"
	msgConnect     = "could not connect to the IMAP server; will retry"
	msgPrivate     = "the IMAP server's address is not on the public internet; " + netguard.Advice
	msgProtocol    = "the IMAP server sent an answer this service cannot read"
	msgRefused     = "the IMAP server refused a command of the sync"
	msgUnreachable = "the connection to the IMAP server failed; will retry"
)

// temporaryLogin are the response codes (RFC 5530) of a login refused
// for a reason that passes: the password is not in question.
var temporaryLogin = []string{"[UNAVAILABLE", "[INUSE", "[LIMIT", "[SERVERBUG", "[CONTACTADMIN"}

// taskError puts a task's failure in words for the record's lastError
// (*integrations.ExplainedError) and makes what the scheduler does of it
// right: a refused password or a certificate that no longer verifies
// needs the user (integrations.ErrReauthRequired); timeouts, cut
// connections and network failures are retried, as the network errors
// they wrap say. The connection is dropped, as it may be unusable. The
// caller's cancellation (a shutdown) stays as it is.
func (m *mailbox) taskError(ctx context.Context, err error) error {
	m.drop()
	if ctx.Err() != nil && errors.Is(err, context.Canceled) {
		return err
	}
	explain := func(msg string, err error) error { return &integrations.ExplainedError{Message: msg, Err: err} }
	var (
		se         *ServerError
		unknownErr x509.UnknownAuthorityError
		opErr      *net.OpError
		dnsErr     *net.DNSError
	)
	switch {
	case errors.Is(err, ErrLoginRejected):
		if errors.As(err, &se) && hasAnyPrefix(se.Text, temporaryLogin) {
			return explain(msgLoginLater, err)
		}
		return explain(msgLoginRejected, errors.Join(integrations.ErrReauthRequired, err))
	case errors.Is(err, ErrPinMismatch), errors.As(err, &unknownErr):
		return explain(msgCertificate, errors.Join(integrations.ErrReauthRequired, err))
	case errors.Is(err, netguard.ErrPrivateAddress):
		return explain(msgPrivate, err)
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded):
		return explain(msgTimeout, err)
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, syscall.ECONNRESET):
		return explain(msgCut, err)
	case errors.As(err, &dnsErr), errors.As(err, &opErr) && opErr.Op == "dial":
		return explain(msgConnect, err)
	case errors.Is(err, ErrProtocol), errors.Is(err, ErrLineTooLong):
		return explain(msgProtocol, err)
	case errors.Is(err, ErrRefused):
		return explain(msgRefused, err)
	case errors.As(err, &opErr):
		return explain(msgUnreachable, err)
	}
	return err
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(strings.ToUpper(s), p) {
			return true
		}
	}
	return false
}
