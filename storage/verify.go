package storage

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// Report describes the newest log file of a store directory, as Verify
// found it or as Repair left it.
type Report struct {
	File       string        // path of the newest log file; "" if there is none
	Lines      int           // valid lines before any damage: each is one or more commits
	Ops        int           // ops in those lines
	ValidBytes int64         // bytes of those lines
	TornBytes  int64         // an incomplete last line after them: an unsynced tail, which Open cuts off
	Damage     *CorruptError // the first damage: a complete line that is not a valid record; nil if none
	LinesAfter int           // valid lines after the damage, which Repair keeps
	CopiedTo   string        // Repair only: where the original was saved; "" if nothing was changed

	// Repair and PlanRepair only: what the repaired log keeps and what
	// it loses.
	Kept     int         // valid lines kept, renumbered in order
	Lost     []LostBytes // damaged bytes dropped, with what can be read of them
	LostSeqs []uint64    // sequence numbers missing between the kept lines
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
