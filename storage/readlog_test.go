package storage

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// line builds one valid log line.
func line(seq uint64, ops ...string) []byte {
	var lb lineBuilder
	lb.reset(seq)
	for _, id := range ops {
		lb.addPut("users", id, []byte(fmt.Sprintf(`{"id":%q,"email":%q}`, id, id+"@x")))
	}
	return bytes.Clone(lb.finish())
}

func TestParseLine(t *testing.T) {
	good := line(7, "u1", "u2")
	good = good[:len(good)-1] // without the newline
	flip := func(i int, b byte) []byte {
		c := bytes.Clone(good)
		c[i] = b
		return c
	}
	tests := []struct {
		name   string
		line   []byte
		reason string // "" for valid
	}{
		{"valid", good, ""},
		{"empty", nil, "line too short"},
		{"bad prefix", flip(2, 'C'), "bad frame"},
		{"bad hex", flip(8, 'g'), "bad checksum digits"},
		{"changed data", flip(dataStart+10, '8'), "checksum mismatch"},
		{"no closing brace", good[:len(good)-1], "checksum mismatch"},
		{"trailing byte", append(bytes.Clone(good), ' '), "bad frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, ops, reason := parseLine(tt.line)
			if !strings.HasPrefix(reason, tt.reason) || (tt.reason == "") != (reason == "") {
				t.Fatalf("reason: got %q, want %q", reason, tt.reason)
			}
			if reason == "" && (seq != 7 || ops[0] != '[' || ops[len(ops)-1] != ']') {
				t.Errorf("got seq %d, ops %q; want 7 and an array", seq, ops)
			}
		})
	}
}

// lineOffsets returns the start offset of each line of data.
func lineOffsets(data []byte) []int {
	var offs []int
	for off := 0; off < len(data); {
		offs = append(offs, off)
		i := bytes.IndexByte(data[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return offs
}

// writeTestLog commits one line per id group through a real store in dir
// and returns the log's path and bytes. The last line holds two records.
func writeTestLog(t *testing.T, dir string) (string, []byte, [][]string) {
	t.Helper()
	groups := [][]string{{"u0"}, {"u1"}, {strings.Repeat("long", 40)}, {"u3"}, {"u4", "u5"}}
	db := openDB(t, dir, Options{Sync: SyncNone})
	for _, g := range groups {
		var ops []Op
		for _, id := range g {
			ops = append(ops, db.users.Put(user{ID: id, Email: id + "@x"}))
		}
		mustCommit(t, db.s, ops...)
	}
	db.s.Close()
	path := filepath.Join(dir, logName(1))
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(lineOffsets(data)); got != len(groups) {
		t.Fatalf("log has %d lines, want %d", got, len(groups))
	}
	return path, data, groups
}

// TestTornTail cuts the log at every byte offset of its last two records,
// and appends random and zero bytes: every case whose last line is
// incomplete opens with exactly the complete records, logs what it cut,
// and takes the next append; a tail that ends a line (a newline in it) is
// damage, which Open refuses at the offset of that line.
func TestTornTail(t *testing.T) {
	src := t.TempDir()
	_, full, groups := writeTestLog(t, src)
	offs := lineOffsets(full)
	rng := rand.New(rand.NewPCG(1, 2))

	type tcase struct {
		name   string
		data   []byte
		lines  int   // complete lines in data
		damage int64 // offset of a complete bad line; -1: none
	}
	var cases []tcase
	ends := append(slices.Clone(offs[1:]), len(full)) // where each line ends
	for cut := offs[len(offs)-2]; cut <= len(full); cut++ {
		lines := 0
		for _, end := range ends {
			if end <= cut {
				lines++
			}
		}
		cases = append(cases, tcase{fmt.Sprintf("cut at %d", cut), full[:cut], lines, -1})
	}
	tails := map[string][]byte{
		"zero byte":   {0},
		"zero block":  make([]byte, 4096),
		"newline":     []byte("\n"),
		"zeros+nl":    append(make([]byte, 100), '\n'),
		"frame start": []byte(`{"crc":"`),
	}
	for i := range 8 {
		r := make([]byte, 1+rng.IntN(300))
		for j := range r {
			r[j] = byte(rng.IntN(256))
		}
		tails[fmt.Sprintf("random %d", i)] = r
	}
	for name, tail := range tails {
		fullDamage, cutDamage := int64(-1), int64(-1)
		if bytes.IndexByte(tail, '\n') >= 0 {
			fullDamage, cutDamage = int64(len(full)), int64(offs[len(offs)-1])
		}
		cases = append(cases, tcase{"full+" + name, append(bytes.Clone(full), tail...), len(offs), fullDamage})
		mid := offs[len(offs)-1] + 10
		cases = append(cases, tcase{"cut+" + name, append(bytes.Clone(full[:mid]), tail...), len(offs) - 1, cutDamage})
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, logName(1)), tc.data, 0o600); err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			opts := Options{Sync: SyncNone, Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			if tc.damage >= 0 {
				var ce *CorruptError
				if err := newDB(dir, opts).s.Open(); !errors.As(err, &ce) || ce.Offset != tc.damage {
					t.Fatalf("Open: got %v, want damage at offset %d", err, tc.damage)
				}
				return
			}
			db := openDB(t, dir, opts)
			want := map[string]bool{}
			for _, g := range groups[:tc.lines] {
				for _, id := range g {
					want[id] = true
				}
			}
			if got := db.users.Len(); got != len(want) {
				t.Errorf("opened with %d users, want %d", got, len(want))
			}
			for id := range want {
				if _, ok := db.users.Get(id); !ok {
					t.Errorf("complete record %s missing", id)
				}
			}
			validEnd := 0
			if tc.lines > 0 {
				validEnd = ends[tc.lines-1]
			}
			if dropped := len(tc.data) - validEnd; dropped > 0 {
				if wantLog := fmt.Sprintf("bytes_dropped=%d", dropped); !strings.Contains(logs.String(), wantLog) {
					t.Errorf("log %q does not say %s", logs.String(), wantLog)
				}
			}
			mustCommit(t, db.s, db.users.Put(user{ID: "next", Email: "next@x"}))
			db.s.Close()
			db = openDB(t, dir, opts)
			if got := db.users.Len(); got != len(want)+1 {
				t.Errorf("after append and reopen: %d users, want %d", got, len(want)+1)
			}
			if _, ok := db.users.Get("next"); !ok {
				t.Errorf("appended record missing after reopen")
			}
		})
	}
}

