package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"searchsvc/storage"
)

type note struct {
	ID   string `json:"id"`
	Text string `json:"text"`
}

// writeStore puts n records into DATA_DIR/main through the real store,
// beside the format file a server would have written.
func writeStore(t *testing.T, dataDir string, n int) string {
	t.Helper()
	if err := ensureDataFormat(dataDir); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(dataDir, mainStoreDir)
	st := storage.New(dir, storage.Options{Sync: storage.SyncNone})
	notes := storage.Register(st, "notes", storage.TableConfig[note]{ID: func(n *note) string { return n.ID }})
	if err := st.Open(); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := st.Commit(notes.Put(note{ID: strings.Repeat("x", i+1), Text: "hello"})); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "log.*"))
	if len(matches) != 1 {
		t.Fatalf("log files: %v", matches)
	}
	return matches[0]
}

func runCmd(t *testing.T, env map[string]string, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	err := run(context.Background(), append([]string{"searchsvc"}, args...), envFunc(env), &out, &out)
	return out.String(), err
}

func TestVerifyAndRepair(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"DATA_DIR": data}
	logFile := writeStore(t, data, 10)

	out, err := runCmd(t, env, "verify")
	if err != nil || !strings.Contains(out, "main: ") || !strings.Contains(out, "10 records") {
		t.Fatalf("verify of a sound store: got %v\n%s", err, out)
	}

	// Damage the third line: a flipped byte inside its JSON.
	b, _ := os.ReadFile(logFile)
	lines := bytes.SplitAfter(b, []byte("\n"))
	off := len(lines[0]) + len(lines[1]) + 20
	b[off] ^= 0x01
	os.WriteFile(logFile, b, 0o600)

	out, err = runCmd(t, env, "verify")
	if err == nil || !strings.Contains(err.Error(), "damaged: main") || !strings.Contains(out, "DAMAGE at byte") {
		t.Fatalf("verify of a damaged store: got %v\n%s", err, out)
	}
	out, err = runCmd(t, env, "repair")
	if err != nil || !strings.Contains(out, "would rewrite") || !strings.Contains(out, "keeping 9 valid lines") ||
		!strings.Contains(out, "sequence number 3, notes put") || !strings.Contains(out, "main: lost sequence numbers: 3\n") {
		t.Fatalf("repair without --yes: got %v\n%s", err, out)
	}
	if after, _ := os.ReadFile(logFile); !bytes.Equal(after, b) {
		t.Fatal("repair without --yes changed the file")
	}
	out, err = runCmd(t, env, "repair", "--yes")
	if err != nil || !strings.Contains(out, "the original is kept at") || !strings.Contains(out, "main: lost sequence numbers: 3\n") {
		t.Fatalf("repair --yes: got %v\n%s", err, out)
	}
	if out, err := runCmd(t, env, "verify"); err != nil || !strings.Contains(out, "9 records") {
		t.Errorf("verify after repair: got %v\n%s; want the 9 intact records kept", err, out)
	}
	kept, _ := filepath.Glob(filepath.Join(data, mainStoreDir, "*damaged*"))
	if len(kept) != 1 {
		t.Fatalf("kept originals: %v", kept)
	}
	if orig, _ := os.ReadFile(kept[0]); !bytes.Equal(orig, b) {
		t.Error("the kept original differs from the damaged file")
	}
	if _, err := runCmd(t, env, "repair", "--now"); err == nil {
		t.Error("repair --now: want a usage error")
	}
}

