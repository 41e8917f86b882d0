package cli

import (
	"os"
	"path/filepath"
	"testing"
)

// docs/reference and docs/man are what `go run ./scripts/gendocs` writes from the
// commands: a changed command, flag or help text without them regenerated fails here.
func TestDocsUpToDate(t *testing.T) {
	dir := t.TempDir()
	if err := WriteDocs(dir); err != nil {
		t.Fatal(err)
	}
	for _, sub := range []string{"reference", "man"} {
		want := readTree(t, filepath.Join(dir, sub))
		have := readTree(t, filepath.Join("..", "..", "docs", sub))
		for name, text := range want {
			if h, ok := have[name]; !ok {
				t.Errorf("docs/%s/%s is missing: run `go run ./scripts/gendocs`", sub, name)
			} else if h != text {
				t.Errorf("docs/%s/%s is stale: run `go run ./scripts/gendocs`", sub, name)
			}
		}
		for name := range have {
			if _, ok := want[name]; !ok {
				t.Errorf("docs/%s/%s is for no command: run `go run ./scripts/gendocs`", sub, name)
			}
		}
	}
}

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	entries, err := os.ReadDir(dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = string(b)
	}
	return out
}
