// Package safefile creates and opens the files and directories fathom keeps state or
// secrets in (results store, check state, snapshots, instance directories, reports)
// so that other local users can neither read nor replace them:
//
//   - what it creates is private to its owner: files 0600, directories 0700 (or the
//     mode the caller asks for, never writable by group or others);
//   - what already exists is used only when it belongs to the current user (or to a
//     user the caller names, such as the service account of a database server) and is
//     not writable by group or others;
//   - the last component of a path is never followed when it is a symbolic link
//     (O_NOFOLLOW, Lstat), so a link planted by someone else cannot redirect a write;
//   - whole-file writes go to a temporary file in the same directory that is renamed
//     over the target once complete, so a full disk leaves the old file or none,
//     never an empty or partial one.
//
// Every refusal is an *Error whose message is one line naming the path and the fix.
package safefile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Error is a path fathom refuses to use.
type Error struct {
	Path    string
	Problem string
	Fix     string
}

func (e *Error) Error() string {
	return fmt.Sprintf("refusing %s: %s: %s", e.Path, e.Problem, e.Fix)
}

// ErrUnsafe matches every *Error with errors.Is.
var ErrUnsafe = errors.New("unsafe path")

func (e *Error) Is(target error) bool { return target == ErrUnsafe }

// NoFollow is the open flag that refuses a symbolic link as the last path component
// (O_NOFOLLOW; 0 where there is none), for callers that open files through a library.
const NoFollow = noFollow

// owners lists the users, besides the current one, who may own an existing path.
type owners []int

func (o owners) allows(uid int) bool {
	if uid == os.Geteuid() {
		return true
	}
	for _, u := range o {
		if u == uid {
			return true
		}
	}
	return false
}

// check refuses fi (the Lstat of path) when it is a symbolic link, belongs to someone
// else or is writable by group or others.
func check(path string, fi fs.FileInfo, owners owners) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return &Error{path, "it is a symbolic link", "remove it or give the path it points to"}
	}
	if uid, ok := uidOf(fi); ok && !owners.allows(uid) {
		return &Error{path, fmt.Sprintf("it belongs to uid %d, not to you (uid %d)", uid, os.Geteuid()), "remove it or choose a path of your own"}
	}
	if modeBits && fi.Mode().Perm()&0o022 != 0 {
		return &Error{path, fmt.Sprintf("it is writable by other users (mode %04o)", fi.Mode().Perm()), "chmod go-w " + path + " or choose another path"}
	}
	return nil
}

// Check refuses an existing path that is a symbolic link, belongs to another user
// (other than owners) or is writable by group or others. A missing path is no error.
func Check(path string, owners ...int) error {
	fi, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return check(path, fi, owners)
}

// Dir makes sure path is a directory fathom may keep private files in: created with
// perm (at most 0755; 0700 for anything holding state) when missing, together with
// missing parents, else checked like Check and refused when it is not a directory.
func Dir(path string, perm fs.FileMode, owners ...int) error {
	perm &^= 0o022
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.Mkdir(path, perm); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		// Mkdir is subject to the umask; make the mode exact.
		if err := os.Chmod(path, perm); err != nil {
			return err
		}
		fi, err = os.Lstat(path)
	}
	if err != nil {
		return err
	}
	if err := check(path, fi, owners); err != nil {
		return err
	}
	if !fi.IsDir() {
		return &Error{path, "it is not a directory", "remove it or choose another path"}
	}
	return nil
}

// OpenFile opens path with flag, never through a symbolic link. A file it creates is
// 0600; an existing one must pass Check.
func OpenFile(path string, flag int, owners ...int) (*os.File, error) {
	if noFollow == 0 { // no O_NOFOLLOW here: look first
		if fi, err := os.Lstat(path); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, &Error{path, "it is a symbolic link", "remove it or give the path it points to"}
		}
	}
	f, err := os.OpenFile(path, flag|noFollow|syscall.O_CLOEXEC, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &Error{path, "it is a symbolic link", "remove it or give the path it points to"}
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil {
		err = check(path, fi, owners)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Create creates path (0600) for writing, or truncates it when it exists and passes
// Check.
func Create(path string) (*os.File, error) {
	return OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_TRUNC)
}

// Touch makes sure path exists as a private file (0600), for files another library
// opens by name (a SQLite database): the library then finds a file that is already
// private, and its companions (-wal, -shm) inherit the mode.
func Touch(path string, owners ...int) error {
	f, err := OpenFile(path, os.O_RDWR|os.O_CREATE, owners...)
	if err != nil {
		return err
	}
	return f.Close()
}

// atomic is a file being written in place of another: the data goes to a private
// temporary file in the same directory, and Commit renames it over the target.
type atomic struct {
	*os.File
	path string
	done bool
}

// newAtomic starts replacing path. The target, when it exists, must pass Check with
// owners (a
// rename replaces a symbolic link rather than writing through it, but a link or a
// file someone else owns is still not fathom's to replace).
func newAtomic(path string, owners ...int) (*atomic, error) {
	if err := Check(path, owners...); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return nil, err
	}
	return &atomic{File: f, path: path}, nil
}

// commit makes the written data durable and puts it in place.
func (a *atomic) commit() error {
	if a.done {
		return errors.New("safefile: commit after commit or abort")
	}
	a.done = true
	err := a.File.Sync()
	if cerr := a.File.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(a.File.Name(), a.path)
	}
	if err != nil {
		_ = os.Remove(a.File.Name())
	}
	return err
}

// abort drops the temporary file; the target is untouched. It is safe after Commit.
func (a *atomic) abort() {
	if a.done {
		return
	}
	a.done = true
	_ = a.File.Close()
	_ = os.Remove(a.File.Name())
}

// WriteFile replaces path with data atomically (see Atomic); the file is 0600 and
// belongs to the current user. An existing path must pass Check with owners.
func WriteFile(path string, data []byte, owners ...int) error {
	a, err := newAtomic(path, owners...)
	if err != nil {
		return err
	}
	if _, err := a.Write(data); err != nil {
		a.abort()
		return err
	}
	return a.commit()
}
