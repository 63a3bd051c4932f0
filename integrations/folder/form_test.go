package folder_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"searchsvc/httpx"
	"searchsvc/integrations"
	"searchsvc/integrations/api"
	"searchsvc/integrations/folder"
	"searchsvc/integrations/syncer/syncfx"
)

// formRig serves the catalogue and the manual form of a folder
// definition with roots, for user u1.
type formRig struct {
	t  *testing.T
	fx *syncfx.Fixture
	h  http.Handler
}

func newFormRig(t *testing.T, roots ...string) *formRig {
	t.Helper()
	def := folder.Definition(folder.Config{Roots: roots})
	fx := syncfx.New(t, syncfx.Options{Definition: def})
	reg, err := integrations.NewRegistry(def)
	if err != nil {
		t.Fatal(err)
	}
	h, err := api.New(api.Config{Registry: reg, Records: fx.Records, Items: fx.Syncer.Items(), Sync: fx.Syncer,
		UserID: func(r *http.Request) (string, bool) { return "u1", true }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/integrations", h.Catalogue())
	mux.Handle("POST /v1/user-integrations/{integration}/credentials", h.SubmitCredentials())
	mux.Handle("GET /v1/user-integrations/{id}", h.Get())
	mux.Handle("GET /v1/items", h.ListItems())
	stack, err := httpx.Handler(mux, httpx.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return &formRig{t: t, fx: fx, h: stack}
}

func (f *formRig) do(method, path string, body any) (int, map[string]any) {
	f.t.Helper()
	var rd *bytes.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	} else {
		rd = bytes.NewReader(nil)
	}
	req := httptest.NewRequest(method, path, rd)
	req.Header.Set("Content-Type", "application/json")
	w := httptest.NewRecorder()
	f.h.ServeHTTP(w, req)
	var out map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
		f.t.Fatalf("%s %s: %d %q is not JSON", method, path, w.Code, w.Body.String())
	}
	return w.Code, out
}

// connect posts the form with path and label.
func (f *formRig) connect(path, label string) (int, map[string]any) {
	fields := map[string]any{"path": path}
	if label != "" {
		fields["label"] = label
	}
	return f.do("POST", "/v1/user-integrations/folder/credentials", map[string]any{"fields": fields})
}

// fieldError returns the answer's one field error as "field: message".
func fieldError(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	d, _ := e["details"].([]any)
	if len(d) != 1 {
		return fmt.Sprint(body)
	}
	m := d[0].(map[string]any)
	return fmt.Sprint(m["field"], ": ", m["message"])
}

// TestFolderForm: the form is refused, with a sentence under the path
// field, for a path outside every root, one that does not exist, a file,
// and a symbolic link that leaves the root; a folder inside the root,
// given in full or relative to the only root, is connected (201) and its
// record says its label (its own name without one) and its source (its
// full path), nothing else being stored for it.
func TestFolderForm(t *testing.T) {
	base, outside := t.TempDir(), t.TempDir()
	root := filepath.Join(base, "srv")
	for _, d := range []string{filepath.Join(root, "docs", "2026"), filepath.Join(root, "photos")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(root, "notes.txt"), "a file", day)
	write(t, filepath.Join(root, "docs", "2026", "lease.txt"), "the lease", day)
	if err := os.Symlink(outside, filepath.Join(root, "away")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "docs"), filepath.Join(root, "docs-link")); err != nil {
		t.Fatal(err)
	}
	f := newFormRig(t, root)

	refused := []struct{ path, want string }{
		{outside, "fields.path: must be inside " + root},
		{"/etc", "fields.path: must be inside " + root},
		{root + "/../", "fields.path: must be inside " + root},
		{filepath.Join(root, "nope"), "fields.path: is not readable: there is no such folder"},
		{filepath.Join(root, "notes.txt"), "fields.path: is a file; give a folder"},
		{filepath.Join(root, "away"), "fields.path: must stay inside " + root + " once its symbolic links are followed, and this one leads out of it"},
		{"../" + filepath.Base(outside), "fields.path: must be inside " + root},
	}
	for _, c := range refused {
		status, body := f.connect(c.path, "")
		if got := fieldError(body); status != http.StatusBadRequest || got != c.want {
			t.Errorf("path %q: got %d %q, want 400 %q", c.path, status, got, c.want)
		}
	}
	if os.Geteuid() != 0 { // root reads a folder whatever its mode
		locked := filepath.Join(root, "locked")
		if err := os.Mkdir(locked, 0); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(locked, 0o755) })
		status, body := f.connect(locked, "")
		want := "fields.path: is not readable: the service is not allowed to read it"
		if got := fieldError(body); status != http.StatusBadRequest || got != want {
			t.Errorf("unreadable folder: got %d %q, want 400 %q", status, got, want)
		}
	}
	if n := len(f.fx.Records.ForUser("u1")); n != 0 {
		t.Fatalf("refused forms stored %d records", n)
	}

	connected := []struct{ path, label, wantLabel, wantSource string }{
		{filepath.Join(root, "docs"), "Work papers", "Work papers", filepath.Join(root, "docs")},
		{"photos", "", "photos", filepath.Join(root, "photos")},
		// A link inside the root is stored resolved.
		{filepath.Join(root, "docs-link", "2026"), "", "2026", filepath.Join(root, "docs", "2026")},
	}
	for _, c := range connected {
		status, body := f.connect(c.path, c.label)
		res, _ := body["result"].(map[string]any)
		if status != http.StatusCreated || res["label"] != c.wantLabel || res["source"] != c.wantSource || res["integration"] != "folder" {
			t.Errorf("path %q: got %d %v, want 201 labelled %q from %q", c.path, status, body, c.wantLabel, c.wantSource)
		}
	}
	if n := len(f.fx.Records.ForUser("u1")); n != 3 {
		t.Errorf("records: got %d, want 3", n)
	}

	// Synced, a file's item says its name and its path inside the folder;
	// the record's source details say the listing left nothing out.
	for _, rec := range f.fx.Records.ForUser("u1") {
		f.fx.Sync(rec)
	}
	status, body := f.do("GET", "/v1/items", nil)
	var paths []string
	for _, it := range body["results"].([]any) {
		m := it.(map[string]any)
		paths = append(paths, fmt.Sprint(m["title"], " ", m["path"]))
	}
	slices.Sort(paths)
	if want := []string{"lease.txt 2026/lease.txt", "lease.txt lease.txt"}; status != http.StatusOK || !slices.Equal(paths, want) {
		t.Errorf("items: got %d %q, want %q", status, paths, want)
	}
	for _, rec := range f.fx.Records.ForUser("u1") {
		_, body := f.do("GET", "/v1/user-integrations/"+rec.ID, nil)
		res := body["result"].(map[string]any)
		if got := fmt.Sprint(res["sourceDetails"]); got != "[map[source:"+fmt.Sprint(res["source"])+" status:ok]]" {
			t.Errorf("record %v: sourceDetails %s", res["label"], got)
		}
	}

	// The catalogue lists it as configured, with the path field's help.
	status, body = f.do("GET", "/v1/integrations", nil)
	entry := body["results"].([]any)[0].(map[string]any)
	field := entry["fields"].([]any)[0].(map[string]any)
	if status != http.StatusOK || entry["configured"] != true || entry["requires"] != nil || entry["maxConnections"] != float64(10) ||
		field["help"] != "A folder under "+root+": its full path, or its path inside "+root+". Hidden files are skipped; nothing in it is ever changed." {
		t.Errorf("catalogue: got %d %v", status, entry)
	}
}

