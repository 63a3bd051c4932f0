package dropboxtest

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// check answers a request that is refused or has a fault to inject, and
// reports whether it did.
func (s *Server) check(w http.ResponseWriter, r *http.Request, count *int) bool {
	s.mu.Lock()
	*count++
	var f failure
	if len(s.failures) > 0 {
		f, s.failures = s.failures[0], s.failures[1:]
	}
	limited := false
	if s.opts.RatePerMinute > 0 {
		now := s.now()
		s.window = slices.DeleteFunc(s.window, func(t time.Time) bool { return now.Sub(t) >= time.Minute })
		if len(s.window) >= s.opts.RatePerMinute {
			limited = true
			f = failure{http.StatusTooManyRequests, strconv.Itoa(int((time.Minute - now.Sub(s.window[0])).Seconds()) + 1)}
		} else {
			s.window = append(s.window, now)
		}
	}
	expired := s.expired
	s.mu.Unlock()
	if r.Method != http.MethodPost {
		plainError(w, http.StatusMethodNotAllowed, "Error in call to API function: expected POST")
		return true
	}
	if f.status != 0 || limited {
		writeFailure(w, f)
		return true
	}
	ok := r.Header.Get("Authorization") == "Bearer "+s.AccessToken
	if s.opts.Authorized != nil {
		ok = s.opts.Authorized(r)
	}
	switch {
	case !ok:
		jsonError(w, http.StatusUnauthorized, "invalid_access_token", nil)
		return true
	case expired:
		jsonError(w, http.StatusUnauthorized, "expired_access_token", nil)
		return true
	}
	return false
}

// decodeArg reads an RPC body as Dropbox does: JSON, nothing unknown.
func decodeArg(w http.ResponseWriter, r *http.Request, into any) bool {
	if ct := r.Header.Get("Content-Type"); ct != "application/json" && !strings.HasPrefix(ct, "application/json;") {
		plainError(w, http.StatusBadRequest, "Error in call to API function: Bad HTTP \"Content-Type\" header")
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		plainError(w, http.StatusBadRequest, "Error in call to API function: request body: could not decode input as JSON")
		return false
	}
	return true
}