// TestRestoreIsAllOrNothing: a backup that does not open leaves DATA_DIR
// untouched, and the next restore of a sound one goes through.
func TestRestoreIsAllOrNothing(t *testing.T) {
	src := t.TempDir()
	writeStore(t, src, 10)
	good := filepath.Join(t.TempDir(), "good")
	if _, err := runCmd(t, map[string]string{"DATA_DIR": src}, "backup", good); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if _, err := copyFiles(good, bad); err != nil {
		t.Fatal(err)
	}
	logs, _ := filepath.Glob(filepath.Join(bad, mainStoreDir, "log.*"))
	b, _ := os.ReadFile(logs[0])
	b[len(b)/3] ^= 0x04 // damage before the tail: Open refuses it
	os.WriteFile(logs[0], b, 0o600)

	target := map[string]string{"DATA_DIR": t.TempDir()}
	if _, err := runCmd(t, target, "restore", bad); err == nil || !strings.Contains(err.Error(), "does not open") {
		t.Fatalf("restore of a damaged backup: got %v", err)
	}
	entries, _ := os.ReadDir(target["DATA_DIR"])
	if len(entries) != 0 {
		t.Fatalf("a failed restore left %v in DATA_DIR", entries)
	}
	if out, err := runCmd(t, target, "restore", good); err != nil || !strings.Contains(out, "restored") {
		t.Fatalf("restore after a failed one: %v\n%s", err, out)
	}
	if out, err := runCmd(t, target, "verify"); err != nil || !strings.Contains(out, "10 records") {
		t.Errorf("verify after restore: %v\n%s", err, out)
	}
}

// TestVerifyLastLineDamage: a checksum failure in the last complete line
// is damage, not a torn tail: verify exits non-zero; only an incomplete
// last line is a torn tail.
func TestVerifyLastLineDamage(t *testing.T) {
	data := t.TempDir()
	env := map[string]string{"DATA_DIR": data}
	logFile := writeStore(t, data, 5)
	b, _ := os.ReadFile(logFile)
	b[len(b)-10] ^= 0x04
	os.WriteFile(logFile, b, 0o600)
	if out, err := runCmd(t, env, "verify"); err == nil || !strings.Contains(out, "DAMAGE at byte") {
		t.Fatalf("verify with a damaged last line: got %v\n%s; want a failure", err, out)
	}
	b[len(b)-10] ^= 0x04
	os.WriteFile(logFile, append(b, `{"crc":"0012`...), 0o600)
	if out, err := runCmd(t, env, "verify"); err != nil || !strings.Contains(out, "12 bytes of torn tail") {
		t.Fatalf("verify with an incomplete last line: got %v\n%s; want success, a torn tail", err, out)
	}
}

// TestRepairEndsNamedSessions: repair --yes of the sessions store ends
// every record a damaged line names, a put included (a session revived in
// an older state is worse than one lost), and says so; the main store
// keeps such a put's record as an earlier line had it.
func TestRepairEndsNamedSessions(t *testing.T) {
	for _, store := range []string{sessionStoreDir, mainStoreDir} {
		t.Run(store, func(t *testing.T) {
			data := t.TempDir()
			env := map[string]string{"DATA_DIR": data}
			logFile := writeStore(t, data, 3)
			if store == sessionStoreDir {
				if err := os.Rename(filepath.Join(data, mainStoreDir), filepath.Join(data, sessionStoreDir)); err != nil {
					t.Fatal(err)
				}
				logFile = filepath.Join(data, sessionStoreDir, filepath.Base(logFile))
			}
			b, _ := os.ReadFile(logFile)
			lines := bytes.SplitAfter(b, []byte("\n"))
			b[len(lines[0])+len(framePrefixForTest)+2] ^= 0x04 // the checksum of line 2, which puts "xx"
			os.WriteFile(logFile, b, 0o600)
			out, err := runCmd(t, env, "repair", "--yes")
			if err != nil {
				t.Fatalf("repair --yes: %v\n%s", err, out)
			}
			ended := strings.Contains(out, store+": lost") && strings.Contains(out, "; deleted again: notes xx\n")
			if want := store == sessionStoreDir; ended != want {
				t.Errorf("%s: the record named ended: got %v, want %v\n%s", store, ended, want, out)
			}
		})
	}
}

// framePrefixForTest is how every log line starts, up to its checksum.
const framePrefixForTest = `{"crc":"`
