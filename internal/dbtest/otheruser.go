package dbtest

import (
	"os"
	"os/exec"
	"testing"
)

// AsNobody runs a shell script as user nobody (setpriv), for tests of what another
// local user can do to fathom's files and servers. It needs root: without it the test
// is skipped, except under FATHOM_TEST_REQUIRE=1 (CI runs as root), where it fails.
func AsNobody(t testing.TB, script string) (string, error) {
	t.Helper()
	if os.Geteuid() != 0 {
		if os.Getenv("FATHOM_TEST_REQUIRE") == "1" {
			t.Fatal("running as another user needs root (FATHOM_TEST_REQUIRE=1)")
		}
		t.Skip("running as another user needs root")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Fatal("setpriv (util-linux) is needed to run as another user")
	}
	out, err := exec.Command("setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "sh", "-c", script).CombinedOutput()
	return string(out), err
}

// PublicTempDir is a temporary directory other users can enter (t.TempDir's parent is
// private to the test's user), removed after the test.
func PublicTempDir(t testing.TB) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fathom-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if err := os.Chmod(d, 0o755); err != nil {
		t.Fatal(err)
	}
	return d
}

// SharedTempDir is a temporary directory every user can write to (like /tmp, without
// the sticky bit), removed after the test.
func SharedTempDir(t testing.TB) string {
	t.Helper()
	d := PublicTempDir(t)
	if err := os.Chmod(d, 0o777); err != nil {
		t.Fatal(err)
	}
	return d
}
