package qr

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The symbol encoding example of ISO/IEC 18004 (annex I): "01234567" in
// numeric mode at version 1-M, its data codewords and the Reed-Solomon
// codewords the standard computes for them.
func TestStandardExample(t *testing.T) {
	seg := newSegment([]byte("01234567"))
	if seg.mode != numeric {
		t.Fatalf("mode %d, want numeric", seg.mode)
	}
	data := seg.codewords(1, dataCodewords(1, M)*8)
	want := bits("00010000 00100000 00001100 01010110 01100001 10000000 11101100 00010001 " +
		"11101100 00010001 11101100 00010001 11101100 00010001 11101100 00010001")
	if !bytes.Equal(data, want) {
		t.Fatalf("data codewords\n got %08b\nwant %08b", data, want)
	}
	ecc := remainder(data, generator(eccPerBlock[M][1]))
	wantECC := bits("10100101 00100100 11010100 11000001 11101101 00110110 11000111 10000111 00101100 01010101")
	if !bytes.Equal(ecc, wantECC) {
		t.Fatalf("error correction codewords\n got %08b\nwant %08b", ecc, wantECC)
	}
	c, err := Encode("01234567")
	if err != nil {
		t.Fatal(err)
	}
	if c.Version != 1 || c.Size != 21 {
		t.Errorf("version %d size %d, want 1 and 21", c.Version, c.Size)
	}
}

// "HELLO WORLD" in alphanumeric mode at 1-M, as the widely used tutorial
// of the encoding works it out by hand.
func TestAlphanumericExample(t *testing.T) {
	seg := newSegment([]byte("HELLO WORLD"))
	if seg.mode != alphanumeric {
		t.Fatalf("mode %d, want alphanumeric", seg.mode)
	}
	data := seg.codewords(1, dataCodewords(1, M)*8)
	want := []byte{32, 91, 11, 120, 209, 114, 220, 77, 67, 64, 236, 17, 236, 17, 236, 17}
	if !bytes.Equal(data, want) {
		t.Fatalf("data codewords %v, want %v", data, want)
	}
	wantECC := []byte{196, 35, 39, 119, 235, 215, 231, 226, 93, 23}
	if ecc := remainder(data, generator(10)); !bytes.Equal(ecc, wantECC) {
		t.Fatalf("error correction codewords %v, want %v", ecc, wantECC)
	}
}

func bits(s string) []byte {
	var out []byte
	for _, f := range strings.Fields(s) {
		var b byte
		for _, c := range f {
			b = b<<1 | byte(c-'0')
		}
		out = append(out, b)
	}
	return out
}

