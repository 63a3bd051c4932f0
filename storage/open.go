package storage

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// logName is the name of the log file of generation gen. Ten digits keep
// the names in generation order when sorted as text.
func logName(gen uint64) string { return fmt.Sprintf("log.%010d.jsonl", gen) }

// parseLogName returns the generation of a log file name or of the temp
// file of a compaction to it.
func parseLogName(name string) (gen uint64, tmp, ok bool) {
	rest, tmp := strings.CutSuffix(name, ".tmp")
	rest, ok = strings.CutPrefix(rest, "log.")
	if !ok {
		return 0, false, false
	}
	rest, ok = strings.CutSuffix(rest, ".jsonl")
	if !ok || len(rest) != 10 {
		return 0, false, false
	}
	gen, err := strconv.ParseUint(rest, 10, 64)
	if err != nil || gen == 0 {
		return 0, false, false
	}
	return gen, tmp, true
}

// listLogs returns the generations of the log files in dir, oldest first,
// and the names of compaction temp files.
func listLogs(fsys FS, dir string) (gens []uint64, tmps []string, err error) {
	names, err := fsys.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("storage: list %s: %w", dir, err)
	}
	for _, name := range names {
		gen, tmp, ok := parseLogName(name)
		switch {
		case !ok:
		case tmp:
			tmps = append(tmps, name)
		default:
			gens = append(gens, gen)
		}
	}
	return gens, tmps, nil
}

// open does Open's work; on error the caller closes what it opened.
func (s *Store) open() error {
	created := missingDirs(s.fsys, s.dir)
	if err := s.fsys.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("storage: create %s: %w", s.dir, err)
	}
	lock, err := lockDir(s.fsys, s.dir)
	if err != nil {
		return err
	}
	s.lock = lock
	gens, tmps, err := listLogs(s.fsys, s.dir)
	if err != nil {
		return err
	}
	// A temp file is a compaction that never got renamed into place: the
	// log it was made from is still there and complete.
	for _, name := range tmps {
		if err := s.fsys.Remove(filepath.Join(s.dir, name)); err != nil {
			s.log.Warn("cannot remove unfinished compaction", "file", name, "err", err)
		}
	}
	if len(gens) == 0 {
		if err := s.createLog(created); err != nil {
			return err
		}
		// Nothing to replay: the tables start empty, their indexes built.
		for _, t := range s.tables {
			if err := t.finishReplay(s.path(), s.now()); err != nil {
				return err
			}
		}
		return nil
	}
	s.gen = gens[len(gens)-1]
	path := filepath.Join(s.dir, logName(s.gen))
	f, err := s.fsys.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("storage: open log: %w", err)
	}
	s.file = f
	res, err := s.replay(f, path)
	if err != nil {
		return err
	}
	if n := res.TornBytes(); n > 0 {
		s.log.Warn("cut a torn tail off the log", "file", path, "offset", res.End,
			"bytes_dropped", n, "reason", res.Torn)
		if err := f.Truncate(res.End); err != nil {
			return fmt.Errorf("storage: truncate %s: %w", path, err)
		}
		if err := f.Sync(); err != nil {
			return fmt.Errorf("storage: fsync %s: %w", path, err)
		}
		s.count(1, 0)
	}
	// Older generations were superseded once the newest was renamed into
	// place, which happened only after it was complete and fsynced.
	for _, gen := range gens[:len(gens)-1] {
		if err := s.fsys.Remove(filepath.Join(s.dir, logName(gen))); err != nil {
			s.log.Warn("cannot remove superseded log", "file", logName(gen), "err", err)
		}
	}
	return nil
}

// missingDirs returns dir and those of its ancestors that do not exist yet,
// deepest first.
func missingDirs(fsys FS, dir string) []string {
	var missing []string
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		if _, err := fsys.ReadDir(p); !errors.Is(err, fs.ErrNotExist) {
			return missing
		}
		missing = append(missing, p)
		if p == filepath.Dir(p) {
			return missing
		}
	}
}

