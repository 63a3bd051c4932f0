// Package integrations owns the catalogue of external services a user can
// connect (one manifest per integration, with an OAuth provider's
// endpoints), the Integration interface that a connected instance fulfils,
// and the errors by which an instance tells the sync what went wrong. It
// defines Credentials; integrations/vault seals them at rest, for
// integrations/records.
//
// Each provider lives in its own subpackage (gmail, slack, dropbox, imap,
// feed) and exports a Definition; main builds a Registry from them. The
// OAuth client they share is oauthclient, the guard on user-chosen hosts
// netguard, the certificate field of their forms tlstrust, the checks
// and cuts of their strings textguard.
package integrations

import (
	"bytes"
	"context"
	"errors"
	"io"
	"time"

	"searchsvc/integrations/mail"
)

// AuthType says how a user connects an integration.
type AuthType string

// The two ways to connect an integration.
const (
	// AuthOAuth integrations are connected through the OAuth endpoints
	// (authorize and callback); the service never sees the user's password.
	AuthOAuth AuthType = "oauth"
	// AuthManual integrations are connected by submitting a form whose
	// fields the manifest lists.
	AuthManual AuthType = "manual"
)

// Kinds of integration, as listed in Manifest.Kind.
const (
	KindEmail = "email"
	KindChat  = "chat"
	KindFiles = "files"
	KindFeed  = "feed"
)

// ItemKind is the kind of the items an integration of the given kind
// syncs, as search answers and filters them (kind:email): an email, a
// chat message, a file, a feed entry. An unknown kind is its own.
func ItemKind(kind string) string {
	switch kind {
	case KindChat:
		return "message"
	case KindFiles:
		return "file"
	case KindFeed:
		return "entry"
	}
	return kind
}

// Types of a manual form field, as listed in Field.Type.
const (
	FieldText     = "text"
	FieldPassword = "password"
	FieldNumber   = "number"
	FieldBool     = "bool"
	FieldURL      = "url"
	// FieldMultiline is text that may hold line breaks: a list of
	// addresses, a PEM certificate.
	FieldMultiline = "multiline"
)

// Manifest describes an integration to the catalogue (GET /v1/integrations).
// It holds no configuration and no secrets.
type Manifest struct {
	// Domain is the integration domain name, the :integration path segment
	// and the base of its environment variable names (see EnvPrefix).
	Domain      string   `json:"domain"`
	DisplayName string   `json:"displayName"`
	Kind        string   `json:"kind"`
	AuthType    AuthType `json:"authType"`
	// Scopes are the OAuth scopes requested at authorization; empty for
	// manual integrations.
	Scopes []string `json:"scopes"`
	// Fields is the manual connection form; empty for OAuth integrations.
	Fields []Field `json:"fields"`
	// MaxConnections is how many records one user may hold of a manual
	// integration that can be connected more than once (two mailboxes);
	// 0 means one, reconnected in place.
	MaxConnections int `json:"maxConnections,omitempty"`
}

// FieldLabel is the optional form field that names one of several
// connections of an integration ("Work mail"). It is kept sealed with the
// credentials and shown as the record's label; the integration's own
// ValidateManual never sees it.
const FieldLabel = "label"

// MaxLabelLen is the longest label, in characters.
const MaxLabelLen = 64

// LabelField is the form field a manifest with MaxConnections lists.
func LabelField() Field {
	return Field{Name: FieldLabel, Label: "Label, to tell this connection from your others (optional; at most 64 characters)", Type: FieldText}
}

// Field is one input of a manual connection form.
type Field struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	// Secret fields are shown masked and never echoed back.
	Secret bool `json:"secret"`
	// Default is the value used when the field is left empty.
	Default string `json:"default,omitempty"`
	// Help is a sentence the form shows under the field (where a folder
	// may be); empty: the form says what the field's type asks.
	Help string `json:"help,omitempty"`
}

// Task types of the email providers: TaskStart lists a mailbox with
// TaskGetEmailList, one page at a time, which gives a TaskDownloadEmail
// for each new message. Every integration accepts TaskStart; the others
// are specific to a kind.
const (
	TaskStart         = "start"
	TaskGetEmailList  = "getEmailList"
	TaskDownloadEmail = "downloadEmail"
)

// Task is one unit of work for a connected integration, run by the poller.
type Task struct {
	Type    string            `json:"type"`
	Payload map[string]string `json:"payload,omitempty"`
	// Items is how many items the task downloads, for a task that
	// downloads several (an IMAP batch): a record's itemsLeft adds them
	// up while the task is queued. Zero counts one item for a task whose
	// type starts with "download" (downloadEmail), none for any other.
	Items int `json:"items,omitempty"`
}

// TaskResult is what a task produced: items for the index and follow-up
// tasks for the poller, and the provider ids of items the provider
// reports deleted, which are removed from the item store and the index.
//
// State, when not empty, becomes the record's sync state (see Env.State):
// where the integration is in the provider's change history (a Gmail
// historyId, how far a first listing got). It is stored sealed, in the
// same log line as the task's items and follow-ups, so a restart never
// finds a state ahead of, or behind, the work it describes.
type TaskResult struct {
	Output  []Item   `json:"output"`
	Tasks   []Task   `json:"tasks"`
	Removed []string `json:"removed,omitempty"`
	// State holds values the integration keeps for the record across
	// syncs (a listing cursor), read back through Env.State. They are
	// committed with the task's items, so a crash keeps both or neither;
	// an empty value forgets its key.
	State map[string]string `json:"state,omitempty"`
	// Rekeyed are stored items the provider renumbered: each keeps its
	// content and metadata under a new provider id (see Rekey).
	Rekeyed []Rekey `json:"rekeyed,omitempty"`
}

