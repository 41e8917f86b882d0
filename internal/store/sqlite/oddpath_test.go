package sqlite

import (
	"os"
	"path/filepath"
	"testing"
)

// A '?', '#' or '%' in the store's path is part of the file's name.
func TestOpenOddPath(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a?b#c%41 d.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("no store at %s: %v", path, err)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	for _, e := range ents {
		if e.Name() != filepath.Base(path) && e.Name() != filepath.Base(path)+"-wal" && e.Name() != filepath.Base(path)+"-shm" {
			t.Errorf("stray file %s", e.Name())
		}
	}
}