// TestDamageBeforeTail flips random bits anywhere before the last record:
// Open always refuses, naming the file and the offset of the damaged line.
func TestDamageBeforeTail(t *testing.T) {
	src := t.TempDir()
	_, full, _ := writeTestLog(t, src)
	offs := lineOffsets(full)
	tailStart := offs[len(offs)-1]
	lineStart := func(pos int) int {
		start := 0
		for _, o := range offs {
			if o <= pos {
				start = o
			}
		}
		return start
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		data := bytes.Clone(full)
		flips := 1
		if trial%4 == 3 {
			flips = 2 + rng.IntN(3)
		}
		first := tailStart
		for range flips {
			pos := rng.IntN(tailStart)
			data[pos] ^= 1 << rng.IntN(8)
			first = min(first, pos)
		}
		if bytes.Equal(data, full) {
			continue // two flips cancelled out
		}
		dir := t.TempDir()
		path := filepath.Join(dir, logName(1))
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		db := newDB(dir, Options{Sync: SyncNone})
		err := db.s.Open()
		var ce *CorruptError
		if !errors.As(err, &ce) {
			db.s.Close()
			t.Fatalf("trial %d (%d flips, first at %d): Open: got %v, want *CorruptError", trial, flips, first, err)
		}
		if ce.File != path {
			t.Errorf("trial %d: File = %q, want %q", trial, ce.File, path)
		}
		// With one flip the damaged line is known; with several, the first
		// damage is at or before the first flip's line.
		if want := int64(lineStart(first)); (flips == 1 && ce.Offset != want) || ce.Offset > int64(first) {
			t.Errorf("trial %d (%d flips, first at %d): Offset = %d, want %d (%s)", trial, flips, first, ce.Offset, want, ce.Reason)
		}
		if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), fmt.Sprint(ce.Offset)) {
			t.Errorf("trial %d: error %q does not name file and offset", trial, err)
		}
		// The file is left as it was.
		if got, _ := os.ReadFile(path); !bytes.Equal(got, data) {
			t.Errorf("trial %d: a refused Open changed the file", trial)
		}
	}
}

func TestLineReaderLongLines(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 3*readChunk+17)
	data := append(append(append([]byte("a\n"), long...), '\n'), "tail"...)
	lr := newLineReader(bytes.NewReader(data))
	want := []struct {
		line     string
		off      int64
		complete bool
	}{
		{"a", 0, true},
		{string(long), 2, true},
		{"tail", int64(3 + len(long)), false},
	}
	for i, w := range want {
		line, off, complete, ok, err := lr.next()
		if err != nil || !ok {
			t.Fatalf("line %d: ok %v, err %v", i, ok, err)
		}
		if string(line) != w.line || off != w.off || complete != w.complete {
			t.Errorf("line %d: got %d bytes at %d complete %v, want %d bytes at %d complete %v",
				i, len(line), off, complete, len(w.line), w.off, w.complete)
		}
	}
	if _, _, _, ok, _ := lr.next(); ok {
		t.Errorf("next after the end: got ok")
	}
}

