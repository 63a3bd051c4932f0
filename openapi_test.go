package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"searchsvc/web"
)

// The tests here hold openapi.json to the routes addRoutes registers: every
// route is described, nothing else is, the document is well-formed OpenAPI
// 3.1 whose references resolve, and GET /v1/openapi.json serves it as it is.

// openapiRecorder is a router that only notes the patterns registered,
// leaving out the web app's pages, which are not API operations.
type openapiRecorder struct{ patterns []string }

func (r *openapiRecorder) Handle(pattern string, h http.Handler) {
	if _, page := h.(*web.App); page {
		return
	}
	r.patterns = append(r.patterns, pattern)
}

// openapiRoutes builds the app as serve does (development mode, on a temp
// DATA_DIR) and returns the patterns addRoutes registers on it.
func openapiRoutes(t *testing.T) []string {
	t.Helper()
	env := map[string]string{"DATA_DIR": t.TempDir(), "SESSION_SECURE": "false", "STORE_SYNC": "none"}
	getenv := func(k string) string { return env[k] }
	c, err := loadConfig(getenv)
	if err != nil {
		t.Fatalf("loadConfig: %v", err)
	}
	if err := c.devSecrets(); err != nil {
		t.Fatalf("devSecrets: %v", err)
	}
	log := slog.New(slog.DiscardHandler)
	a, err := openApp(c, getenv, log)
	if err != nil {
		t.Fatalf("openApp: %v", err)
	}
	t.Cleanup(func() { a.close(log) })
	rec := &openapiRecorder{}
	addRoutes(rec, a)
	if len(rec.patterns) == 0 {
		t.Fatal("addRoutes registered no route")
	}
	return rec.patterns
}

// openapiDoc parses the embedded document.
func openapiDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(openAPIDoc, &doc); err != nil {
		t.Fatalf("openapi.json is not valid JSON: %v", err)
	}
	return doc
}

// openapiMethods are the operation keys of an OpenAPI path item.
var openapiMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// openapiOperation is one operation of the document.
type openapiOperation struct {
	method, path string // "GET", "/v1/x/{id}"
	op           map[string]any
	item         map[string]any // its path item (for path-level parameters)
}

func (o openapiOperation) String() string { return o.method + " " + o.path }

// openapiOperations lists the document's operations, sorted; a path item
// that is not an object, or holds a member that is neither an operation
// nor a path-item field, is an error.
func openapiOperations(doc map[string]any) ([]openapiOperation, []string) {
	var ops []openapiOperation
	var problems []string
	paths, ok := doc["paths"].(map[string]any)
	if !ok {
		return nil, []string{"paths is missing or not an object"}
	}
	for path, v := range paths {
		item, ok := v.(map[string]any)
		if !ok {
			problems = append(problems, fmt.Sprintf("paths[%q] is not an object", path))
			continue
		}
		for key, v := range item {
			switch {
			case slices.Contains(openapiMethods, key):
				op, ok := v.(map[string]any)
				if !ok {
					problems = append(problems, fmt.Sprintf("%s %s is not an object", strings.ToUpper(key), path))
					continue
				}
				ops = append(ops, openapiOperation{method: strings.ToUpper(key), path: path, op: op, item: item})
			case key == "summary" || key == "description" || key == "servers" || key == "parameters" || strings.HasPrefix(key, "x-"):
			default:
				// $ref path items and misspelt methods ("gets") would hide
				// an operation from the comparison.
				problems = append(problems, fmt.Sprintf("paths[%q] has an unsupported member %q", path, key))
			}
		}
	}
	slices.SortFunc(ops, func(a, b openapiOperation) int { return strings.Compare(a.String(), b.String()) })
	return ops, problems
}

// openapiPattern turns a registered mux pattern into "METHOD /path", the
// form the document's operations are compared in. OpenAPI's path
// templates ({id}) are the mux's wildcards; a pattern the document cannot
// describe (no method, a host, {name...} or {$}) is an error.
func openapiPattern(pattern string) (string, error) {
	f := strings.Fields(pattern)
	if len(f) != 2 {
		return "", errors.New("has no method; an OpenAPI operation needs one")
	}
	method, path := f[0], f[1]
	if !strings.HasPrefix(path, "/") {
		return "", errors.New("has a host; OpenAPI paths have none")
	}
	if strings.Contains(path, "...}") || strings.Contains(path, "{$}") {
		return "", errors.New("uses {name...} or {$}, which OpenAPI path templates cannot describe")
	}
	return method + " " + path, nil
}

