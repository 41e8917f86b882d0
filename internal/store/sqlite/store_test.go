package sqlite

import (
	"context"
	"github.com/fathom-lab/fathom/internal/store/storetest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/measure"
)

func TestRefusesNewerSchemaAndNonStores(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "new.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`INSERT INTO schema_version (version, name) VALUES (999, 'future')`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if _, err := Open(path); err == nil || !strings.Contains(err.Error(), "newer fathom") {
		t.Fatalf("newer schema: %v", err)
	}
	junk := filepath.Join(dir, "junk.db")
	os.WriteFile(junk, []byte(strings.Repeat("this is not sqlite ", 300)), 0o644)
	_, err = Open(junk)
	if err == nil || strings.Contains(err.Error(), "\n") {
		t.Fatalf("not a database: %v", err)
	}
}

func FuzzDecodeStoredBlob(f *testing.F) {
	b, _ := measure.Encode(storetest.Interval(0, 100).Types[0].Latency)
	f.Add(b)
	f.Add(measure.EncodeV2(storetest.Interval(0, 100).Types[0].Latency))
	f.Add([]byte{})
	f.Add([]byte("HISTFAAAA"))
	f.Fuzz(func(t *testing.T, blob []byte) {
		h, err := measure.Decode(blob)
		if err == nil && h == nil {
			t.Fatal("nil histogram without error")
		}
	})
}

func BenchmarkAddInterval(b *testing.B) {
	ctx := context.Background()
	s, err := Open(filepath.Join(b.TempDir(), "b.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id, _ := s.CreateRun(ctx, storetest.Run())
	iv := storetest.Interval(0, 1000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		iv.Index = i
		if err := s.AddInterval(ctx, id, iv); err != nil {
			b.Fatal(err)
		}
	}
}

// TestStorePrivate: the store and its -wal and -shm files are created private to
// their owner; a store of another user's, or a link in its place, is refused.
func TestStorePrivate(t *testing.T) {
	base := dbtest.PublicTempDir(t)
	path := filepath.Join(base, "results.db")
	s, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec(`CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if m := fi.Mode().Perm(); m != 0o600 {
			t.Errorf("%s has mode %04o, want 0600", p, m)
		}
	}
	if out, err := dbtest.AsNobody(t, "cat "+path+" >/dev/null"); err == nil {
		t.Errorf("nobody reads the store: %s", out)
	}
	s.Close()

	pub := dbtest.SharedTempDir(t)
	theirs := filepath.Join(pub, "theirs.db")
	if out, err := dbtest.AsNobody(t, "touch "+theirs+" && chmod 666 "+theirs+" && ln -s "+path+" "+pub+"/link.db && touch "+pub+"/mine.db-wal"); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	for name, p := range map[string]string{"another user's store": theirs, "a link": filepath.Join(pub, "link.db"), "another user's -wal": filepath.Join(pub, "mine.db")} {
		_, err := Open(p)
		if err == nil || !strings.HasPrefix(err.Error(), "refusing ") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v, want one line refusing it", name, err)
		}
	}
}
