package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// manualPages are README.md and the pages of docs/, which link to each
// other by relative paths and heading anchors.
func manualPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob(filepath.Join("docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(pages) == 0 {
		t.Fatal("no pages in docs/")
	}
	return append([]string{"README.md"}, pages...)
}

// fences matches a fenced code block, whose text is neither a heading nor
// a link.
var fences = regexp.MustCompile("(?s)```.*?```")

// anchors returns the anchors a Markdown renderer such as GitHub's gives
// the headings of text: lower case, letters, digits, '-' and '_' kept,
// spaces as '-', and a repeated anchor numbered from -1.
func anchors(text string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	for _, line := range strings.Split(fences.ReplaceAllString(text, ""), "\n") {
		title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " ")
		if !ok || !strings.HasPrefix(line, "#") {
			continue
		}
		var b strings.Builder
		for _, r := range strings.ToLower(strings.TrimSpace(title)) {
			switch {
			case r == ' ':
				b.WriteByte('-')
			case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
				b.WriteRune(r)
			}
		}
		a := b.String()
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

// TestDocsLinks checks that every relative link of the manual names a file
// that exists and, when it has one, a heading of that file, so that moving
// or renaming a section cannot leave a link dangling.
func TestDocsLinks(t *testing.T) {
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	for _, page := range manualPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range link.FindAllStringSubmatch(fences.ReplaceAllString(string(b), ""), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			file := page
			if path != "" {
				file = filepath.Join(filepath.Dir(page), path)
			}
			tb, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("%s: link %q: %v", page, target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(file, ".md") && !anchors(string(tb))[frag] {
				t.Errorf("%s: link %q: %s has no heading with anchor %q", page, target, file, frag)
			}
		}
	}
}

// TestDocsConfiguration checks that docs/configuration.md documents every
// variable `searchsvc help` lists (envVars), each as a `NAME` in its
// table.
func TestDocsConfiguration(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("docs", "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	name := regexp.MustCompile(`^(<DOMAIN>_)?[A-Z][A-Z0-9_]*$`)
	checked := 0
	for _, v := range envVars {
		for _, n := range strings.Split(v[0], ", ") {
			if !name.MatchString(n) {
				continue // a suffix such as _SECRET, short for the full name before it
			}
			checked++
			if !strings.Contains(doc, "| `"+n+"`") && !strings.Contains(doc, ", `"+n+"`") {
				t.Errorf("docs/configuration.md does not document %s in its table", n)
			}
		}
	}
	if checked < len(envVars) {
		t.Errorf("checked %d names for %d variables: envVars no longer reads as expected", checked, len(envVars))
	}
}
