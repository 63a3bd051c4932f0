package feed_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"searchsvc/integrations"
	"searchsvc/integrations/feed"
	"searchsvc/integrations/netguard"
)

const smallFeed = `<rss version="2.0"><channel><title>t</title>
<item><title>One</title><link>https://x.example/1</link></item></channel></rss>`

// site serves paths of a fake web site.
func site(t *testing.T, routes map[string]http.HandlerFunc) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	for p, h := range routes {
		mux.HandleFunc(p, h)
	}
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func serve(contentType, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", contentType)
		io.WriteString(w, body)
	}
}

func TestValidateManual(t *testing.T) {
	srv := site(t, map[string]http.HandlerFunc{
		"/feed.xml": serve("application/rss+xml", smallFeed),
		"/moved": func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/feed.xml", http.StatusMovedPermanently)
		},
		"/page":    serve("text/html", "<!doctype html><html><body>not a feed</body></html>"),
		"/private": func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusUnauthorized) },
		"/huge": func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", fmt.Sprint(6<<20))
		},
	})
	def := feed.Definition()
	if _, err := integrations.NewRegistry(def); err != nil {
		t.Fatal(err)
	}
	creds, err := def.ValidateManual(context.Background(), map[string]string{"url": " " + srv.URL + "/feed.xml "}, srv.Client())
	if err != nil {
		t.Fatalf("ValidateManual: %v", err)
	}
	if got, want := creds.Fields["url"], srv.URL+"/feed.xml"; got != want {
		t.Errorf("stored url: got %q, want %q", got, want)
	}
	if _, err := def.ValidateManual(context.Background(), map[string]string{"url": srv.URL + "/moved"}, srv.Client()); err != nil {
		t.Errorf("redirected feed: %v", err)
	}

	tests := []struct {
		name, url, message string
	}{
		{"not found", srv.URL + "/missing", "the server answered 404 Not Found"},
		{"html page", srv.URL + "/page", "this address does not serve an RSS or Atom feed"},
		{"needs a login", srv.URL + "/private", "the server answered 401 Unauthorized"},
		{"larger than 5 MiB", srv.URL + "/huge", "the feed is larger than 5 MiB"},
		{"ftp", "ftp://x.example/feed", "must be an http or https address"},
		{"javascript", "javascript:alert(1)", "must be an http or https address"},
		{"relative", "/feed.xml", "must be an http or https address"},
		{"empty", "", "must be an http or https address"},
		{"nothing listening", "http://127.0.0.1:1/feed", "could not fetch the feed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := def.ValidateManual(context.Background(), map[string]string{"url": tt.url}, srv.Client())
			var ve *integrations.ValidationError
			if !errors.As(err, &ve) || ve.Field != "url" || ve.Message != tt.message {
				t.Errorf("got %v, want url: %s", err, tt.message)
			}
		})
	}
}

func TestValidateManualTimeoutAndCancel(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	srv := site(t, map[string]http.HandlerFunc{
		"/slow": func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-r.Context().Done():
			case <-release:
			}
		},
	})
	def := feed.Definition()
	fields := map[string]string{"url": srv.URL + "/slow"}

	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := def.ValidateManual(ctx, fields, srv.Client())
	var ve *integrations.ValidationError
	if !errors.As(err, &ve) || ve.Message != "the server did not answer in time" {
		t.Errorf("timeout: got %v, want the timeout message", err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	_, err = def.ValidateManual(ctx, fields, srv.Client())
	if !errors.Is(err, context.Canceled) || errors.As(err, &ve) {
		t.Errorf("cancelled: got %v, want context.Canceled, not a validation error", err)
	}
}

func TestFetchSendsFeedAccept(t *testing.T) {
	var accept string
	srv := site(t, map[string]http.HandlerFunc{
		"/f": func(w http.ResponseWriter, r *http.Request) {
			accept = r.Header.Get("Accept")
			io.WriteString(w, smallFeed)
		},
	})
	entries, err := feed.Fetch(context.Background(), srv.Client(), srv.URL+"/f")
	if err != nil || len(entries) != 1 || entries[0].Title != "One" {
		t.Fatalf("Fetch: got %+v, %v; want one entry", entries, err)
	}
	if !strings.Contains(accept, "application/rss+xml") || !strings.Contains(accept, "application/atom+xml") {
		t.Errorf("Accept: got %q, want feed types", accept)
	}
}

func TestFeedInstance(t *testing.T) {
	var status atomic.Int32
	srv := site(t, map[string]http.HandlerFunc{
		"/f": func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(int(status.Load()))
			io.WriteString(w, smallFeed)
		},
	})
	in, err := feed.Definition().New(integrations.Env{
		Credentials: integrations.Credentials{Fields: map[string]string{"url": srv.URL + "/f"}},
		Client:      srv.Client(),
	})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		status  int
		ok      bool
		wantErr bool
	}{
		{http.StatusOK, true, false},
		{http.StatusForbidden, false, false},
		{http.StatusUnauthorized, false, false},
		{http.StatusBadGateway, false, true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			status.Store(int32(tt.status))
			ok, err := in.ValidateAuthentication(context.Background())
			if ok != tt.ok || (err != nil) != tt.wantErr {
				t.Errorf("got %v, %v; want %v, error %v", ok, err, tt.ok, tt.wantErr)
			}
		})
	}
	if _, err := in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskGetEmailList}); !errors.Is(err, integrations.ErrUnsupportedTask) {
		t.Errorf("RunTask: got %v, want ErrUnsupportedTask", err)
	}
	if _, err := feed.Definition().New(integrations.Env{}); err == nil {
		t.Error("New without a stored url: got nil error")
	}
}