// Rekey gives the stored item with provider id From the provider id To,
// without downloading it again: an IMAP mailbox whose UIDVALIDITY changed
// holds the same messages under new UIDs.
type Rekey struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Title and Path, when set, replace the item's: a file renamed or
	// moved keeps its item under its new name and path.
	Title string `json:"title,omitempty"`
	Path  string `json:"path,omitempty"`
}

// Item is one document fetched from a provider: an email, a message, a file
// or a feed entry.
type Item struct {
	// ProviderID identifies the item at the provider; it is stable across
	// syncs so an item is indexed once.
	ProviderID string    `json:"providerId"`
	Title      string    `json:"title"`
	From       string    `json:"from,omitempty"`
	To         []string  `json:"to,omitempty"`
	Date       time.Time `json:"date"`
	Size       int64     `json:"size"` // bytes
	Text       string    `json:"text,omitempty"`
	Raw        []byte    `json:"raw,omitempty"`
	// Link is the address of the original (a feed entry's page, the
	// message in Gmail's web client); empty when there is none.
	Link string `json:"link,omitempty"`
	// Path is where a file item is inside what its record connects (a
	// folder's file's path inside the folder); empty for other items.
	Path string `json:"path,omitempty"`
	// Source names where in its record the item comes from, when the
	// record follows several things (a feed entry's feed title); empty:
	// the record's own label names it.
	Source string `json:"source,omitempty"`
	// Thread names the email's conversation: Gmail's thread id, or for
	// other mail the message id of the conversation's first message
	// (mail.Message.Thread). Empty for items that are not email.
	Thread string `json:"thread,omitempty"`
	// Refs are the message ids (or Gmail's thread id) that link the item
	// to the others of its conversation, whatever order they arrive in
	// (mail.Message.Refs).
	Refs []string `json:"refs,omitempty"`
	// Folder is the mailbox an email lies in (an IMAP folder's name), and
	// FolderUse its special use (inbox, sent, drafts, archive, junk,
	// trash), for in: (docs/search.md); a file's folders come from Path.
	Folder    string `json:"folder,omitempty"`
	FolderUse string `json:"folderUse,omitempty"`
	// Attachments are an email's files (their text is in Text).
	Attachments []Attachment `json:"attachments,omitempty"`
}

// Attachment is a file an email carries, as its item lists it: its place
// among the mail's attachments, its file name, media type and decoded
// size in bytes.
type Attachment struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	Type  string `json:"type"`
	Size  int64  `json:"size"`
}

// MailAttachments lists a parsed message's attachments as an item does.
func MailAttachments(m *mail.Message) []Attachment {
	if len(m.Attachments) == 0 {
		return nil
	}
	out := make([]Attachment, len(m.Attachments))
	for i, a := range m.Attachments {
		out[i] = Attachment{Index: a.Index, Name: a.Name, Type: a.Type, Size: a.Size}
	}
	return out
}

// Integration is one connected instance: one user's credentials for one
// integration. Definition.New creates it. Its methods are called by the task
// poller, never during the OAuth flow.
type Integration interface {
	// Initialize connects and refreshes tokens if needed.
	Initialize(ctx context.Context) error
	// ValidateAuthentication reports whether the stored credentials still
	// work. False with a nil error means the provider refused them (the
	// record needs re-authorization); an error means the check itself failed.
	ValidateAuthentication(ctx context.Context) (bool, error)
	// RunTask runs one task and returns its output and follow-up tasks.
	RunTask(ctx context.Context, task Task) (TaskResult, error)
	// Shutdown releases connections.
	Shutdown(ctx context.Context) error
}

// Fetcher is an Integration that gives an item's original back on
// request, fetched from the provider at that moment, for the download
// routes (GET /v1/items/{id}/original and /attachments/{index}): a mail's
// raw message, a file's bytes. The service does not keep them.
type Fetcher interface {
	// Fetch opens the original of the stored item with providerID. The
	// caller reads it within ctx and closes it. An item the provider no
	// longer has gives an error wrapping ErrGone.
	Fetch(ctx context.Context, providerID string) (io.ReadCloser, error)
}

// Whole is the original of a Fetcher that reads it whole before it
// answers (a mail): Bytes gives it at once, so a caller that needs it
// whole does not copy it again.
type Whole struct {
	raw []byte
	*bytes.Reader
}

// NewWhole returns raw as a Fetcher's original.
func NewWhole(raw []byte) *Whole { return &Whole{raw: raw, Reader: bytes.NewReader(raw)} }

// Close does nothing: the bytes are in memory.
func (*Whole) Close() error { return nil }

// Bytes returns the whole original, whatever was read of it.
func (w *Whole) Bytes() []byte { return w.raw }

// ErrGone means the provider no longer has what was asked for: a mail
// deleted or moved away, a file removed, a folder renamed.
var ErrGone = errors.New("no longer at the provider")

// ErrUnsupportedTask is returned by RunTask for a task type the integration
// does not know. It is a bug in this build: the sync logs it as an error
// and puts the record in error with a sentence saying so.
var ErrUnsupportedTask = errors.New("unsupported task type")

// ErrNextSync marks a task error that is not worth retrying on its own:
// the next scheduled sync runs the task again anyway (a feed that is
// down, of several the record follows). The scheduler records the
// failure on the record, drops the task and goes on with the record's
// other tasks.
var ErrNextSync = errors.New("retried at the next sync")
