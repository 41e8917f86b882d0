package instance

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// kind is what differs between PostgreSQL and MariaDB.
type kind interface {
	// find locates the programs: their directory and the server's version.
	find(version string) (bin, ver string, err error)
	socketPath(dir string, port int) string
	superuser() string
	// initialize creates the data directory.
	initialize(ctx context.Context, i *Instance) error
	// config renders the configuration file fathom owns: its path and text.
	config(i *Instance) (path, text string)
	start(ctx context.Context, i *Instance) error
	stop(ctx context.Context, i *Instance) error
	reload(ctx context.Context, i *Instance) error
	pidFile(i *Instance) string
}

func server(k Kind) (kind, error) {
	switch k {
	case Postgres:
		return pgKind{}, nil
	case MariaDB:
		return mariaKind{}, nil
	}
	return nil, fmt.Errorf("unknown instance kind %q: use postgres or mariadb", k)
}

// Version reports the version of kind's server programs that Create would use.
func Version(k Kind, version string) (string, error) {
	srv, err := server(k)
	if err != nil {
		return "", err
	}
	_, v, err := srv.find(version)
	return v, err
}

// executable reports whether path is an executable file.
func executable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0
}

var versionRE = regexp.MustCompile(`\b(\d+\.\d+(?:\.\d+)?)`)

// programVersion runs prog --version and returns the first version number in it.
func programVersion(prog string) string {
	out, err := exec.Command(prog, "--version").CombinedOutput()
	if err != nil {
		return ""
	}
	if m := versionRE.FindStringSubmatch(string(out)); m != nil {
		return m[1]
	}
	return ""
}

// pgBinDirs lists PostgreSQL program directories, newest major version first.
func pgBinDirs() []string {
	var dirs []string
	matches, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(matches, func(a, b int) bool {
		va, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(matches[a])), 64)
		vb, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(matches[b])), 64)
		return va > vb
	})
	dirs = append(dirs, matches...)
	dirs = append(dirs, "/usr/local/pgsql/bin")
	if p, err := exec.LookPath("pg_ctl"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	return dirs
}

func settingsSorted(ss []Setting) []Setting {
	out := append([]Setting(nil), ss...)
	sort.SliceStable(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

func quoteConf(v string) string { return "'" + strings.ReplaceAll(v, "'", "''") + "'" }
