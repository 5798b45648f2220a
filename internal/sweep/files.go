package sweep

// Partial results on disk: written whole or not at all, read only from a
// regular file, and never larger than a part of its sweep can be.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"github.com/locksim/locksim/report"
)

// Format is a format of partial result the merge reads: its Schema (the
// header's), and the most bytes one of its runs takes (RunBytes) and its
// fixed part takes beyond the header (Extra), which bound the size of a
// part (ReadPartial). UnitJobs is the most jobs one unit of a sweep
// sharded ByUnits holds (0 or 1: the sweep is sharded by jobs), which a
// shard may own beyond its even share.
type Format struct {
	Schema   string
	RunBytes int64
	Extra    int64
	UnitJobs int64
}

// MaxHeader is the most bytes the header of a partial result takes: the
// fields with a plain value that open it (readHeader).
const MaxHeader = 1 << 20

// WritePartial writes the partial result p as JSON (one object and a
// newline) to file, through a temporary file beside it and a rename
// (report.WriteFile): a failed or interrupted write leaves no half-written
// part for a merge to misread.
func WritePartial(file string, p any) error {
	var b bytes.Buffer
	if err := json.NewEncoder(&b).Encode(p); err != nil {
		return err
	}
	return report.WriteFile(file, b.Bytes())
}

// ReadPartials reads the partial results in files, and their headers (see
// ReadPartial).
func ReadPartials(files []string, build string, formats ...Format) ([][]byte, []Header, error) {
	data := make([][]byte, len(files))
	hs := make([]Header, len(files))
	for i, f := range files {
		var err error
		if data[i], hs[i], err = ReadPartial(f, build, formats...); err != nil {
			return nil, nil, err
		}
	}
	return data, hs, nil
}

// ReadPartial reads the partial result in file, and its header, and checks
// that it is one of formats, written by build (another build may compute
// other outcomes, and a merge replays runs). Only a regular file is read:
// it is opened without blocking (a named pipe would wait for a writer for
// ever) and anything else (a device such as /dev/zero, a pipe, a
// directory) is refused. The header is read first (it opens the file, as a
// shard writes it), checked (format, build, shard numbers), and the file is
// refused, unread, if it is larger than a part of that sweep can be
// (partialLimit); the read itself stops at that size, so a file that grows
// meanwhile is refused too.
func ReadPartial(file, build string, formats ...Format) ([]byte, Header, error) {
	var h Header
	f, st, err := OpenRegular(file, "a partial result is a file a shard wrote")
	if err != nil {
		return nil, h, err
	}
	defer f.Close()
	if h, err = readHeader(io.LimitReader(f, MaxHeader)); err != nil {
		return nil, h, fmt.Errorf("%s: not a partial result: %v", file, err)
	}
	format, ok := Format{}, false
	var schemas []string
	for _, fm := range formats {
		schemas = append(schemas, fm.Schema)
		if fm.Schema == h.Schema {
			format, ok = fm, true
		}
	}
	if !ok {
		return nil, h, fmt.Errorf("%s: format %q: this simulate merges %s", file, h.Schema, strings.Join(schemas, " and "))
	}
	if h.Build != build {
		return nil, h, fmt.Errorf("%s: written by %q, not by this build (%q): merge with the build that ran the shards", file, h.Build, build)
	}
	limit, err := partialLimit(h, format)
	if err != nil {
		return nil, h, fmt.Errorf("%s: %v", file, err)
	}
	tooLarge := func(size int64) error {
		return fmt.Errorf("%s: %d bytes (or more): larger than shard %d/%d of a sweep of %d runs can be (%d bytes)",
			file, size, h.Shard, h.Shards, h.Jobs, limit)
	}
	if st.Size() > limit {
		return nil, h, tooLarge(st.Size())
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, h, err
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, h, err
	}
	if int64(len(data)) > limit {
		return nil, h, tooLarge(int64(len(data)))
	}
	return data, h, nil
}

// OpenRegular opens file for reading, with its stat, if it is a regular
// file. It opens without blocking (a named pipe would wait for a writer
// for ever) and refuses anything else (a device such as /dev/zero, a
// pipe, a directory), unread, with the error "FILE: WHAT, not a regular
// file: WHY". Readers of the user's files (partial results, histories)
// open them with it and bound what they read by a size of their own.
func OpenRegular(file, why string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(file, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if what := NotRegular(st.Mode()); what != "" {
		f.Close()
		return nil, nil, fmt.Errorf("%s: %s, not a regular file: %s", file, what, why)
	}
	return f, st, nil
}

// readHeader decodes the header of a partial result from r: the fields
// with a plain value (not an object or an array) that open the JSON
// object, as a shard writes them, up to the first field of another kind
// (files, runs, options).
func readHeader(r io.Reader) (Header, error) {
	var h Header
	dec := json.NewDecoder(r)
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return h, errors.New("not a JSON object")
	}
	fields := map[string]json.RawMessage{}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return h, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return h, fmt.Errorf("field %v: %w (a header is at most %d bytes)", key, err, MaxHeader)
		}
		if len(v) > 0 && (v[0] == '{' || v[0] == '[') {
			break
		}
		fields[fmt.Sprint(key)] = v
	}
	b, err := json.Marshal(fields)
	if err == nil {
		err = json.Unmarshal(b, &h)
	}
	return h, err
}

// partialLimit is the largest a partial result of format f with header h
// can be: its header, the runs its shard owns (at most f.RunBytes each)
// and f.Extra. A header claiming more runs than a sweep may have
// (MaxSeeds), or impossible shard numbers, is refused.
func partialLimit(h Header, f Format) (int64, error) {
	if h.Shards < 1 || h.Shard < 0 || h.Shard >= h.Shards || h.Jobs < 0 {
		return 0, fmt.Errorf("shard %d of %d shards of %d runs: not a partial result's header", h.Shard, h.Shards, h.Jobs)
	}
	if h.Jobs > MaxSeeds {
		return 0, fmt.Errorf("%d runs: more than the %d a sharded sweep may have", h.Jobs, MaxSeeds)
	}
	var owned int64 // the jobs i < h.Jobs with i mod h.Shards = h.Shard
	if h.Jobs > h.Shard {
		owned = int64((h.Jobs-h.Shard-1)/h.Shards + 1)
	}
	// Sharded by units: at most as many units as jobs, each of at most
	// UnitJobs jobs (and never more jobs than the sweep has).
	owned = min(owned*max(f.UnitJobs, 1), int64(h.Jobs))
	return MaxHeader + owned*f.RunBytes + f.Extra, nil
}

// NotRegular says what a file of mode m is when it is not a regular file
// (a directory, a named pipe, ...), "" for a regular file: what a reader
// of partial results, or a writer that replaces a file, refuses.
func NotRegular(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return ""
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "not a regular file"
}

// DecodeStrict decodes JSON data into v; a field v does not have is an
// error (a file of another format or version).
func DecodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}