// The format information of the standard's table for mask 0 at each
// level, and the version information of version 7, read back from the
// modules where they are drawn.
func TestFormatAndVersionBits(t *testing.T) {
	for _, tc := range []struct {
		lvl  Level
		want string
	}{{L, "111011111000100"}, {M, "101010000010010"}, {Q, "011010101011111"}, {H, "001011010001001"}} {
		m := newMatrix(1)
		m.drawFormat(tc.lvl, 0)
		// The first copy, bit 14 first: row 8 from column 0, skipping the
		// timing column, then column 8 upwards.
		var got []byte
		for _, p := range [][2]int{{0, 8}, {1, 8}, {2, 8}, {3, 8}, {4, 8}, {5, 8}, {7, 8}, {8, 8}, {8, 7}, {8, 5}, {8, 4}, {8, 3}, {8, 2}, {8, 1}, {8, 0}} {
			got = append(got, "01"[b2i(m.dark[p[1]*m.size+p[0]])])
		}
		if string(got) != tc.want {
			t.Errorf("level %d mask 0: format %s, want %s", tc.lvl, got, tc.want)
		}
	}
	m := newMatrix(7)
	m.drawVersion()
	var got []byte
	for i := 17; i >= 0; i-- {
		got = append(got, "01"[b2i(m.dark[(i/3)*m.size+m.size-11+i%3])])
	}
	if want := "000111110010010100"; string(got) != want {
		t.Errorf("version 7 information %s, want %s", got, want)
	}
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The byte-mode capacities of the standard's table: the most bytes a
// version holds at a level, and one more needs the next version (or
// fails at 40).
func TestCapacity(t *testing.T) {
	for _, tc := range []struct {
		lvl          Level
		version, max int
	}{
		{M, 1, 14}, {M, 2, 26}, {M, 5, 84}, {M, 10, 213}, {M, 40, 2331},
		{L, 1, 17}, {L, 40, 2953}, {Q, 40, 1663}, {H, 1, 7}, {H, 40, 1273},
	} {
		c, err := EncodeLevel(bytes.Repeat([]byte("a"), tc.max), tc.lvl)
		if err != nil || c.Version != tc.version {
			t.Errorf("level %d, %d bytes: version %v, err %v; want %d", tc.lvl, tc.max, c, err, tc.version)
			continue
		}
		c, err = EncodeLevel(bytes.Repeat([]byte("a"), tc.max+1), tc.lvl)
		if tc.version == 40 {
			if !errors.Is(err, ErrTooLong) {
				t.Errorf("level %d, %d bytes: err %v, want ErrTooLong", tc.lvl, tc.max+1, err)
			}
		} else if err != nil || c.Version != tc.version+1 {
			t.Errorf("level %d, %d bytes: %v, %v; want version %d", tc.lvl, tc.max+1, c, err, tc.version+1)
		}
	}
}

// An otpauth:// address as the second factor's enrolment makes it: scanned
// back from the SVG by a real reader (zbarimg, after rsvg-convert draws
// it), as a phone would. Then the largest symbol of each version at M,
// and of the versions where the count field or the block layout changes
// at the other levels, so that the block tables are read by a decoder
// this package did not write.
func TestDecodeWithZbar(t *testing.T) {
	for _, tool := range []string{"rsvg-convert", "zbarimg"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not found: .ci/run installs librsvg2-bin and zbar-tools", tool)
			}
			t.Skipf("%s not found: apt-get install librsvg2-bin zbar-tools to run this test", tool)
		}
	}
	dir := t.TempDir()
	uri := "otpauth://totp/searchsvc:ada.lovelace%40example.org?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=searchsvc&algorithm=SHA1&digits=6&period=30"
	c, err := Encode(uri)
	if err != nil {
		t.Fatal(err)
	}
	if got := zbar(t, dir, "otpauth", c); got != uri {
		t.Fatalf("decoded %q, want %q", got, uri)
	}
	for lvl := L; lvl <= H; lvl++ {
		for v := 1; v <= 40; v++ {
			if lvl != M && v != 1 && v != 7 && v != 10 && v != 27 && v != 40 {
				continue // every version at M, the level Encode uses; the others where a table's shape changes
			}
			n := (dataCodewords(v, lvl)*8 - 4 - byteMode.countBits(v)) / 8
			payload := make([]byte, n)
			for i := range payload {
				payload[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[(i*7+v)%36]
			}
			c, err := EncodeLevel(payload, lvl)
			if err != nil || c.Version != v {
				t.Fatalf("level %d version %d: %d bytes gave %v, %v", lvl, v, n, c, err)
			}
			if got := zbar(t, dir, fmt.Sprintf("l%dv%d", lvl, v), c); got != string(payload) {
				t.Errorf("level %d version %d: decoded %d bytes %.20q…, want %d bytes %.20q…", lvl, v, len(got), got, n, payload)
			}
		}
	}
}

func zbar(t *testing.T, dir, name string, c *Code) string {
	t.Helper()
	svg, png := filepath.Join(dir, name+".svg"), filepath.Join(dir, name+".png")
	if err := os.WriteFile(svg, c.SVG(), 0o600); err != nil {
		t.Fatal(err)
	}
	width := fmt.Sprint((c.Size + 2*quietZone) * 4)
	if out, err := exec.Command("rsvg-convert", "-w", width, "-h", width, "-o", png, svg).CombinedOutput(); err != nil {
		t.Fatalf("rsvg-convert: %v: %s", err, out)
	}
	out, err := exec.Command("zbarimg", "--raw", "-q", "-Sdisable", "-Sqrcode.enable", png).Output()
	if err != nil {
		t.Fatalf("zbarimg found no code in %s (version %d, level %d): %v", name, c.Version, c.Level, err)
	}
	return strings.TrimSuffix(string(out), "\n")
}

// Every symbol keeps its three finders, whatever the text and mask.
func FuzzEncode(f *testing.F) {
	f.Add([]byte("01234567"))
	f.Add([]byte("HELLO WORLD"))
	f.Add([]byte("otpauth://totp/x?secret=A"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := EncodeLevel(data, M)
		if err != nil {
			if !errors.Is(err, ErrTooLong) {
				t.Fatal(err)
			}
			return
		}
		if c.Size != 17+4*c.Version || c.Mask < 0 || c.Mask > 7 {
			t.Fatalf("version %d size %d mask %d", c.Version, c.Size, c.Mask)
		}
		for _, o := range [][2]int{{0, 0}, {c.Size - 7, 0}, {0, c.Size - 7}} {
			for i := 0; i < 7; i++ {
				for j := 0; j < 7; j++ {
					ring := max(abs(i-3), abs(j-3))
					if want := ring != 2; c.Dark(o[0]+i, o[1]+j) != want {
						t.Fatalf("finder at %v: module %d,%d dark %v, want %v", o, i, j, !want, want)
					}
				}
			}
		}
		if !bytes.HasPrefix(c.SVG(), []byte("<svg ")) {
			t.Fatal("not an svg")
		}
	})
}
