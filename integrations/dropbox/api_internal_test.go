package dropbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestHeaderJSON(t *testing.T) {
	got, err := headerJSON(map[string]string{"path": "/Café/😀.txt"})
	if want := `{"path":"/Caf\u00e9/\ud83d\ude00.txt"}`; err != nil || got != want {
		t.Errorf("got %s %v, want %s", got, err, want)
	}
	var back map[string]string
	if err := json.Unmarshal([]byte(got), &back); err != nil || back["path"] != "/Café/😀.txt" {
		t.Errorf("decoded back: got %q %v", back["path"], err)
	}
}

// answer is a transport that answers every request with status, header
// and body, without a network.
type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) RoundTrip(r *http.Request) (*http.Response, error) {
	h := a.header
	if h == nil {
		h = http.Header{}
	}
	return &http.Response{StatusCode: a.status, Header: h, Body: io.NopCloser(bytes.NewReader(a.body)),
		ContentLength: -1, Request: r}, nil
}

func clientFor(a answer) *Client {
	return NewClient(&http.Client{Transport: a}, "http://fake", func(context.Context) (string, error) { return "tok", nil }, nil)
}

func TestBadAnswers(t *testing.T) {
	ctx := context.Background()
	listTests := []struct {
		name string
		body string
		want int // entries kept; -1: ErrBadResponse
	}{
		{"not json", "<html>", -1},
		{"no cursor", `{"entries":[],"has_more":false}`, -1},
		{"cursor with a newline", `{"entries":[],"cursor":"a\nb","has_more":false}`, -1},
		{"entries of unknown tags, bad ids and relative paths dropped", `{"entries":[
			{".tag":"file","id":"id:ok1","path_lower":"/a","path_display":"/a","size":1},
			{".tag":"file","id":"../x","path_lower":"/b","path_display":"/b"},
			{".tag":"file","id":"id:ok2","path_lower":"c","path_display":"c"},
			{".tag":"file","id":"id:ok3","path_lower":"/d","path_display":"/d","size":-1},
			{".tag":"symlink","id":"id:ok4","path_lower":"/e","path_display":"/e"},
			{".tag":"deleted","path_lower":"/f","path_display":"/f"}],"cursor":"c1","has_more":false}`, 2},
	}
	for _, tt := range listTests {
		t.Run(tt.name, func(t *testing.T) {
			page, err := clientFor(answer{status: 200, body: []byte(tt.body)}).ListFolder(ctx, "")
			if tt.want < 0 {
				if !errors.Is(err, ErrBadResponse) {
					t.Errorf("got %v, want ErrBadResponse", err)
				}
				return
			}
			if err != nil || len(page.Entries) != tt.want {
				t.Errorf("got %d entries, %v; want %d", len(page.Entries), err, tt.want)
			}
		})
	}

	result := func(id, hash string, size int) http.Header {
		return http.Header{"Dropbox-Api-Result": {`{"id":"` + id + `","path_lower":"/a","path_display":"/a","size":` + itoa(size) + `,"content_hash":"` + hash + `"}`}}
	}
	downloadTests := []struct {
		name string
		a    answer
		want error
	}{
		{"content hash mismatch", answer{200, result("id:x", ContentHash([]byte("other")), 5), []byte("hello")}, ErrBadResponse},
		{"metadata of another file", answer{200, result("id:y", ContentHash([]byte("hello")), 5), []byte("hello")}, ErrBadResponse},
		{"no metadata", answer{200, nil, []byte("hello")}, ErrBadResponse},
		{"body longer than said", answer{200, result("id:x", "", 5), []byte(strings.Repeat("a", 200))}, ErrFileTooLarge},
	}
	for _, tt := range downloadTests {
		t.Run(tt.name, func(t *testing.T) {
			_, data, err := clientFor(tt.a).Download(ctx, "id:x", 100)
			if !errors.Is(err, tt.want) || data != nil {
				t.Errorf("got %d bytes, %v; want %v", len(data), err, tt.want)
			}
		})
	}
}

func itoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}

// FuzzListPage feeds arbitrary answers to the listing: no panic, and
// every entry kept is one validEntry accepts.
func FuzzListPage(f *testing.F) {
	f.Add([]byte(`{"entries":[{".tag":"file","id":"id:a","path_lower":"/a","path_display":"/a","size":3}],"cursor":"c","has_more":true}`))
	f.Add([]byte(`{"error":{".tag":"reset"}}`))
	f.Add([]byte(`{"entries":null,"cursor":""}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, status := range []int{200, 409, 429} {
			page, err := clientFor(answer{status: status, body: body}).ListFolder(context.Background(), "")
			if err != nil {
				continue
			}
			for _, e := range page.Entries {
				if !validEntry(e) {
					t.Fatalf("kept an invalid entry %+v", e)
				}
			}
		}
	})
}
