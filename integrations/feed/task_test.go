package feed_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/feed"
)

var now = time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)

const atomFeed = `<?xml version="1.0" encoding="utf-8"?>
<feed xmlns="http://www.w3.org/2005/Atom">
  <title>Example blog</title>
  <author><name>Ann</name></author>
  <entry>
    <id>urn:uuid:3</id>
    <title>Third post</title>
    <link rel="alternate" href="https://blog.example/3"/>
    <published>2026-05-03T08:00:00Z</published>
    <author><name>Bob</name></author>
    <summary type="html">&lt;p&gt;Newest &amp;amp; best&lt;/p&gt;</summary>
  </entry>
  <entry>
    <id>urn:uuid:2</id>
    <title>Second post</title>
    <link href="https://blog.example/2"/>
    <updated>2026-05-02T08:00:00Z</updated>
    <summary>Middle</summary>
  </entry>
  <entry>
    <id>urn:uuid:3</id>
    <title>Third post, repeated</title>
  </entry>
  <entry>
    <id>urn:uuid:1</id>
    <title>First post</title>
    <summary>Oldest</summary>
  </entry>
</feed>`

// fullFeed has an entry with a summary and its full content, and one
// whose link is not a web address.
const fullFeed = `<?xml version="1.0"?>
<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">
<channel><title>Full</title>
  <item>
    <guid>full-1</guid>
    <title>Long read</title>
    <link>https://full.example/long-read</link>
    <description>Only the teaser.</description>
    <content:encoded><![CDATA[<p>The teaser, and then <em>the whole story</em>.</p>]]></content:encoded>
  </item>
  <item>
    <guid>full-2</guid>
    <title>Sly</title>
    <link>javascript:alert(1)</link>
    <description>A summary only.</description>
  </item>
</channel></rss>`

// feedSite serves atomFeed at /f, or the status and Retry-After stored.
func feedSite(t *testing.T) (url string, status *atomic.Int32, retryAfter *atomic.Value) {
	t.Helper()
	status, retryAfter = new(atomic.Int32), new(atomic.Value)
	status.Store(http.StatusOK)
	retryAfter.Store("")
	srv := site(t, map[string]http.HandlerFunc{
		"/f": func(w http.ResponseWriter, r *http.Request) {
			if v := retryAfter.Load().(string); v != "" {
				w.Header().Set("Retry-After", v)
			}
			w.Header().Set("Content-Type", "application/atom+xml")
			w.WriteHeader(int(status.Load()))
			io.WriteString(w, atomFeed)
		},
		"/page": serve("text/html", "<html>not a feed</html>"),
		"/full": serve("application/rss+xml", fullFeed),
		"/long": serve("application/rss+xml", `<rss><channel><item><guid>`+strings.Repeat("g", 300)+`</guid><title>`+
			strings.Repeat("t", 2000)+`</title></item></channel></rss>`),
	})
	return srv.URL, status, retryAfter
}

func follow(t *testing.T, url string, known func(string) bool) integrations.Integration {
	t.Helper()
	in, err := feed.Definition().New(integrations.Env{
		Credentials: integrations.Credentials{Fields: map[string]string{"url": url}},
		Now:         func() time.Time { return now },
		Known:       known,
	})
	if err != nil {
		t.Fatal(err)
	}
	return in
}

func start(in integrations.Integration) (integrations.TaskResult, error) {
	return in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskStart})
}

