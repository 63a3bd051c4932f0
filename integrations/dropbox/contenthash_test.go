package dropbox_test

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"

	"searchsvc/integrations/dropbox"
)

// reference computes the content hash as Dropbox documents it, block by
// block, with nothing shared with the implementation but SHA-256.
func reference(data []byte) string {
	var concat []byte
	for len(data) > 0 {
		n := min(len(data), 4<<20)
		sum := sha256.Sum256(data[:n])
		concat = append(concat, sum[:]...)
		data = data[n:]
	}
	sum := sha256.Sum256(concat)
	return hex.EncodeToString(sum[:])
}

func TestContentHash(t *testing.T) {
	const block = dropbox.BlockSize
	if got, want := dropbox.ContentHash(nil), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"; got != want {
		t.Errorf("empty: got %s, want %s (SHA-256 of nothing)", got, want)
	}
	// One block: the hash of the block's hash, not the block's hash.
	one := sha256.Sum256([]byte("abc"))
	twice := sha256.Sum256(one[:])
	if got, want := dropbox.ContentHash([]byte("abc")), hex.EncodeToString(twice[:]); got != want {
		t.Errorf("abc: got %s, want %s", got, want)
	}
	data := make([]byte, 2*block+100)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, n := range []int{1, block - 1, block, block + 1, 2 * block, 2*block + 100} {
		want := reference(data[:n])
		if got := dropbox.ContentHash(data[:n]); got != want {
			t.Errorf("%d bytes: got %s, want %s", n, got, want)
		}
		// Written in odd chunks, with a Sum halfway that must not disturb it.
		h := dropbox.NewContentHash()
		for i := 0; i < n; i += 999_983 {
			h.Write(data[i:min(i+999_983, n)])
			if i == 0 {
				h.Sum(nil)
			}
		}
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%d bytes in chunks: got %s, want %s", n, got, want)
		}
		h.Reset()
		h.Write(data[:n])
		if got := hex.EncodeToString(h.Sum(nil)); got != want {
			t.Errorf("%d bytes after Reset: got %s, want %s", n, got, want)
		}
	}
}
