package safefile

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
)

func mode(t *testing.T, path string) os.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestCreatesPrivate(t *testing.T) {
	dir := t.TempDir()
	d := filepath.Join(dir, "a", "state")
	if err := Dir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, d); m != 0o700 {
		t.Errorf("directory mode %04o, want 0700", m)
	}
	f, err := Create(filepath.Join(d, "x"))
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if m := mode(t, filepath.Join(d, "x")); m != 0o600 {
		t.Errorf("file mode %04o, want 0600", m)
	}
	if err := WriteFile(filepath.Join(d, "y"), []byte("hello")); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(d, "y")); m != 0o600 {
		t.Errorf("atomic file mode %04o, want 0600", m)
	}
	if err := Touch(filepath.Join(d, "z")); err != nil {
		t.Fatal(err)
	}
	if m := mode(t, filepath.Join(d, "z")); m != 0o600 {
		t.Errorf("touched file mode %04o, want 0600", m)
	}
}

func TestRefusesUnsafe(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "open")
	if err := os.Mkdir(open, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(dir, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(victim, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"dir writable by others", Dir(open, 0o700), "writable by other users"},
		{"dir is a link", Dir(link, 0o700), "symbolic link"},
		{"dir is a file", Dir(victim, 0o700), "not a directory"},
		{"open through a link", func() error { _, err := Create(link); return err }(), "symbolic link"},
		{"touch through a link", Touch(link), "symbolic link"},
		{"atomic over a link", WriteFile(link, []byte("x")), "symbolic link"},
	} {
		if c.err == nil || !errors.Is(c.err, ErrUnsafe) || !strings.Contains(c.err.Error(), c.want) || strings.Contains(c.err.Error(), "\n") {
			t.Errorf("%s: %v, want one line with %q", c.name, c.err, c.want)
		}
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("the link's target was written: %q", b)
	}
}

func TestAtomicAbortKeepsOld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "index.html")
	if err := WriteFile(path, []byte("old")); err != nil {
		t.Fatal(err)
	}
	a, err := newAtomic(path)
	if err != nil {
		t.Fatal(err)
	}
	a.Write([]byte("half"))
	a.abort()
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("after abort: %q", b)
	}
	ents, _ := os.ReadDir(filepath.Dir(path))
	if len(ents) != 1 {
		t.Errorf("temporary file left behind: %v", ents)
	}
}

func TestOtherUserCannotReadOrPlant(t *testing.T) {
	base := dbtest.PublicTempDir(t)
	d := filepath.Join(base, "state")
	if err := Dir(d, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(d, "secret"), []byte("s3cret")); err != nil {
		t.Fatal(err)
	}
	if out, err := dbtest.AsNobody(t, "cat "+d+"/secret; ls "+d); err == nil || strings.Contains(out, "s3cret") {
		t.Errorf("nobody read the private directory: %v %s", err, out)
	}
	// A directory another user made (and could fill with links) is refused.
	pub := filepath.Join(base, "pub")
	if err := os.Mkdir(pub, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(pub, 0o777)
	shared := filepath.Join(pub, "shared")
	if out, err := dbtest.AsNobody(t, "mkdir -m 0777 "+shared+" && ln -s /etc/passwd "+shared+"/x.lock"); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	err := Dir(shared, 0o700)
	if err == nil || !strings.Contains(err.Error(), "belongs to uid") {
		t.Errorf("a directory of nobody's: %v", err)
	}
	if _, err := OpenFile(filepath.Join(shared, "x.lock"), os.O_RDWR|os.O_CREATE); err == nil {
		t.Errorf("opened a planted link")
	}
	// A file of another user's is refused even in a directory fathom may use.
	own := filepath.Join(base, "own")
	if err := os.Mkdir(own, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(own, 0o777)
	if out, err := dbtest.AsNobody(t, "echo planted > "+own+"/f"); err != nil {
		t.Fatalf("as nobody: %v %s", err, out)
	}
	if err := Touch(filepath.Join(own, "f")); err == nil || !strings.Contains(err.Error(), "belongs to uid") {
		t.Errorf("a file of nobody's: %v", err)
	}
}

// TestFullDiskKeepsOldFile: a write that fails part-way (here at the file size limit,
// as on a full disk) leaves the old file whole, or no file, never an empty or partial
// one, and no temporary file.
func TestFullDiskKeepsOldFile(t *testing.T) {
	if os.Getenv("SAFEFILE_CHILD") != "" {
		signal.Ignore(syscall.SIGXFSZ) // get EFBIG from write instead of dying
		lim := syscall.Rlimit{Cur: 64 << 10, Max: 64 << 10}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			t.Fatal(err)
		}
		for _, name := range []string{"old.html", "new.html"} {
			err := WriteFile(filepath.Join(os.Getenv("SAFEFILE_CHILD"), name), make([]byte, 1<<20))
			if err == nil {
				t.Fatalf("writing 1 MiB under a 64 KiB limit succeeded")
			}
		}
		return
	}
	dir := t.TempDir()
	if err := WriteFile(filepath.Join(dir, "old.html"), []byte("the old report")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFullDiskKeepsOldFile$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "SAFEFILE_CHILD="+dir)
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "--- PASS: TestFullDiskKeepsOldFile") {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "old.html")); err != nil || string(b) != "the old report" {
		t.Errorf("old file after a failed write: %q %v", b, err)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("files after failed writes: %v, want only old.html", names)
	}
}
