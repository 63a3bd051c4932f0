package storage

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"time"
)

// LostBytes is a stretch of a damaged log that Repair drops: where it was,
// why it is no record, and what could still be read of it. Seq and Ops
// are read from damaged bytes, so they may themselves be damaged; they are
// what an operator needs to know what to restore or re-check.
type LostBytes struct {
	Offset int64
	Bytes  int
	Reason string
	Seq    uint64   // the sequence number it seems to hold; 0 if unreadable
	Ops    []LostOp // the ops that can be read of it
	Torn   bool     // an incomplete last line: never acknowledged
	// Deleted are the records Repair deletes in the damaged line's place
	// (see RepairOptions); ops of Ops missing from it had a table or id
	// that is not a valid name once read.
	Deleted []LostOp
}

// RepairOptions says what Repair does with the records a damaged line
// names. A delete that is lost would bring its record back (a deleted
// user, a logged-out session, a disconnected account's credentials), so
// Repair always writes the deletes it can read of a damaged line again,
// in the line's place so that a later put of the same id still wins.
type RepairOptions struct {
	// DeleteNamed deletes every record a damaged line names, put or
	// delete: for a store whose records are cheaper lost than revived
	// in an older state (sessions: their owner signs in again).
	DeleteNamed bool
}

// LostOp is one op read from damaged bytes.
type LostOp struct {
	Table string
	ID    string
	Del   bool
}

// Repair takes dir's lock, so it refuses to run beside a server, and
// rewrites the newest log keeping every valid record, in order: it drops
// only the damaged lines (and of a line that damage merged with the next,
// only the damaged part), and a torn tail. The report lists what was
// dropped, with the sequence numbers, tables and ids that can be read of
// it and the sequence numbers missing between the lines kept. The
// deletes that can be read of a damaged line are written again in its
// place (and with opt.DeleteNamed every record it names is deleted), so a
// lost delete does not bring its record back; a lost put leaves the
// record as an earlier line had it. A damaged line whose ops cannot be
// read is reported with none: the report is what to check.
//
// The original is first copied to <file>.damaged-<UTC time> (fsynced,
// mode 0600), never deleted. The repaired log is written as the next
// generation like a compaction (temp file, fsync, rename, directory
// fsync), so a crash leaves either the old log or the whole new one. A log
// with neither damage nor a torn tail is left alone. fsys nil means the
// operating system.
func Repair(fsys FS, dir string, opt RepairOptions) (Report, error) {
	return repair(fsys, dir, opt, true)
}

// PlanRepair is Repair without changing anything: the report says what
// Repair would keep and drop. It takes no lock.
func PlanRepair(fsys FS, dir string, opt RepairOptions) (Report, error) {
	return repair(fsys, dir, opt, false)
}

func repair(fsys FS, dir string, opt RepairOptions, write bool) (Report, error) {
	if fsys == nil {
		fsys = osFS{}
	}
	if write {
		lock, err := lockDir(fsys, dir)
		if err != nil {
			return Report{}, err
		}
		defer lock.Close()
	}
	rep, err := verify(fsys, dir)
	if err != nil && rep.Damage == nil {
		return rep, err
	}
	if rep.Damage == nil && rep.TornBytes == 0 {
		return rep, nil
	}
	gens, _, err := listLogs(fsys, dir)
	if err != nil {
		return rep, err
	}
	gen := gens[len(gens)-1]
	if !write {
		return rep, salvage(fsys, rep.File, io.Discard, opt, &rep)
	}
	rep.CopiedTo = rep.File + ".damaged-" + time.Now().UTC().Format("20060102T150405.000000000Z")
	if err := copyFile(fsys, rep.File, rep.CopiedTo); err != nil {
		return rep, fmt.Errorf("storage: repair: save original: %w", err)
	}
	final := filepath.Join(dir, logName(gen+1))
	tmp := final + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return rep, fmt.Errorf("storage: repair: %w", err)
	}
	err = salvage(fsys, rep.File, f, opt, &rep)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, final)
	}
	if err == nil {
		err = fsys.SyncDir(dir)
	}
	if err != nil {
		fsys.Remove(tmp)
		return rep, fmt.Errorf("storage: repair: write %s: %w", final, err)
	}
	// Open would remove it too; the saved copy keeps its bytes.
	if err := fsys.Remove(rep.File); err != nil {
		return rep, fmt.Errorf("storage: repair: remove %s: %w", rep.File, err)
	}
	rep.File = final
	return rep, nil
}

// salvage reads the log at path and writes every valid record to out,
// renumbered from 1, filling rep's Kept, Lost and LostSeqs. In a damaged
// line's place it writes the deletes opt asks of it (see RepairOptions).
func salvage(fsys FS, path string, out io.Writer, opt RepairOptions, rep *Report) error {
	in, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer in.Close()
	rep.Kept, rep.Lost, rep.LostSeqs = 0, nil, nil
	lr := newLineReader(in)
	sv := &salvager{out: out, opt: opt, rep: rep}
	for {
		line, off, complete, ok, err := lr.next()
		if err != nil {
			return err
		}
		if !ok {
			return sv.werr
		}
		if !complete {
			sv.lose(lostBytes(off, line, "incomplete last line", true))
			return sv.werr
		}
		if seq, data, reason := parseLine(line); reason == "" {
			if err := sv.keep(seq, data); err != nil {
				sv.lose(lostBytes(off, line, "valid checksum, bad ops: "+err.Error(), false))
			}
			continue
		}
		sv.damaged(line, off)
	}
}