func TestStartOutputsEntries(t *testing.T) {
	base, _, _ := feedSite(t)
	res, err := start(follow(t, base+"/f", nil))
	if err != nil {
		t.Fatal(err)
	}
	want := []integrations.Item{
		{ProviderID: "urn:uuid:3", Title: "Third post", From: "Bob", Date: time.Date(2026, 5, 3, 8, 0, 0, 0, time.UTC),
			Text: "Newest & best", Link: "https://blog.example/3"},
		{ProviderID: "urn:uuid:2", Title: "Second post", From: "Ann", Date: time.Date(2026, 5, 2, 8, 0, 0, 0, time.UTC),
			Text: "Middle", Link: "https://blog.example/2"},
		{ProviderID: "urn:uuid:1", Title: "First post", From: "Ann", Text: "Oldest"},
	}
	if len(res.Tasks) != 0 || len(res.Output) != len(want) {
		t.Fatalf("got %d items and %d tasks, want %d items and no task", len(res.Output), len(res.Tasks), len(want))
	}
	for i, got := range res.Output {
		w := want[i]
		if got.ProviderID != w.ProviderID || got.Title != w.Title || got.From != w.From || !got.Date.Equal(w.Date) ||
			got.Text != w.Text || got.Link != w.Link || len(got.Raw) != 0 || got.Size != int64(len(w.Text)) {
			t.Errorf("item %d: got %+v, want %+v", i, got, w)
		}
	}

	// What the store holds is not output again.
	known := map[string]bool{"urn:uuid:3": true, "urn:uuid:1": true}
	res, err = start(follow(t, base+"/f", func(id string) bool { return known[id] }))
	if err != nil || len(res.Output) != 1 || res.Output[0].ProviderID != "urn:uuid:2" {
		t.Errorf("with two known: got %+v, %v; want only urn:uuid:2", res.Output, err)
	}

	// Entry ids and titles are bounded.
	res, err = start(follow(t, base+"/long", nil))
	if err != nil || len(res.Output) != 1 || !strings.HasPrefix(res.Output[0].ProviderID, "sha256:") ||
		len(res.Output[0].ProviderID) > 256 || len(res.Output[0].Title) != 1024 {
		t.Errorf("long id and title: got %+v, %v; want a hashed id and a 1 KiB title", res.Output, err)
	}
}

func TestStartFailures(t *testing.T) {
	base, status, retryAfter := feedSite(t)
	in := follow(t, base+"/f", nil)
	tests := []struct {
		status     int
		retryAfter string
		wait       time.Duration
		temporary  bool
	}{
		{http.StatusServiceUnavailable, "120", 2 * time.Minute, true},
		{http.StatusTooManyRequests, now.Add(time.Hour).Format(http.TimeFormat), time.Hour, true},
		{http.StatusInternalServerError, "", 0, true},
		{http.StatusNotFound, "", 0, false},
		{http.StatusUnauthorized, "", 0, false},
	}
	for _, tt := range tests {
		t.Run(http.StatusText(tt.status), func(t *testing.T) {
			status.Store(int32(tt.status))
			retryAfter.Store(tt.retryAfter)
			res, err := start(in)
			var ae *integrations.APIError
			if !errors.As(err, &ae) || len(res.Output) != 0 {
				t.Fatalf("got %+v, %v; want *APIError", res, err)
			}
			if ae.Status != tt.status || ae.RetryAfter != tt.wait || ae.Temporary() != tt.temporary {
				t.Errorf("got %+v (temporary %v), want %d after %v (temporary %v)", ae, ae.Temporary(), tt.status, tt.wait, tt.temporary)
			}
			// A feed gone from its address says so in words, which the
			// record shows: it is not an item gone at the provider,
			// which a sync skips in silence.
			var ve *integrations.ValidationError
			if gone := tt.status == http.StatusNotFound; gone != errors.As(err, &ve) ||
				gone && ve.Message != "the server answered 404 Not Found" {
				t.Errorf("got %v; want a sentence for a 404 only", err)
			}
		})
	}

	_, err := start(follow(t, base+"/page", nil))
	var ae *integrations.APIError
	if !errors.Is(err, feed.ErrNotFeed) || errors.As(err, &ae) {
		t.Errorf("not a feed: got %v, want ErrNotFeed", err)
	}
}