var openapiTemplate = regexp.MustCompile(`\{([^{}]*)\}`)

func TestOpenAPIMatchesRoutes(t *testing.T) {
	registered := make(map[string]bool)
	for _, p := range openapiRoutes(t) {
		key, err := openapiPattern(p)
		if err != nil {
			t.Errorf("route %q %v", p, err)
			continue
		}
		registered[key] = true
	}
	ops, problems := openapiOperations(openapiDoc(t))
	for _, p := range problems {
		t.Error("openapi.json: " + p)
	}
	documented := make(map[string]bool)
	for _, o := range ops {
		documented[o.String()] = true
	}
	var missing, extra []string
	for r := range registered {
		if !documented[r] {
			missing = append(missing, r)
		}
	}
	for d := range documented {
		if !registered[d] {
			extra = append(extra, d)
		}
	}
	slices.Sort(missing)
	slices.Sort(extra)
	if len(missing) > 0 {
		t.Errorf("routes registered by addRoutes but missing from openapi.json (method and path, parameter names exactly as registered):\n\t%s",
			strings.Join(missing, "\n\t"))
	}
	if len(extra) > 0 {
		t.Errorf("operations in openapi.json that addRoutes does not register:\n\t%s", strings.Join(extra, "\n\t"))
	}
}

// TestOpenAPIPathParameters checks that each operation declares exactly
// the path parameters its path template names, each required.
func TestOpenAPIPathParameters(t *testing.T) {
	doc := openapiDoc(t)
	ops, _ := openapiOperations(doc)
	for _, o := range ops {
		want := map[string]bool{}
		for _, m := range openapiTemplate.FindAllStringSubmatch(o.path, -1) {
			want[m[1]] = true
		}
		got := map[string]bool{}
		var params []any
		if ps, ok := o.item["parameters"].([]any); ok {
			params = append(params, ps...)
		}
		if ps, ok := o.op["parameters"].([]any); ok {
			params = append(params, ps...)
		}
		for _, p := range params {
			pm, ok := p.(map[string]any)
			if !ok {
				t.Errorf("%s: a parameter is not an object", o)
				continue
			}
			if r, ok := pm["$ref"].(string); ok {
				v, err := openapiResolve(doc, r)
				if pm, ok = v.(map[string]any); err != nil || !ok {
					t.Errorf("%s: parameter %s does not resolve to an object", o, r)
					continue
				}
			}
			if pm["in"] != "path" {
				continue
			}
			name, _ := pm["name"].(string)
			if got[name] {
				t.Errorf("%s: path parameter %q declared twice", o, name)
			}
			got[name] = true
			if pm["required"] != true {
				t.Errorf("%s: path parameter %q must be required: true", o, name)
			}
		}
		for name := range want {
			if !got[name] {
				t.Errorf("%s: path parameter {%s} is not declared", o, name)
			}
		}
		for name := range got {
			if !want[name] {
				t.Errorf("%s: declares path parameter %q, which its path does not have", o, name)
			}
		}
	}
}

