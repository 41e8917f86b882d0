package cli

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"
)

func TestReadBuild(t *testing.T) {
	const rev = "84b6cfbd19d0a1b2c3d4e5f60718293a4b5c6d7e"
	vcs := func(modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.time", Value: "2026-11-28T06:50:56Z"}, {Key: "vcs.modified", Value: modified}}
	}
	for _, c := range []struct {
		name            string
		bi              *debug.BuildInfo
		ldv, ldc        string
		version, commit string
		modified        bool
	}{
		{name: "go build in a checkout", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128065056-84b6cfbd19d0"}, Settings: vcs("false")},
			version: "v0.0.0-20261128065056-84b6cfbd19d0", commit: rev},
		{name: "go build with changes", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128065056-84b6cfbd19d0+dirty"}, Settings: vcs("true")},
			version: "v0.0.0-20261128065056-84b6cfbd19d0+dirty", commit: rev, modified: true},
		{name: "go install at a tag", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}}, version: "v1.2.3"},
		{name: "go install at a commit", bi: &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261128065056-84b6cfbd19d0"}},
			version: "v0.0.0-20261128065056-84b6cfbd19d0", commit: "84b6cfbd19d0"},
		{name: "go install after a pre-release", bi: &debug.BuildInfo{Main: debug.Module{Version: "v1.3.0-rc.1.0.20261128065056-84b6cfbd19d0"}},
			version: "v1.3.0-rc.1.0.20261128065056-84b6cfbd19d0", commit: "84b6cfbd19d0"},
		{name: "go run", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, version: "(devel)"},
		{name: "vcs settings without a module version", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: vcs("true")},
			version: "devel-84b6cfbd19d0+dirty", commit: rev, modified: true},
		{name: "make build", bi: &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, ldv: "3a448f6-dirty", ldc: rev,
			version: "3a448f6-dirty", commit: rev},
		{name: "no build info", version: "(devel)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := readBuild(c.bi, c.ldv, c.ldc)
			if b.Version != c.version || b.Commit != c.commit || b.Modified != c.modified {
				t.Errorf("got version %q commit %q modified %v, want %q %q %v", b.Version, b.Commit, b.Modified, c.version, c.commit, c.modified)
			}
			if strings.Count(b.Version, "84b6cfbd19d0") > 1 {
				t.Errorf("version %q names the commit twice", b.Version)
			}
			if b.Platform == "" || b.Go == "" {
				t.Errorf("no platform or Go version: %+v", b)
			}
		})
	}
}

func TestVersionCommand(t *testing.T) {
	r := fathom(t, nil, nil, "version", "--json")
	var b buildInfo
	if r.code != 0 || json.Unmarshal([]byte(r.stdout), &b) != nil || b.Version == "" || !strings.Contains(b.Platform, "/") || !strings.HasPrefix(b.Go, "go") {
		t.Fatalf("version --json: code %d, %q %s", r.code, r.stdout, r.stderr)
	}
	r = fathom(t, nil, nil, "version")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "fathom "+b.Version+"\n") || !strings.Contains(r.stdout, "platform "+b.Platform) {
		t.Errorf("version: code %d, %q", r.code, r.stdout)
	}
	if r := fathom(t, nil, nil, "version", "extra"); r.code == 0 {
		t.Errorf("version extra: code 0")
	}
}

// go install (like go build) in a git checkout, a clone of this one's commit, records
// the commit, and fathom reports it once, with the module's pseudo-version.
func TestVersionFromCheckout(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fathom")
	}
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git: cannot make a checkout to build from")
	}
	top, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Skipf("not in a git checkout: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "src")
	if out, err := exec.Command("git", "clone", "-q", strings.TrimSpace(string(top)), dir).CombinedOutput(); err != nil {
		t.Fatalf("git clone: %v\n%s", err, out)
	}
	head, err := exec.Command("git", "-C", dir, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Fatal(err)
	}
	rev := strings.TrimSpace(string(head))
	bin := t.TempDir()
	// go install as the README says (go build records the same); -buildvcs=auto, Go's
	// default, overrides a GOFLAGS=-buildvcs=false in the machine's go env.
	cmd := exec.Command("go", "install", "-buildvcs=auto", "./cmd/fathom")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOBIN="+bin)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go install ./cmd/fathom: %v\n%s", err, out)
	}
	want := regexp.MustCompile(`^v0\.0\.0-\d{14}-` + rev[:12] + `$`)
	for _, name := range []string{"fathom"} {
		out, err := exec.Command(filepath.Join(bin, name), "version", "--json").Output()
		var b buildInfo
		if err != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("%s version --json: %v %s", name, err, out)
		}
		if !want.MatchString(b.Version) || b.Commit != rev || b.Modified || b.CommitTime == "" {
			t.Errorf("%s: %+v, want version %s and commit %s", name, b, want, rev)
		}
		out, _ = exec.Command(filepath.Join(bin, name), "--version").Output()
		if got := strings.TrimSpace(string(out)); got != "fathom version "+b.Version {
			t.Errorf("%s --version: %q", name, got)
		}
	}
}
