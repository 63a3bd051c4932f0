package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Report describes the newest log file of a store directory, as Verify
// found it or as Repair left it.
type Report struct {
	File       string        // path of the newest log file; "" if there is none
	Lines      int           // valid lines before any damage: each is one or more commits
	Ops        int           // ops in those lines
	ValidBytes int64         // bytes of those lines
	TornBytes  int64         // bytes after them that are no record and have none after them: an unsynced tail, which Open cuts off
	Damage     *CorruptError // the first damage that has valid records after it; nil if none
	LinesAfter int           // valid lines after the damage, which a Repair cuts off too
	CopiedTo   string        // Repair only: where the uncut original was saved; "" if nothing was cut
}

// Verify reads the newest log in dir and reports what it holds: valid
// lines, a torn tail, and the first damage with valid records after it,
// which is also returned as a *CorruptError. It checks framing, checksums,
// sequence numbers and the shape of every op, not the values against their
// table's type, which only Open knows.
//
// Verify only reads, takes no lock and is safe beside a running server; a
// line being appended at that moment may show as torn bytes. fsys nil means
// the operating system.
func Verify(fsys FS, dir string) (Report, error) {
	if fsys == nil {
		fsys = osFS{}
	}
	var rep Report
	var err error
	// A compaction may remove the newest log between listing and opening.
	for range 3 {
		rep, err = verify(fsys, dir)
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	return rep, err
}

func verify(fsys FS, dir string) (Report, error) {
	var rep Report
	gens, _, err := listLogs(fsys, dir)
	if err != nil || len(gens) == 0 {
		return rep, err
	}
	rep.File = filepath.Join(dir, logName(gens[len(gens)-1]))
	f, err := fsys.OpenFile(rep.File, os.O_RDONLY, 0)
	if err != nil {
		return rep, fmt.Errorf("storage: verify: %w", err)
	}
	defer f.Close()
	var ops []rawOp
	res, err := scanLog(f, rep.File, func(off int64, _ uint64, data []byte) error {
		var err error
		ops, err = decodeOps(data, ops)
		if err != nil {
			return &CorruptError{File: rep.File, Offset: off, Reason: err.Error()}
		}
		rep.Ops += len(ops)
		return nil
	})
	rep.Lines, rep.ValidBytes, rep.TornBytes = res.Lines, res.End, res.TornBytes()
	if errors.As(err, &rep.Damage) {
		rep.TornBytes = 0
		rep.LinesAfter, err = countValidAfter(fsys, rep.File, rep.Damage.Offset)
		if err == nil {
			err = rep.Damage
		}
	}
	return rep, err
}

// countValidAfter counts the lines after offset that hold a valid frame.
func countValidAfter(fsys FS, path string, offset int64) (int, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return 0, fmt.Errorf("storage: verify: %w", err)
	}
	defer f.Close()
	if _, err := io.CopyN(io.Discard, f, offset); err != nil {
		return 0, fmt.Errorf("storage: verify: %w", err)
	}
	lr := newLineReader(f)
	n := 0
	for first := true; ; first = false {
		line, _, complete, ok, err := lr.next()
		if err != nil {
			return n, fmt.Errorf("storage: verify: %w", err)
		}
		if !ok {
			return n, nil
		}
		from := 0
		if first {
			from = 1 // the damaged line itself
		}
		if findValidFrame(line, complete, from) >= 0 {
			n++
		}
	}
}

// Repair takes dir's lock, so it refuses to run beside a server, and cuts
// the newest log at its first damage, or at its torn tail, so that the store
// opens with the records before that point. Everything after the cut is
// lost to the store, so it is for an operator who has read Verify's report.
//
// The uncut original is first copied to <file>.damaged-<UTC time> (fsynced,
// mode 0600), never deleted. It is copied rather than renamed aside because
// a crash between two renames could leave a directory with no log at all,
// which would open as an empty store. A log with neither damage nor a torn
// tail is left alone. fsys nil means the operating system.
func Repair(fsys FS, dir string) (Report, error) {
	if fsys == nil {
		fsys = osFS{}
	}
	lock, err := lockDir(fsys, dir)
	if err != nil {
		return Report{}, err
	}
	defer lock.Close()
	rep, err := verify(fsys, dir)
	if err != nil && rep.Damage == nil {
		return rep, err
	}
	cut := rep.ValidBytes
	if rep.Damage != nil {
		cut = rep.Damage.Offset
	} else if rep.TornBytes == 0 {
		return rep, nil
	}
	rep.CopiedTo = rep.File + ".damaged-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := copyFile(fsys, rep.File, rep.CopiedTo); err != nil {
		return rep, fmt.Errorf("storage: repair: save original: %w", err)
	}
	if err := fsys.SyncDir(dir); err != nil {
		return rep, fmt.Errorf("storage: repair: %w", err)
	}
	f, err := fsys.OpenFile(rep.File, os.O_RDWR, 0)
	if err != nil {
		return rep, fmt.Errorf("storage: repair: %w", err)
	}
	err = f.Truncate(cut)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return rep, fmt.Errorf("storage: repair: cut %s: %w", rep.File, err)
	}
	return rep, nil
}

// copyFile copies src to a new file dst (0600) and fsyncs it.
func copyFile(fsys FS, src, dst string) error {
	in, err := fsys.OpenFile(src, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := fsys.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Sync()
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}