func (s *Server) listFolder(w http.ResponseWriter, r *http.Request) {
	if s.check(w, r, &s.counts.Lists) {
		return
	}
	var arg struct {
		Path           string `json:"path"`
		Recursive      bool   `json:"recursive"`
		IncludeDeleted bool   `json:"include_deleted"`
		Limit          int    `json:"limit"`
	}
	if !decodeArg(w, r, &arg) {
		return
	}
	if arg.Path != "" && !strings.HasPrefix(arg.Path, "/") || arg.Limit < 0 || arg.Limit > 2000 {
		plainError(w, http.StatusBadRequest, "Error in call to API function \"files/list_folder\": request body: path: invalid")
		return
	}
	if !arg.Recursive {
		plainError(w, http.StatusBadRequest, "dropboxtest serves recursive listings only")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	prefix := strings.ToLower(arg.Path)
	if prefix != "" && !s.hasFolder(prefix) {
		jsonError(w, http.StatusConflict, "path", map[string]any{"path": map[string]string{".tag": "not_found"}})
		return
	}
	c := cursor{Gen: s.gen, Seq: s.seq, Prefix: prefix, Offset: 0, Limit: arg.Limit}
	s.listPage(w, c)
}

func (s *Server) listContinue(w http.ResponseWriter, r *http.Request) {
	if s.check(w, r, &s.counts.Continues) {
		return
	}
	var arg struct {
		Cursor string `json:"cursor"`
	}
	if !decodeArg(w, r, &arg) {
		return
	}
	c, ok := s.parseCursor(arg.Cursor)
	if !ok {
		plainError(w, http.StatusBadRequest, "Error in call to API function \"files/list_folder/continue\": Invalid \"cursor\" parameter")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.Gen != s.gen {
		jsonError(w, http.StatusConflict, "reset", nil)
		return
	}
	s.listPage(w, c)
}

// cursor is what the fake's cursors hold: during the first listing, the
// offset into the sorted paths; after it (Offset -1), the change seq seen.
type cursor struct {
	Gen, Seq, Offset, Limit int
	Prefix                  string
}

func (s *Server) makeCursor(c cursor) string {
	b, _ := json.Marshal(c)
	return "AAH" + s.secret + hexOf(b)
}

func (s *Server) parseCursor(v string) (cursor, bool) {
	rest, ok := strings.CutPrefix(v, "AAH"+s.secret)
	if !ok {
		return cursor{}, false
	}
	b, ok := unhex(rest)
	var c cursor
	if !ok || json.Unmarshal(b, &c) != nil {
		return cursor{}, false
	}
	return c, true
}

// listPage writes the page at c. The caller holds s.mu.
func (s *Server) listPage(w http.ResponseWriter, c cursor) {
	limit := c.Limit
	if limit == 0 {
		limit = 2000
	}
	if s.opts.PageSize > 0 {
		limit = min(limit, s.opts.PageSize)
	}
	var entries []map[string]any
	next := c
	if c.Offset >= 0 {
		all := s.listing(c.Prefix)
		end := min(c.Offset+limit, len(all))
		entries = all[c.Offset:end]
		next.Offset = end
		if end == len(all) {
			next.Offset = -1
		}
	} else {
		seen := map[string]bool{}
		i := 0
		for i < len(s.changes) && s.changes[i].seq <= c.Seq {
			i++
		}
		for ; i < len(s.changes) && len(entries) < limit; i++ {
			ch := s.changes[i]
			next.Seq = ch.seq
			if seen[ch.lower] || !strings.HasPrefix(ch.lower, c.Prefix) {
				continue
			}
			seen[ch.lower] = true
			if f := s.files[ch.lower]; f != nil {
				entries = append(entries, s.metadata(ch.lower, f))
			} else {
				entries = append(entries, map[string]any{".tag": "deleted", "name": path.Base(ch.lower),
					"path_lower": ch.lower, "path_display": ch.lower})
			}
		}
	}
	hasMore := next.Offset >= 0 || s.changesAfter(next.Seq, c.Prefix)
	if entries == nil {
		entries = []map[string]any{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"entries": entries, "cursor": s.makeCursor(next), "has_more": hasMore})
}

func (s *Server) changesAfter(seq int, prefix string) bool {
	for i := len(s.changes) - 1; i >= 0 && s.changes[i].seq > seq; i-- {
		if strings.HasPrefix(s.changes[i].lower, prefix) {
			return true
		}
	}
	return false
}

// listing is every folder and file under prefix, sorted by path, folders
// before what they hold.
func (s *Server) listing(prefix string) []map[string]any {
	folders := map[string]string{}
	var paths []string
	for lower, f := range s.files {
		if !strings.HasPrefix(lower, prefix) {
			continue
		}
		paths = append(paths, lower)
		dir, ddir := path.Dir(lower), path.Dir(f.display)
		for dir != "/" && strings.HasPrefix(dir, prefix) {
			folders[dir] = ddir
			dir, ddir = path.Dir(dir), path.Dir(ddir)
		}
	}
	for d := range folders {
		paths = append(paths, d)
	}
	slices.Sort(paths)
	out := make([]map[string]any, 0, len(paths))
	for _, p := range paths {
		if f := s.files[p]; f != nil {
			out = append(out, s.metadata(p, f))
			continue
		}
		out = append(out, map[string]any{".tag": "folder", "name": path.Base(folders[p]), "path_lower": p,
			"path_display": folders[p], "id": "id:dir" + hexOf([]byte(p))[:min(16, 2*len(p))]})
	}
	return out
}

func (s *Server) hasFolder(lower string) bool {
	for p := range s.files {
		if strings.HasPrefix(p, lower+"/") {
			return true
		}
	}
	return false
}

func (s *Server) metadata(lower string, f *file) map[string]any {
	return map[string]any{
		".tag": "file", "name": path.Base(f.display), "id": f.id,
		"path_lower": lower, "path_display": f.display,
		"client_modified": f.modified.Format(time.RFC3339), "server_modified": f.modified.Format(time.RFC3339),
		"rev": fmt.Sprintf("%09x", f.rev), "size": len(f.data), "is_downloadable": true,
		"content_hash": f.hash,
	}
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) {
	if s.check(w, r, &s.counts.Downloads) {
		return
	}
	arg := r.Header.Get("Dropbox-API-Arg")
	for i := 0; i < len(arg); i++ {
		if arg[i] >= 0x7f || arg[i] < ' ' {
			plainError(w, http.StatusBadRequest, "Error in call to API function \"files/download\": HTTP header \"Dropbox-API-Arg\": could not decode input as JSON")
			return
		}
	}
	var a struct {
		Path string `json:"path"`
	}
	dec := json.NewDecoder(strings.NewReader(arg))
	dec.DisallowUnknownFields()
	if arg == "" || dec.Decode(&a) != nil || a.Path == "" {
		plainError(w, http.StatusBadRequest, "Error in call to API function \"files/download\": Must provide HTTP header \"Dropbox-API-Arg\"")
		return
	}
	if r.ContentLength > 0 {
		plainError(w, http.StatusBadRequest, "Error in call to API function \"files/download\": unexpected request body")
		return
	}
	s.mu.Lock()
	lower := strings.ToLower(a.Path)
	if strings.HasPrefix(a.Path, "id:") {
		lower = s.ids[a.Path]
	} else if !strings.HasPrefix(a.Path, "/") {
		s.mu.Unlock()
		plainError(w, http.StatusBadRequest, "Error in call to API function \"files/download\": path: invalid")
		return
	}
	f := s.files[lower]
	var meta map[string]any
	var data []byte
	if f != nil {
		meta, data = s.metadata(lower, f), f.data
	}
	s.mu.Unlock()
	if f == nil {
		jsonError(w, http.StatusConflict, "path", map[string]any{"path": map[string]string{".tag": "not_found"}})
		return
	}
	result, _ := json.Marshal(meta)
	w.Header().Set("Dropbox-API-Result", asciiJSON(result))
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.Write(data)
}

// writeFailure answers an injected failure as Dropbox would: 429 with its
// JSON error, anything else as plain text.
func writeFailure(w http.ResponseWriter, f failure) {
	if f.retryAfter != "" {
		w.Header().Set("Retry-After", f.retryAfter)
	}
	if f.status == http.StatusTooManyRequests {
		n, _ := strconv.Atoi(f.retryAfter)
		jsonError(w, f.status, "too_many_requests", map[string]any{"retry_after": n})
		return
	}
	plainError(w, f.status, http.StatusText(f.status))
}

// jsonError answers {"error_summary": …, "error": {".tag": tag, …}}; a
// 429's tag sits under "reason", as Dropbox sends it.
func jsonError(w http.ResponseWriter, status int, tag string, extra map[string]any) {
	e := map[string]any{".tag": tag}
	if status == http.StatusTooManyRequests {
		e = map[string]any{"reason": map[string]string{".tag": tag}}
	}
	for k, v := range extra {
		e[k] = v
	}
	if status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="Dropbox-API"`)
	}
	writeJSON(w, status, map[string]any{"error_summary": tag + "/..", "error": e})
}

func plainError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(status)
	w.Write([]byte(msg))
}

func writeJSON(w http.ResponseWriter, status int, body any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(body)
}

// asciiJSON escapes what is past ASCII, as Dropbox does in headers.
func asciiJSON(b []byte) string {
	var sb strings.Builder
	for _, r := range string(b) {
		if r < 0x7f {
			sb.WriteRune(r)
			continue
		}
		for _, u := range utf16Units(r) {
			fmt.Fprintf(&sb, `\u%04x`, u)
		}
	}
	return sb.String()
}

func utf16Units(r rune) []rune {
	if r <= 0xFFFF {
		return []rune{r}
	}
	r -= 0x10000
	return []rune{0xD800 + (r>>10)&0x3FF, 0xDC00 + r&0x3FF}
}

func hexOf(b []byte) string { return hex.EncodeToString(b) }

func unhex(s string) ([]byte, bool) {
	b, err := hex.DecodeString(s)
	return b, err == nil
}