// TestFolderFormWithoutRoots: without FOLDER_ROOTS the catalogue lists
// the folder as not configured, naming the setting, and the form is
// refused with a sentence naming it.
func TestFolderFormWithoutRoots(t *testing.T) {
	f := newFormRig(t)
	status, body := f.do("GET", "/v1/integrations", nil)
	entry := body["results"].([]any)[0].(map[string]any)
	if status != http.StatusOK || entry["configured"] != false || fmt.Sprint(entry["requires"]) != "[FOLDER_ROOTS]" {
		t.Errorf("catalogue: got %d %v, want configured false, requires [FOLDER_ROOTS]", status, entry)
	}
	status, body = f.connect(t.TempDir(), "")
	want := "fields.path: no folder can be connected on this server yet: the administrator must set FOLDER_ROOTS"
	if got := fieldError(body); status != http.StatusBadRequest || got != want {
		t.Errorf("form: got %d %q, want 400 %q", status, got, want)
	}
}

// TestFolderFormSeveralRoots: with several roots a relative path is
// refused, naming them.
func TestFolderFormSeveralRoots(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	f := newFormRig(t, a, b)
	status, body := f.connect("docs", "")
	want := "fields.path: must be a full path (starting with /) under one of " + a + ", " + b
	if got := fieldError(body); status != http.StatusBadRequest || got != want {
		t.Errorf("relative path: got %d %q, want 400 %q", status, got, want)
	}
	if status, _ := f.connect(b, ""); status != http.StatusCreated {
		t.Errorf("the second root itself: got %d, want 201", status)
	}
}
