package collect

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PrepareOutput makes the directories -o needs (private: 0700) and proves that the
// bundle can be written there, leaving nothing behind but those directories.
func PrepareOutput(out string, archive bool) error {
	dir := out
	if archive {
		if _, err := os.Stat(out); err == nil {
			return fmt.Errorf("it already exists: name another file")
		}
		dir = filepath.Dir(out)
	} else if ents, err := os.ReadDir(out); err == nil && len(ents) > 0 {
		return fmt.Errorf("it already holds files: name a new directory or a FILE.tar.gz")
	} else if err == nil || !errors.Is(err, fs.ErrNotExist) {
		if st, serr := os.Stat(out); serr == nil && !st.IsDir() {
			return fmt.Errorf("it is a file: name a directory, or a FILE.tar.gz")
		}
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("cannot create %s: %v", dir, unwrapPath(err))
	}
	probe, err := os.CreateTemp(dir, ".fathom-snapshot-probe-*")
	if err != nil {
		return fmt.Errorf("cannot write in %s: %v", dir, unwrapPath(err))
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