// salvager writes out what salvage keeps of a log, line by line, and
// reports the rest. Only an error writing out (werr) stops it.
type salvager struct {
	out     io.Writer
	opt     RepairOptions
	rep     *Report
	lastSeq uint64
	ops     []rawOp
	werr    error
	written uint64 // lines written, kept or tombstones: their new sequence numbers
}

// write writes data as the next line.
func (sv *salvager) write(data []byte) {
	sv.written++
	if _, err := sv.out.Write(frameLine(sv.written, data)); err != nil && sv.werr == nil {
		sv.werr = err
	}
}

// lose reports damaged bytes and writes the deletes read of them.
func (sv *salvager) lose(l LostBytes) {
	if !l.Torn {
		if data, dels := tombstones(l.Ops, sv.opt.DeleteNamed); len(dels) > 0 {
			l.Deleted = dels
			sv.write(data)
		}
	}
	sv.rep.Lost = append(sv.rep.Lost, l)
}

// keep writes a valid line's ops array as the next line, unless its ops
// do not decode (a checksum cannot catch a writer's bug).
func (sv *salvager) keep(seq uint64, data []byte) error {
	var derr error
	if sv.ops, derr = decodeOps(data, sv.ops); derr != nil {
		return derr
	}
	for s := sv.lastSeq + 1; s < seq; s++ {
		sv.rep.LostSeqs = append(sv.rep.LostSeqs, s)
	}
	sv.lastSeq = max(sv.lastSeq, seq)
	sv.rep.Kept++
	sv.write(data)
	return nil
}

// damaged salvages what it can of line, at off, whose frame does not
// check.
func (sv *salvager) damaged(line []byte, off int64) {
	// A flipped newline merges two lines: a valid frame may run to the
	// end of this one after the damaged part. If only that newline was
	// hit, the part before it is whole.
	_, _, reason := parseLine(line)
	p := findValidFrame(line, true, 1)
	bad := line
	if p >= 0 {
		bad = line[:p]
	}
	if seq, data, r := parseLine(bad[:max(len(bad)-1, 0)]); r == "" && sv.keep(seq, data) == nil {
		sv.rep.Lost = append(sv.rep.Lost, LostBytes{Offset: off + int64(len(bad)-1), Bytes: 1, Reason: "a damaged newline"})
	} else {
		sv.lose(lostBytes(off, bad, reason, false))
	}
	if p >= 0 {
		seq, data, _ := parseLine(line[p:])
		if err := sv.keep(seq, data); err != nil {
			sv.lose(lostBytes(off+int64(p), line[p:], "valid checksum, bad ops: "+err.Error(), false))
		}
	}
}

// frameLine is a whole log line holding the ops array ops as sequence
// number seq.
func frameLine(seq uint64, ops []byte) []byte {
	var b []byte
	b = append(b, framePrefix...)
	b = append(b, "00000000"...)
	b = append(b, frameMid...)
	b = append(b, seqPrefix...)
	b = strconv.AppendUint(b, seq, 10)
	b = append(b, opsPrefix...)
	b = append(b, ops...)
	b = append(b, "}}\n"...)
	putHex32(b[len(framePrefix):], crc32.Checksum(b[dataStart:len(b)-2], castagnoli))
	return b
}

var (
	lostSeqRe = regexp.MustCompile(`"seq":([0-9]{1,19})`)
	lostOpRe  = regexp.MustCompile(`\{"t":"([^"\\]{1,200})","id":"([^"\\]{1,200})"(,"del":true)?`)
)

// lostBytes describes damaged bytes, reading what it can of them.
func lostBytes(off int64, b []byte, reason string, torn bool) LostBytes {
	l := LostBytes{Offset: off, Bytes: len(b), Reason: reason, Torn: torn}
	if m := lostSeqRe.FindSubmatch(b); m != nil {
		l.Seq, _ = strconv.ParseUint(string(m[1]), 10, 64)
	}
	for _, m := range lostOpRe.FindAllSubmatch(b, 1000) {
		l.Ops = append(l.Ops, LostOp{Table: string(m[1]), ID: string(m[2]), Del: len(m[3]) > 0})
	}
	return l
}

// tombstones is the ops array deleting the records of ops that are
// deletes (all of them with all), each once, and those ops. An op whose
// table or id is no valid name (damage can make one) is left out: the
// repaired log must load.
func tombstones(ops []LostOp, all bool) ([]byte, []LostOp) {
	var b []byte
	var dels []LostOp
	for _, o := range ops {
		d := LostOp{Table: o.Table, ID: o.ID, Del: true}
		if (!o.Del && !all) || slices.Contains(dels, d) || !validName([]byte(o.Table)) || !validName([]byte(o.ID)) {
			continue
		}
		if b == nil {
			b = append(b, '[')
		} else {
			b = append(b, ',')
		}
		b = append(b, `{"t":"`...)
		b = append(b, o.Table...)
		b = append(b, `","id":"`...)
		b = append(b, o.ID...)
		b = append(b, `","del":true}`...)
		dels = append(dels, d)
	}
	if b == nil {
		return nil, nil
	}
	b = append(b, ']')
	if _, ok := parseOps(b, nil); !ok {
		return nil, nil
	}
	return b, dels
}