// FuzzParseURLs: the form's list of addresses never panics the parser,
// and what it accepts is at most MaxFeeds distinct http(s) addresses that
// ParseURL accepts as they are.
func FuzzParseURLs(f *testing.F) {
	f.Add("https://a.example/feed\nhttp://b.example/rss  https://a.example/feed")
	f.Add("javascript:alert(1)")
	f.Add("http://[::1%25lo]/\n")
	f.Add(strings.Repeat("https://x.example/ ", 60))
	f.Fuzz(func(t *testing.T, raw string) {
		urls, err := feed.ParseURLs(raw)
		if err != nil {
			return
		}
		if len(urls) == 0 || len(urls) > feed.MaxFeeds {
			t.Fatalf("got %d addresses", len(urls))
		}
		seen := make(map[string]bool)
		for _, u := range urls {
			if again, err := feed.ParseURL(u); err != nil || again != u || seen[u] {
				t.Fatalf("accepted %q (%v)", u, err)
			}
			seen[u] = true
		}
	})
}

// resolver answers from its map, one address per name; no query leaves
// the process.
type resolver map[string]string

func (r resolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestGuardRefusesPrivateURLs: with the client of a netguard.Dialer, as
// the service runs it, a feed address on the server's own network or a
// documentation address gets the sentence 127.0.0.1 gets, in whatever
// form its host is written: in the form's field error, and in the sync's
// error, from which the record's lastError is made (syncer's failure
// sentences); the dialer the test controls is never called.
func TestGuardRefusesPrivateURLs(t *testing.T) {
	const sentence = "this address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"
	tests := []struct{ url, addr string }{
		{"http://127.0.0.1/feed", "127.0.0.1"},
		{"http://127.1/feed", "127.0.0.1"},
		{"http://2130706433/feed", "127.0.0.1"},
		{"http://0x7f000001/feed", "127.0.0.1"},
		{"http://0177.0.0.1:8080/feed", "127.0.0.1"},
		{"https://127.0.0.1./feed", "127.0.0.1"},
		{"http://localhost/feed", "127.0.0.1"},
		{"http://0xa9fea9fe/latest/meta-data", "169.254.169.254"},
		{"http://192.0.2.1/feed", "192.0.2.1"},
		{"http://198.51.100.7/feed", "198.51.100.7"},
		{"https://203.0.113.9/feed", "203.0.113.9"},
		{"http://[2001:db8::1]/feed", "2001:db8::1"},
		{"http://docs.example/feed", "2001:db8::80"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			var dials []string
			g := &netguard.Dialer{
				Resolver: resolver{"localhost": "127.0.0.1", "docs.example": "2001:db8::80"},
				Dial: func(_ context.Context, _, address string) (net.Conn, error) {
					dials = append(dials, address)
					return nil, errors.New("the test dialer connects nowhere")
				},
			}
			client := g.Client(time.Minute)
			_, err := feed.Definition().ValidateManual(context.Background(), map[string]string{"url": tt.url}, client)
			var ve *integrations.ValidationError
			if !errors.Is(err, netguard.ErrPrivateAddress) || !errors.As(err, &ve) || ve.Field != "url" || ve.Message != sentence {
				t.Errorf("ValidateManual: got %v, want url: %q wrapping ErrPrivateAddress", err, sentence)
			}

			in, err := feed.Definition().New(integrations.Env{
				Credentials: integrations.Credentials{Fields: map[string]string{"url": tt.url}},
				Client:      client,
				Now:         func() time.Time { return now },
			})
			if err != nil {
				t.Fatal(err)
			}
			_, err = in.RunTask(context.Background(), integrations.Task{Type: integrations.TaskStart})
			want := "fetch feed 1 of 1: Get: not a public internet address: " + tt.addr
			if !errors.Is(err, netguard.ErrPrivateAddress) || err.Error() != want {
				t.Errorf("RunTask: got %v, want %q (ErrPrivateAddress)", err, want)
			}
			if len(dials) != 0 {
				t.Errorf("dialled %v, want no dial", dials)
			}
		})
	}
}

// TestGuardAllowsHomeNetwork: a feed on a network the administrator
// listed (PRIVATE_TARGETS, the guard's Allowed) is fetched; one on the
// server's loopback is refused with the same sentence, although the
// listed networks contain it.
func TestGuardAllowsHomeNetwork(t *testing.T) {
	srv := site(t, map[string]http.HandlerFunc{"/feed.xml": serve("application/rss+xml", smallFeed)})
	var dials []string
	g := &netguard.Dialer{
		Resolver: resolver{"nas.home": "192.168.1.5", "localhost": "127.0.0.1"},
		Allowed:  []netip.Prefix{netip.MustParsePrefix("192.168.1.0/24"), netip.MustParsePrefix("0.0.0.0/0")},
		// The test's server stands in for the NAS: the checked address
		// is recorded, the connection goes to the server.
		Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
			dials = append(dials, address)
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		},
	}
	client := g.Client(time.Minute)
	if _, err := feed.Definition().ValidateManual(context.Background(), map[string]string{"url": "http://nas.home/feed.xml"}, client); err != nil {
		t.Fatalf("nas.home: got %v, want the feed accepted", err)
	}
	const sentence = "this address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true"
	_, err := feed.Definition().ValidateManual(context.Background(), map[string]string{"url": "http://localhost/feed.xml"}, client)
	var ve *integrations.ValidationError
	if !errors.As(err, &ve) || ve.Field != "url" || ve.Message != sentence {
		t.Errorf("localhost: got %v, want url: %q", err, sentence)
	}
	if want := []string{"192.168.1.5:80"}; !slices.Equal(dials, want) {
		t.Errorf("dials: got %v, want %v", dials, want)
	}
}