// createLog creates the first log file. Before any commit can be
// acknowledged in it, its directory entry must be durable, and so must the
// entries of the directories Open created: the parent of dir and of each.
func (s *Store) createLog(created []string) error {
	s.gen = 1
	path := filepath.Join(s.dir, logName(s.gen))
	f, err := s.fsys.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return fmt.Errorf("storage: create log: %w", err)
	}
	s.file = f
	if s.opts.Sync == SyncNone {
		return nil
	}
	dirs := []string{s.dir, filepath.Dir(filepath.Clean(s.dir))}
	for _, d := range created {
		if p := filepath.Dir(d); p != dirs[len(dirs)-1] && p != d {
			dirs = append(dirs, p)
		}
	}
	for _, d := range dirs {
		if err := s.fsys.SyncDir(d); err != nil {
			return fmt.Errorf("storage: fsync %s: %w", d, err)
		}
		s.count(1, 0)
	}
	return nil
}

// replay applies the log in f to the tables, then drops expired records and
// builds the indexes. It holds mu throughout, so reads wait for it.
//
// The log is read in chunks, not whole: a table keeps a copy of the last
// value of each of its records until the replay ends, and a cold table's
// caller keeps what it needs of each as it is read, so the memory a start
// takes is about what the store then holds, not the size of its log (of
// which dead records may be half).
func (s *Store) replay(f File, path string) (scanResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ops []rawOp
	lr := newLineReader(f)
	res, err := scanLines(lr, path, func(off int64, _ uint64, data []byte) error {
		var err error
		ops, err = decodeOps(data, ops)
		if err != nil {
			return &CorruptError{File: path, Offset: off, Reason: err.Error()}
		}
		// Where data starts in the file is where a cold table finds its
		// records' values.
		dataOff := lr.fileOffset(off, data)
		for _, o := range ops {
			t := s.byName[string(o.T)]
			if t == nil {
				name := string(o.T)
				s.log.Warn("log holds a table that is not registered; keeping its records as they are", "table", name)
				t = &rawTable{name: name, recs: make(map[string]json.RawMessage)}
				s.byName[name] = t
				s.tables = append(s.tables, t)
			}
			if o.Del {
				t.replayDelete(o.ID)
			} else {
				voff := int64(-1)
				if dataOff >= 0 && o.At >= 0 {
					voff = dataOff + int64(o.At)
				}
				t.replayPut(o.ID, o.V, off, voff)
			}
			if err := s.replayErr; err != nil {
				err.File = path
				return err
			}
		}
		s.fileOps += int64(len(ops))
		return nil
	})
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			return res, err
		}
		return res, fmt.Errorf("storage: replay: %w", err)
	}
	now := s.now()
	for _, t := range s.tables {
		if err := t.finishReplay(path, now); err != nil {
			return res, fmt.Errorf("storage: replay %s: %w", path, err)
		}
	}
	s.seq = res.LastSeq
	s.stats.FileBytes = res.End
	return res, nil
}

// offsetIn returns where part, a slice of buf whose capacity runs to
// buf's (as the lines a newBytesLineReader hands out do), starts in buf,
// or -1 if it is not such a slice.
func offsetIn(buf, part []byte) int64 {
	off := cap(buf) - cap(part)
	if len(part) == 0 || off < 0 || off >= len(buf) || &buf[off] != &part[0] {
		return -1
	}
	return int64(off)
}

// rawTable keeps the records of a table found in the log but not
// registered, so that compaction carries them over instead of losing them.
type rawTable struct {
	name string
	recs map[string]json.RawMessage
}

func (t *rawTable) tableName() string { return t.name }
func (t *rawTable) count() int        { return len(t.recs) }
func (t *rawTable) replayPut(id, raw []byte, _, _ int64) {
	t.recs[string(id)] = bytes.Clone(raw)
}
func (t *rawTable) replayDelete(id []byte)               { delete(t.recs, string(id)) }
func (t *rawTable) finishReplay(string, time.Time) error { return nil }
func (t *rawTable) drop([]string)                        {}
func (t *rawTable) applyPending(int64)                   {}
func (t *rawTable) switchRefs(bool)                      {}
func (t *rawTable) clearPending()                        {}
func (t *rawTable) writeLive(_ time.Time, emit func(table, id string, v []byte) (int64, error)) ([]string, error) {
	for id, v := range t.recs {
		if _, err := emit(t.name, id, v); err != nil {
			return nil, err
		}
	}
	return nil, nil
}
