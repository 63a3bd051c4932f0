package syncer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"testing"

	"searchsvc/integrations"
	"searchsvc/integrations/netguard"
	"searchsvc/integrations/records"
)

// guardResolver answers from its map, one address per name; no query
// leaves the process.
type guardResolver map[string]string

func (r guardResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := r[host]; ok {
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// TestPrivateHostLastError: a task that fetches through a netguard
// client, as a feed does, leaves the record the same lastError for every
// form of a private host (127.1, 2130706433, 0x7f000001 … as 127.0.0.1)
// and for a documentation address; the dialer the test controls is never
// called.
func TestPrivateHostLastError(t *testing.T) {
	const want = "Scripted's address is not on the public internet; the administrator can allow it with ALLOW_PRIVATE_TARGETS=true."
	for _, host := range []string{"127.0.0.1", "127.1", "2130706433", "0x7f000001", "0177.0.0.1", "localhost",
		"192.0.2.1", "198.51.100.7", "203.0.113.9", "[2001:db8::1]"} {
		t.Run(host, func(t *testing.T) {
			var dials []string
			g := &netguard.Dialer{
				Resolver: guardResolver{"localhost": "127.0.0.1"},
				Dial: func(_ context.Context, _, address string) (net.Conn, error) {
					dials = append(dials, address)
					return nil, errors.New("the test dialer connects nowhere")
				},
			}
			client := g.Client(0)
			f := newScriptedFixture(t, func(integrations.Env, integrations.Task) (integrations.TaskResult, error) {
				resp, err := client.Get("http://" + host + "/feed")
				if err == nil {
					resp.Body.Close()
					return integrations.TaskResult{}, errors.New("fetched a private host")
				}
				return integrations.TaskResult{}, fmt.Errorf("fetch feed 1 of 1: %w", err)
			})
			rec, err := f.records.Connect("u1", "scripted", integrations.Credentials{})
			if err != nil {
				t.Fatal(err)
			}
			f.runOnce()
			got := f.wantStatus(rec, records.StatusError, want)
			if got.LastError != want {
				t.Errorf("lastError: got %q, want %q", got.LastError, want)
			}
			if len(dials) != 0 {
				t.Errorf("dialled %v, want no dial", dials)
			}
		})
	}
}
