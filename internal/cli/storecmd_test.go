package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/store/stores"
)

// store copy's anonymizing flags: a bad key file or a flag without --anonymize is
// one line, exit 2; a good key copies.
func TestStoreCopyAnonymizeFlags(t *testing.T) {
	dir := t.TempDir()
	src, dst := filepath.Join(dir, "src.db"), filepath.Join(dir, "dst.db")
	st, err := stores.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("key", "0123456789abcdef0123456789abcdef", 0o600)
	open := write("open", "0123456789abcdef0123456789abcdef", 0o644)
	short := write("short", "tiny", 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pseudonym-key", good}, "goes with --anonymize"},
		{[]string{"--keep-hardware"}, "goes with --anonymize"},
		{[]string{"--anonymize", "--pseudonym-key", filepath.Join(dir, "none")}, "head -c 32 /dev/urandom"},
		{[]string{"--anonymize", "--pseudonym-key", open}, "chmod 600"},
		{[]string{"--anonymize", "--pseudonym-key", short}, "fewer than 16"},
	} {
		r := fathom(t, nil, nil, append([]string{"store", "copy", src, dst}, c.args...)...)
		oneLine(t, r, exitUsage, c.want)
		if strings.Contains(r.stderr, "0123456789abcdef") {
			t.Errorf("the key shows: %s", r.stderr)
		}
	}
	r := fathom(t, nil, nil, "store", "copy", src, dst, "--anonymize", "--keep-hardware", "--pseudonym-key", good)
	if r.code != exitOK || !strings.Contains(r.stdout, "copied 0 runs") {
		t.Errorf("copy with a key: %d %q %q", r.code, r.stdout, r.stderr)
	}
}