func TestOpenAPIDocumentValid(t *testing.T) {
	if !json.Valid(openAPIDoc) {
		t.Fatal("openapi.json is not valid JSON")
	}
	if err := openapiNoDuplicateKeys(openAPIDoc); err != nil {
		t.Errorf("openapi.json: %v (the later one silently wins)", err)
	}
	doc := openapiDoc(t)
	if doc["openapi"] != "3.1.0" {
		t.Errorf(`openapi is %v, want "3.1.0"`, doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if s, _ := info["title"].(string); s == "" {
		t.Error("info.title is missing")
	}
	if s, _ := info["version"].(string); s == "" {
		t.Error("info.version is missing")
	}

	components, _ := doc["components"].(map[string]any)
	schemes, _ := components["securitySchemes"].(map[string]any)
	tags := map[string]bool{}
	if ts, ok := doc["tags"].([]any); ok {
		for _, tg := range ts {
			if m, ok := tg.(map[string]any); ok {
				name, _ := m["name"].(string)
				tags[name] = true
			}
		}
	}
	checkSecurity := func(where string, v any) {
		reqs, ok := v.([]any)
		if !ok {
			if v != nil {
				t.Errorf("%s: security is not an array", where)
			}
			return
		}
		for _, r := range reqs {
			m, _ := r.(map[string]any)
			for name := range m {
				if _, ok := schemes[name]; !ok {
					t.Errorf("%s: security names %q, which components.securitySchemes does not define", where, name)
				}
			}
		}
	}
	checkSecurity("document", doc["security"])

	ops, problems := openapiOperations(doc)
	for _, p := range problems {
		t.Error(p)
	}
	if len(ops) == 0 {
		t.Fatal("openapi.json describes no operation")
	}
	ids := map[string]string{}
	statusKey := regexp.MustCompile(`^([1-5][0-9][0-9]|[1-5]XX|default)$`)
	for _, o := range ops {
		id, _ := o.op["operationId"].(string)
		if id == "" {
			t.Errorf("%s has no operationId", o)
		} else if prev, dup := ids[id]; dup {
			t.Errorf("%s and %s share the operationId %q; it must be unique", prev, o, id)
		} else {
			ids[id] = o.String()
		}
		responses, _ := o.op["responses"].(map[string]any)
		if len(responses) == 0 {
			t.Errorf("%s has no response", o)
		}
		for code, resp := range responses {
			if !statusKey.MatchString(code) {
				t.Errorf("%s: response key %q is not a status code", o, code)
			}
			m, ok := resp.(map[string]any)
			if !ok {
				t.Errorf("%s: response %s is not an object", o, code)
				continue
			}
			if _, isRef := m["$ref"]; !isRef {
				if _, ok := m["description"].(string); !ok {
					t.Errorf("%s: response %s has no description", o, code)
				}
			}
		}
		checkSecurity(o.String(), o.op["security"])
		if ts, ok := o.op["tags"].([]any); ok {
			for _, tg := range ts {
				if name, _ := tg.(string); !tags[name] {
					t.Errorf("%s: tag %v is not declared in the document's tags", o, tg)
				}
			}
		}
	}

	// Every $ref resolves within the document.
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if r, ok := v["$ref"]; ok {
				s, _ := r.(string)
				if _, err := openapiResolve(doc, s); err != nil {
					t.Errorf("%s: $ref %q: %v", at, s, err)
				}
			}
			for k, e := range v {
				walk(at+"/"+openapiEscape(k), e)
			}
		case []any:
			for i, e := range v {
				walk(at+"/"+strconv.Itoa(i), e)
			}
		}
	}
	walk("#", doc)
}

// openapiResolve follows a local reference ("#/components/schemas/User").
func openapiResolve(doc map[string]any, ref string) (any, error) {
	rest, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil, errors.New("not a reference within the document")
	}
	if rest == "" {
		return doc, nil
	}
	if !strings.HasPrefix(rest, "/") {
		return nil, errors.New("not a JSON pointer")
	}
	var cur any = doc
	for _, tok := range strings.Split(rest[1:], "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, fmt.Errorf("no member %q", tok)
			}
			cur = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil, fmt.Errorf("no element %q", tok)
			}
			cur = c[i]
		default:
			return nil, fmt.Errorf("%q goes into a value that is neither object nor array", tok)
		}
	}
	return cur, nil
}

func openapiEscape(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// openapiNoDuplicateKeys reports the first object that has a member twice:
// encoding/json keeps the last, so a duplicated path would silently drop
// operations from the document.
func openapiNoDuplicateKeys(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	type frame struct {
		object bool
		keys   map[string]bool
		key    bool // an object's next token is a key
		path   string
	}
	var stack []*frame
	path := "#"
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		if top != nil && top.object && top.key {
			if d, ok := tok.(json.Delim); ok && d == '}' {
				stack = stack[:len(stack)-1]
				continue
			}
			k := tok.(string)
			if top.keys[k] {
				return fmt.Errorf("%s has the member %q twice", top.path, k)
			}
			top.keys[k] = true
			top.key = false
			path = top.path + "/" + openapiEscape(k)
			continue
		}
		if top != nil && top.object {
			top.key = true // after this value, a key
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{object: true, keys: map[string]bool{}, key: true, path: path})
		case json.Delim('['):
			stack = append(stack, &frame{path: path})
		case json.Delim(']'):
			stack = stack[:len(stack)-1]
		}
	}
}

func TestOpenAPIServed(t *testing.T) {
	onDisk, err := os.ReadFile("openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(onDisk, openAPIDoc) {
		t.Fatal("the embedded document differs from openapi.json; rebuild")
	}
	srv := startRun(t, testEnv(t.TempDir()))
	resp, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/openapi.json: status %d, want 200", resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		t.Errorf("Content-Type %q, want application/json", resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, openAPIDoc) {
		t.Errorf("GET /v1/openapi.json served %d bytes that differ from the embedded document's %d", len(body), len(openAPIDoc))
	}
}
