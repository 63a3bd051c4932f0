package feed

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// TestFetchStopsAtLimit checks the cap on a feed whose size is not
// announced (chunked): reading stops at the limit.
func TestFetchStopsAtLimit(t *testing.T) {
	const limit = 4 << 10
	var written atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "<rss><channel><item><description>")
		chunk := strings.Repeat("x", 1<<10)
		// 64 MiB, unless the client hangs up: more than loopback socket
		// buffers hold, so a client that reads on is seen.
		for range 64 << 10 {
			n, err := io.WriteString(w, chunk)
			written.Add(int64(n))
			if err != nil {
				return
			}
			w.(http.Flusher).Flush()
		}
	}))
	t.Cleanup(srv.Close)

	_, err := fetch(context.Background(), srv.Client(), srv.URL, limit)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("got %v, want ErrTooLarge", err)
	}
	srv.Close() // waits for the handler to give up
	if got := written.Load(); got >= 64<<20 {
		t.Errorf("server wrote all %d bytes, want the client to stop reading early", got)
	}

	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `<rss><channel><item><guid>1</guid></item></channel></rss>`)
	}))
	t.Cleanup(ok.Close)
	if entries, err := fetch(context.Background(), ok.Client(), ok.URL, 57); err != nil || len(entries) != 1 {
		t.Errorf("feed of exactly the limit: got %v, %v; want one entry", entries, err)
	}
}
