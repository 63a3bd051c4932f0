package netguard

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestPublicOnly(t *testing.T) {
	tests := []struct {
		addr string
		ok   bool
	}{
		{"93.184.216.34:443", true},
		{"[2606:2800:220:1::1]:443", true},
		{"127.0.0.1:80", false},
		{"127.8.9.10:80", false},
		{"10.1.2.3:993", false},
		{"172.16.0.1:80", false},
		{"172.32.0.1:80", true},
		{"192.168.1.10:993", false},
		{"169.254.169.254:80", false},
		{"100.64.0.1:80", false},
		{"0.0.0.0:80", false},
		{"[::1]:80", false},
		{"[::ffff:127.0.0.1]:80", false},
		{"[fd00::1]:80", false},
		{"[fe80::1]:80", false},
		{"[64:ff9b::a00:1]:80", false},
		{"[64:ff9b:1::a00:1]:80", false},
		{"[2002:a00:1::1]:80", false},
		{"[::a00:1]:80", false},
		{"[::1%lo]:80", false},
		{"[fe80::1%eth0]:80", false},
		{"[2606:2800:220:1::1%1]:443", false},
		{"[::ffff:8.8.8.8]:80", false},       // IPv4-mapped, even of a public address
		{"[::ffff:0:a00:1]:80", false},       // IPv4-translated 10.0.0.1
		{"[::ffff:0:808:808]:80", false},     // IPv4-translated 8.8.8.8
		{"[2001:0:4136:e378::1]:80", false},  // Teredo
		{"[2001:4860:4860::8888]:443", true}, // public, beside Teredo's /32
		{"[fec0::1]:80", false},              // site-local
		{"[feff::1]:80", false},              // the top of site-local
		{"not-an-address", false},
	}
	for _, tt := range tests {
		err := PublicOnly("tcp", tt.addr, nil)
		if (err == nil) != tt.ok {
			t.Errorf("PublicOnly(%s): got %v, want ok=%v", tt.addr, err, tt.ok)
		}
		if err != nil && !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("PublicOnly(%s): %v is not ErrPrivateAddress", tt.addr, err)
		}
	}
}

// TestPublicClientRefusesLoopback: the client never connects to a server
// on this machine, whether named directly or reached by a redirect.
func TestPublicClientRefusesLoopback(t *testing.T) {
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits++ }))
	defer srv.Close()
	c := PublicClient(5 * time.Second)
	req, _ := http.NewRequestWithContext(context.Background(), "GET", srv.URL, nil)
	_, err := c.Do(req)
	if !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("GET %s: got %v, want ErrPrivateAddress", srv.URL, err)
	}
	// A zoned IPv6 literal is refused too (Prefix.Contains never matches
	// a zoned address, so it needs its own check).
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for _, u := range []string{"http://[::1%25lo]:" + port + "/", "http://[fe80::1%25eth0]:" + port + "/"} {
		req, _ := http.NewRequestWithContext(context.Background(), "GET", u, nil)
		if _, err := c.Do(req); !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("GET %s: got %v, want ErrPrivateAddress", u, err)
		}
	}
	if hits != 0 {
		t.Errorf("the loopback server was reached %d times", hits)
	}
}
