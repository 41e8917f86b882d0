package sqlite

import (
	"bytes"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/store"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
)

// pathError is an error about the store's path that wraps ErrPath.
func pathError(format string, args ...any) error {
	return fmt.Errorf("%w", &pathErr{msg: fmt.Sprintf(format, args...)})
}

type pathErr struct{ msg string }

func (e *pathErr) Error() string { return e.msg }

func (e *pathErr) Is(target error) bool { return target == store.ErrPath }

// sqliteHeader starts every SQLite database file.
var sqliteHeader = []byte("SQLite format 3\x00")

// CheckPath says, without creating anything, why path cannot hold a results store:
// empty, a directory, in a directory that cannot be written, a file that cannot be
// written, or a file that is not a SQLite database; and (errors.Is safefile.ErrUnsafe)
// one another user could read or replace. nil when it looks usable (a
// missing file in a writable directory is created by Open). Its errors wrap ErrPath.
func CheckPath(path string) error {
	if path == "" {
		return pathError("the results store path is empty: give --store a file path (or leave it out for fathom.db, or set FATHOM_STORE)")
	}
	if err := checkOwner(path); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.IsDir():
		return pathError("store %s is a directory: give --store a file path, e.g. %s", path, filepath.Join(path, "fathom.db"))
	case err == nil:
		if !fi.Mode().IsRegular() {
			return pathError("store %s is not a regular file (%s): give --store a file path", path, fi.Mode().Type())
		}
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			return pathError("store %s cannot be opened for writing (%s): fix its permissions or give another --store path", path, reason(err))
		}
		defer f.Close()
		head := make([]byte, len(sqliteHeader))
		n, err := io.ReadFull(f, head)
		if n == 0 && (err == io.EOF || err == nil) {
			return nil // empty: SQLite makes it a database
		}
		if !bytes.Equal(head[:n], sqliteHeader) {
			return pathError("store %s is not a SQLite database (it does not start with SQLite's header), so not a fathom results database: give another --store path", path)
		}
		return nil
	case errors.Is(err, fs.ErrNotExist):
		dir := filepath.Dir(path)
		for { // the nearest existing ancestor must let us create what is missing
			di, err := os.Stat(dir)
			if err == nil {
				if !di.IsDir() {
					return pathError("store %s: %s is not a directory: give another --store path", path, dir)
				}
				if err := writable(dir); err != nil {
					return pathError("store %s cannot be created: directory %s is not writable (%s): give another --store path", path, dir, reason(err))
				}
				return nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return pathError("store %s: %s", path, reason(err))
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				return nil
			}
			dir = parent
		}
	case errors.Is(err, syscall.ENOTDIR):
		for dir := filepath.Dir(path); dir != filepath.Dir(dir); dir = filepath.Dir(dir) {
			if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
				return pathError("store %s: %s is a file, not a directory: give another --store path", path, dir)
			}
		}
		return pathError("store %s: part of the path is not a directory: give another --store path", path)
	case errors.Is(err, fs.ErrPermission):
		return pathError("store %s cannot be reached: permission denied on a directory of its path; give another --store path", path)
	default:
		return pathError("store %s: %s", path, reason(err))
	}
}

// reason is an OS error without the path it repeats.
func reason(err error) string {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	if errors.Is(err, fs.ErrPermission) {
		return "permission denied"
	}
	return err.Error()
}

// uri is the SQLite URI of path with fathom's connection settings. The path is made
// absolute and percent-encoded (net/url), so '?', '#' and '%' in it are the file's
// name, not the start of the query.
func uri(path, query string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	u := url.URL{Scheme: "file", Path: abs, RawQuery: query}
	return u.String(), nil
}