// TestStartBoundsNewEntries: a feed of many tiny entries adds at most
// MaxNewEntries items per fetch, the first (newest) ones.
func TestStartBoundsNewEntries(t *testing.T) {
	var b strings.Builder
	b.WriteString(`<rss version="2.0"><channel><title>Flood</title>`)
	for i := range 5000 {
		b.WriteString("<item><guid>g" + strconv.Itoa(i) + "</guid></item>")
	}
	b.WriteString(`</channel></rss>`)
	srv := site(t, map[string]http.HandlerFunc{"/flood": serve("application/rss+xml", b.String())})
	res, err := start(follow(t, srv.URL+"/flood", nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Output) != feed.MaxNewEntries || res.Output[0].ProviderID != "g0" {
		t.Errorf("got %d items starting %q, want %d starting g0", len(res.Output), res.Output[0].ProviderID, feed.MaxNewEntries)
	}
}

func TestParseURLRefusesZonedHosts(t *testing.T) {
	for _, u := range []string{"http://[::1%25lo]:8080/feed", "http://[fe80::1%25eth0]/"} {
		if _, err := feed.ParseURL(u); err == nil {
			t.Errorf("ParseURL(%q) accepted a zoned host", u)
		}
	}
}

func TestFullContentAndLinkKept(t *testing.T) {
	base, _, _ := feedSite(t)
	res, err := start(follow(t, base+"/full", nil))
	if err != nil || len(res.Output) != 2 {
		t.Fatalf("got %+v, %v; want 2 items", res.Output, err)
	}
	if got, want := res.Output[0], (integrations.Item{ProviderID: "full-1", Title: "Long read",
		Text: "The teaser, and then the whole story .", Link: "https://full.example/long-read"}); got.Text != want.Text || got.Link != want.Link {
		t.Errorf("full content: got text %q link %q, want %q %q", got.Text, got.Link, want.Text, want.Link)
	}
	if got := res.Output[1]; got.Text != "A summary only." || got.Link != "" {
		t.Errorf("summary only, javascript: link: got text %q link %q, want the summary and no link", got.Text, got.Link)
	}
}

func TestManyFeeds(t *testing.T) {
	base, status, _ := feedSite(t)
	urls := base + "/f\n" + base + "/full  " + base + "/f\n" + base + "/page"
	got, err := feed.ParseURLs(urls)
	if want := []string{base + "/f", base + "/full", base + "/page"}; err != nil || strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("ParseURLs: got %v, %v; want %v", got, err, want)
	}
	in := follow(t, strings.Join(got, "\n"), nil)
	res, err := start(in)
	if err != nil || len(res.Output) != 0 || len(res.Tasks) != 3 {
		t.Fatalf("start: got %+v, %v; want a getFeed task per feed", res, err)
	}
	var items int
	var failures []error
	for _, task := range res.Tasks {
		if task.Type != feed.TaskGetFeed {
			t.Fatalf("task %+v, want getFeed", task)
		}
		r, err := in.RunTask(context.Background(), task)
		items += len(r.Output)
		if err != nil {
			failures = append(failures, err)
		}
	}
	if items != 3+2 || len(failures) != 1 {
		t.Fatalf("got %d items and failures %v; want 5 items and the third feed failing", items, failures)
	}
	var ve *integrations.ValidationError
	if err := failures[0]; !errors.Is(err, integrations.ErrNextSync) || !errors.As(err, &ve) ||
		ve.Message != "the feed number 3 of 3 could not be fetched: this address does not serve an RSS or Atom feed" {
		t.Errorf("failure: got %v, want ErrNextSync with a sentence naming the feed's place", err)
	}
	if strings.Contains(ve.Message, base) {
		t.Errorf("the sentence %q holds the address; it is stored in the record in plain text", ve.Message)
	}

	// A feed that answers 503 fails the same way, with the server's words.
	status.Store(http.StatusServiceUnavailable)
	_, err = in.RunTask(context.Background(), res.Tasks[0])
	if !errors.As(err, &ve) || ve.Message != "the feed number 1 of 3 could not be fetched: the server answered 503 Service Unavailable" {
		t.Errorf("503: got %v", err)
	}
	// A feed no longer in the list is not fetched.
	r, err := in.RunTask(context.Background(), integrations.Task{Type: feed.TaskGetFeed, Payload: map[string]string{"url": base + "/gone"}})
	if err != nil || len(r.Output) != 0 {
		t.Errorf("feed no longer followed: got %+v, %v; want nothing", r, err)
	}
	if srcs := feed.Definition().Sources(integrations.Credentials{Fields: map[string]string{"url": strings.Join(got, "\n")}}); len(srcs) != 3 {
		t.Errorf("Sources: got %v, want the 3 addresses", srcs)
	}

	var many strings.Builder
	for i := range feed.MaxFeeds + 1 {
		many.WriteString("https://x.example/" + strconv.Itoa(i) + "\n")
	}
	if _, err := feed.ParseURLs(many.String()); !errors.As(err, &ve) || ve.Message != "at most 50 feeds" {
		t.Errorf("%d feeds: got %v, want at most 50 feeds", feed.MaxFeeds+1, err)
	}
}
