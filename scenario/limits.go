package scenario

// Limits of the scenario format and of reading a file: what the loader
// accepts before it parses anything.

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
)

// MaxClients is the most clients a scenario may have in all, however many
// entries of the clients list they come from: a per-entry cap alone let
// 200 entries of 1,000 clients through. The simulation checks a history of
// this many clients in bounded time; beyond it the format says no rather
// than run for hours.
const MaxClients = 1000

// MaxNodes is the most nodes, masters and replicas together, a scenario
// may have. Every node records its own truth of every write it applies,
// and starting a world's nodes grew faster than their number (12,000
// replicas of one master, a 300 KB file, took 11 s and 611 MB to start);
// the largest topologies a lock is run on have a handful of masters, each
// with a replica or two.
const MaxNodes = 100

// MaxFileSize is the largest scenario file the loader reads, in bytes. The
// largest committed scenario is a few kilobytes; a 50 MB file took a
// minute and 3 GB to parse. A larger file is an error naming its size
// before anything is read beyond the limit.
const MaxFileSize = 1 << 20

// ErrInternal is what an Error for a bug in the loader (a panic it
// recovered from) wraps: errors.Is(err, ErrInternal) tells a bug from bad
// input, which the command line reports with a different exit status, and
// which the fuzz targets count as failures.
var ErrInternal = errors.New("internal error in the scenario loader")

// Unwrap is ErrInternal for an internal error, else the cause a backend
// gave (Err; nil for bad input the loader found).
func (e *Error) Unwrap() error {
	if e.Internal {
		return ErrInternal
	}
	return e.Err
}

// readFile reads the scenario file at path: a regular file (a named pipe,
// a device or a socket named *.yaml would block or never end: it is an
// error, found before the file is opened) of at most MaxFileSize bytes.
func readFile(path string) ([]byte, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := regular(path, st.Mode()); err != nil {
		return nil, err
	}
	if st.Size() > MaxFileSize {
		return nil, tooLarge(path, st.Size())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// The file may have grown since the Stat: read one byte past the limit
	// to tell.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(path, int64(len(data)))
	}
	return data, nil
}

// regular is nil for a regular file's mode, else an Error naming path and
// what it is.
func regular(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	what := "not a regular file"
	switch {
	case m.IsDir():
		what = "a directory, not a scenario file"
	case m&fs.ModeNamedPipe != 0:
		what = "a named pipe (FIFO), not a regular file: only regular files are read"
	case m&fs.ModeSocket != 0:
		what = "a socket, not a regular file: only regular files are read"
	case m&fs.ModeDevice != 0:
		what = "a device, not a regular file: only regular files are read"
	}
	return &Error{File: path, Msg: what}
}

// tooLarge is the Error for a file of size bytes, above MaxFileSize.
func tooLarge(path string, size int64) error {
	return &Error{File: path, Msg: fmt.Sprintf("%d bytes (or more): larger than the %d bytes (1 MiB) a scenario file may have", size, MaxFileSize)}
}

// readFS reads name of fsys as readFile reads a path: a regular file of at
// most MaxFileSize bytes (a named pipe would block the read forever),
// shown as shown in errors.
func readFS(fsys fs.FS, name, shown string) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if err := regular(shown, st.Mode()); err != nil {
		return nil, err
	}
	if st.Size() > MaxFileSize {
		return nil, tooLarge(shown, st.Size())
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxFileSize {
		return nil, tooLarge(shown, int64(len(data)))
	}
	return data, nil
}

// opener reads a file a scenario names (a script kind's Lua), given as
// the file writes it: a path relative to the scenario file's directory.
// It returns the text and the path it read, for errors and names.
type opener func(rel string) (data []byte, path string, err error)

// osOpener reads the files the scenario file at file names from the disk,
// relative to file's directory (an absolute path as it is), with the
// scenario file's limits (readFile).
func osOpener(file string) opener {
	return func(rel string) ([]byte, string, error) {
		p := rel
		if !filepath.IsAbs(rel) {
			p = filepath.Join(filepath.Dir(file), rel)
		}
		data, err := readFile(p)
		return data, p, err
	}
}

// fsOpener reads the files the scenario file name of fsys names from
// fsys, relative to name's directory, shown under dir as LoadFS shows the
// scenario files: a path that leaves fsys (absolute, or above its root) is
// an error, as the embedded scenarios carry their Lua beside them.
func fsOpener(fsys fs.FS, dir, name string) opener {
	return func(rel string) ([]byte, string, error) {
		p := path.Join(path.Dir(name), rel)
		if path.IsAbs(rel) || !fs.ValidPath(p) {
			return nil, rel, fmt.Errorf("%s: not a path inside %s", rel, dir)
		}
		shown := filepath.Join(dir, filepath.FromSlash(p))
		data, err := readFS(fsys, p, shown)
		return data, shown, err
	}
}