// FuzzReadLog feeds the log reader arbitrary bytes, and valid logs with
// garbage after them. The reader must not panic, must hand over only lines
// whose checksum matches, and for a valid log plus garbage that holds no
// frame must return exactly the valid log.
func FuzzReadLog(f *testing.F) {
	valid := append(line(1, "u1"), line(2, "u2", "u3")...)
	f.Add([]byte{}, uint8(0), []byte{})
	f.Add(valid, uint8(2), []byte("\x00\x00\x00"))
	f.Add(valid[:len(valid)-5], uint8(1), []byte("{\"crc\":\"00000000\",\"d\":{}}\n"))
	f.Add([]byte("\n\n\n"), uint8(3), []byte("garbage\nmore"))
	f.Add(line(2, "u1"), uint8(5), valid[:30])
	f.Fuzz(func(t *testing.T, data []byte, n uint8, garbage []byte) {
		checkScan(t, data)

		// A valid log of n%6 lines whose ids come from data, then garbage.
		var log []byte
		lines := int(n % 6)
		for i := range lines {
			id := fmt.Sprintf("%x", data[min(i, len(data)):min(i+4, len(data))])
			log = append(log, line(uint64(i+1), "id"+id)...)
		}
		input := append(bytes.Clone(log), garbage...)
		res, err := checkScan(t, input)
		if bytes.IndexByte(garbage, '\n') < 0 {
			// No line of the garbage is complete: it is all torn tail.
			if err != nil || res.Lines != lines || res.End != int64(len(log)) || res.TornBytes() != int64(len(garbage)) {
				t.Fatalf("valid log of %d lines (%d bytes) + %q: got %+v, %v", lines, len(log), garbage, res, err)
			}
			return
		}
		var ce *CorruptError
		if errors.As(err, &ce) {
			if ce.Offset < int64(len(log)) {
				t.Fatalf("damage reported at %d, inside the valid log of %d bytes", ce.Offset, len(log))
			}
		} else if err != nil || res.Lines < lines || res.End < int64(len(log)) {
			t.Fatalf("valid log of %d lines + %q: got %+v, %v", lines, garbage, res, err)
		}
	})
}

// checkScan runs scanLog on data and checks every line it hands over.
func checkScan(t *testing.T, data []byte) (scanResult, error) {
	t.Helper()
	lines := 0
	res, err := scanLog(bytes.NewReader(data), "fuzz", func(off int64, seq uint64, ops []byte) error {
		lines++
		end := bytes.IndexByte(data[off:], '\n')
		if end < 0 {
			t.Fatalf("line at %d has no newline", off)
		}
		gotSeq, gotOps, reason := parseLine(data[off : off+int64(end)])
		if reason != "" || gotSeq != seq || !bytes.Equal(gotOps, ops) {
			t.Fatalf("line at %d handed over but invalid: %s", off, reason)
		}
		if seq != uint64(lines) {
			t.Fatalf("line at %d: seq %d, want %d", off, seq, lines)
		}
		return nil
	})
	var ce *CorruptError
	if err != nil && !errors.As(err, &ce) {
		t.Fatalf("scanLog: unexpected error %v", err)
	}
	if res.Lines != lines || res.End > int64(len(data)) || res.Size > int64(len(data)) || res.End > res.Size && err == nil {
		t.Fatalf("inconsistent result %+v for %d bytes, %d lines", res, len(data), lines)
	}
	if err == nil && res.Size != int64(len(data)) {
		t.Fatalf("read %d of %d bytes", res.Size, len(data))
	}
	// Open reads the file whole: the same data must read the same way.
	// Its ops are slices of the data, found where they are (cold tables
	// note their values' offsets from them).
	whole, werr := scanLines(newBytesLineReader(data), "fuzz", func(off int64, _ uint64, ops []byte) error {
		at := offsetIn(data, ops)
		if at < off || !bytes.Equal(data[at:at+int64(len(ops))], ops) {
			t.Fatalf("line at %d: ops found at %d", off, at)
		}
		return nil
	})
	if whole != res || fmt.Sprint(werr) != fmt.Sprint(err) {
		t.Fatalf("streamed: %+v, %v; whole: %+v, %v", res, err, whole, werr)
	}
	return res, err
}
