// Package folder connects a folder on the server's own disks (or a NAS
// mounted there) and syncs its files, read-only. The administrator says
// under which directories users may connect folders (FOLDER_ROOTS); the
// form names one of them, or a folder under one, and is refused when the
// folder leaves its root once symbolic links are followed.
//
// A sync walks the folder (walk.go) without following any symbolic link
// and without opening a file, compares what it lists with the stored
// items by their provider ids (device, inode, size, modification time and
// path; see fileKey), and only then opens the files that are new or
// changed, through an os.Root of the folder, to extract their text with
// the extractor and limits Dropbox files have (tasks.go). Nothing in the
// folder is ever written, renamed or deleted.
package folder

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"

	"searchsvc/integrations"
	"searchsvc/integrations/extract"
)

// Domain is the integration domain.
const Domain = "folder"

// Names of the manual form's fields, also the keys of Credentials.Fields.
const (
	// FieldPath is the folder: an absolute path under one of the roots,
	// or, with one root, a path relative to it. What is stored is its
	// resolved absolute form.
	FieldPath = "path"
)

// MaxConnections is how many folders one user may connect.
const MaxConnections = 10

// DefaultMaxFileSize is the largest file read for its text, in bytes
// (10 MiB, as for Dropbox); a larger one is stored by name and path only.
const DefaultMaxFileSize = 10 << 20

// Config is the administrator's setting and the sync's limits; zero
// fields take the defaults.
type Config struct {
	// Roots are FOLDER_ROOTS: absolute directories under which users may
	// connect folders. None: the integration cannot be connected.
	Roots []string
	// MaxFileSize is the largest file read (DefaultMaxFileSize).
	MaxFileSize int64
	// Extract bounds the text extraction (extract.DefaultLimits); its
	// MaxInput is raised to MaxFileSize.
	Extract extract.Limits
	// Walk bounds a folder's listing (DefaultWalkLimits).
	Walk WalkLimits
	// Open opens a file of the folder for reading; nil opens it through
	// the os.Root with O_RDONLY. Tests and benchmarks wrap it to count
	// what a sync opens.
	Open func(root *os.Root, name string) (*os.File, error)
}

func (c Config) withDefaults() Config {
	if c.MaxFileSize <= 0 {
		c.MaxFileSize = DefaultMaxFileSize
	}
	if c.Extract.MaxInput < c.MaxFileSize {
		c.Extract.MaxInput = c.MaxFileSize
	}
	c.Walk = c.Walk.withDefaults()
	if c.Open == nil {
		c.Open = func(root *os.Root, name string) (*os.File, error) { return root.OpenFile(name, os.O_RDONLY, 0) }
	}
	return c
}

// Setting is the administrator's setting that allows folders.
const Setting = "FOLDER_ROOTS"

// Definition returns the folder definition for cfg.
func Definition(cfg Config) integrations.Definition {
	cfg = cfg.withDefaults()
	d := integrations.Definition{
		Manifest: integrations.Manifest{
			Domain:      Domain,
			DisplayName: "Folder on this server",
			Kind:        integrations.KindFiles,
			AuthType:    integrations.AuthManual,
			Fields: []integrations.Field{
				{Name: FieldPath, Label: "Folder", Type: integrations.FieldText, Required: true, Help: pathHelp(cfg.Roots)},
				integrations.LabelField(),
			},
			MaxConnections: MaxConnections,
		},
		Describe: describe,
		Sources:  func(c integrations.Credentials) []string { return []string{c.Fields[FieldPath]} },
		Details:  details,
		ValidateManual: func(_ context.Context, fields map[string]string, _ *http.Client) (integrations.Credentials, error) {
			path, err := Resolve(cfg.Roots, fields[FieldPath])
			if err != nil {
				return integrations.Credentials{}, err
			}
			return integrations.Credentials{Fields: map[string]string{FieldPath: path}}, nil
		},
		New: func(env integrations.Env) (integrations.Integration, error) { return newFolder(env, cfg) },
	}
	if len(cfg.Roots) == 0 {
		d.Requires = []string{Setting}
	}
	return d
}

// pathHelp is the form's help under the path field: where folders may be.
func pathHelp(roots []string) string {
	switch len(roots) {
	case 0:
		return "Not available yet: the administrator must set " + Setting + "."
	case 1:
		return "A folder under " + roots[0] + ": its full path, or its path inside " + roots[0] + ". Hidden files are skipped; nothing in it is ever changed."
	}
	return "The full path of a folder under one of " + strings.Join(roots, ", ") + ". Hidden files are skipped; nothing in it is ever changed."
}

// describe names a folder's record by the folder's own name, and says
// its source as its full path.
func describe(c integrations.Credentials) (name, source string) {
	p := c.Fields[FieldPath]
	return filepath.Base(p), p
}

// Resolve checks the form's path against roots and returns the folder's
// absolute path with its symbolic links resolved. Its errors are
// *integrations.ValidationError on the path field, in words a user can
// act on: no roots set, a path outside every root, one that is not a
// readable folder, one that leaves its root once its links are followed.
func Resolve(roots []string, path string) (string, error) {
	invalid := func(msg string) (string, error) {
		return "", &integrations.ValidationError{Field: FieldPath, Message: msg}
	}
	if len(roots) == 0 {
		return invalid("no folder can be connected on this server yet: the administrator must set " + Setting)
	}
	path = strings.TrimSpace(path)
	if path == "" {
		return invalid("is required")
	}
	if !filepath.IsAbs(path) {
		if len(roots) > 1 {
			return invalid("must be a full path (starting with /) under one of " + strings.Join(roots, ", "))
		}
		path = filepath.Join(roots[0], path)
	}
	path = filepath.Clean(path)
	root, ok := under(roots, path)
	if !ok {
		return invalid("must be inside " + rootsWords(roots))
	}
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return invalid(notReadable(err))
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		realRoot = root
	}
	if !within(realRoot, resolved) {
		return invalid("must stay inside " + root + " once its symbolic links are followed, and this one leads out of it")
	}
	fi, err := os.Stat(resolved)
	if err != nil {
		return invalid(notReadable(err))
	}
	if !fi.IsDir() {
		return invalid("is a file; give a folder")
	}
	f, err := os.Open(resolved)
	if err == nil {
		_, err = f.ReadDir(1)
		f.Close()
		if errors.Is(err, io.EOF) {
			err = nil // an empty folder reads
		}
	}
	if err != nil {
		return invalid(notReadable(err))
	}
	return resolved, nil
}

// notReadable words why a path is not a readable folder.
func notReadable(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "is not readable: there is no such folder"
	case errors.Is(err, fs.ErrPermission):
		return "is not readable: the service is not allowed to read it"
	}
	return "is not readable"
}

// rootsWords names the roots in a sentence.
func rootsWords(roots []string) string {
	if len(roots) == 1 {
		return roots[0]
	}
	return "one of " + strings.Join(roots, ", ")
}

// under returns the root path lies in (lexically), if any.
func under(roots []string, path string) (string, bool) {
	for _, r := range roots {
		if within(filepath.Clean(r), path) {
			return r, true
		}
	}
	return "", false
}

// within reports whether path is dir or lies under it; both are clean
// and absolute.
func within(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
