package instance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Version reports the version of kind's server programs that Create would use.
func Version(k Kind, version string) (string, error) {
	srv, err := driver(k)
	if err != nil {
		return "", err
	}
	_, v, err := srv.Find(version)
	return v, err
}

// Executable reports whether path is an executable file.
func Executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

// FindProgram is the first of names found in dirs or, failing that, on PATH ("" when
// none is).
func FindProgram(names []string, dirs []string) string {
	for _, n := range names {
		for _, d := range dirs {
			if p := filepath.Join(d, n); Executable(p) {
				return p
			}
		}
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	return ""
}

// FindServer locates a server program (in dirs or on PATH) and checks its version
// against the wanted one: the directory and the version found. title names the server
// in messages ("Redis"); looked says where it looked, install what to install.
func FindServer(prog string, dirs []string, title, version, looked, install string) (string, string, error) {
	server := FindProgram([]string{prog}, dirs)
	if server == "" {
		return "", "", fmt.Errorf("%s was not found (looked in %s and PATH): %s", prog, looked, install)
	}
	v := ProgramVersion(server)
	if version != "" && v != version && !strings.HasPrefix(v, version+".") {
		return "", "", fmt.Errorf("%s %s is not installed (found %s): install it or remove version from the plan", title, version, v)
	}
	return filepath.Dir(server), v, nil
}

var versionRE = regexp.MustCompile(`\b(\d+\.\d+(?:\.\d+)?)`)

// ProgramVersion runs prog --version and returns the first version number in it.
func ProgramVersion(prog string) string {
	out, err := exec.Command(prog, "--version").CombinedOutput()
	if err != nil {
		return ""
	}
	if m := versionRE.FindStringSubmatch(string(out)); m != nil {
		return m[1]
	}
	return ""
}

// FindIn checks that dir holds kind's server programs and returns it (made absolute)
// with the version they report, which must match version when one is wanted.
func FindIn(k Kind, dir, version string) (string, string, error) {
	d, err := driver(k)
	if err != nil {
		return "", "", err
	}
	return findIn(d, dir, version)
}

// findIn checks that dir holds the driver's server programs and returns it (made
// absolute) with the version they report, which must match version when one is wanted.
func findIn(d Driver, dir, version string) (string, string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", "", err
	}
	progs := d.Programs()
	for _, p := range progs {
		if !Executable(filepath.Join(abs, p)) {
			return "", "", fmt.Errorf("%s has no %s program: give the bin directory of a %s installation", dir, p, d.Kind())
		}
	}
	server := progs[len(progs)-1]
	v := ProgramVersion(filepath.Join(abs, server))
	if v == "" {
		return "", "", fmt.Errorf("%s in %s does not run or report its version", server, dir)
	}
	if version != "" && v != version && !strings.HasPrefix(v, version+".") {
		return "", "", fmt.Errorf("%s holds %s %s, not %s: give the directory of version %s", dir, d.Kind(), v, version, version)
	}
	return abs, v, nil
}
