// Package files holds the workload files shipped with fathom. They are built-in
// workloads and examples of the file format at once (see internal/workload/spec).
package files

import (
	"embed"
	"io/fs"
	"path"
	"sort"
	"strings"
)

//go:embed *.yaml
var fsys embed.FS

// Names lists the shipped files by workload name (the file name without .yaml).
func Names() []string {
	entries, _ := fs.ReadDir(fsys, ".")
	var out []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(out)
	return out
}

// Read returns the content of a shipped file and the path to name it by in messages.
func Read(name string) (data []byte, file string, err error) {
	file = name + ".yaml"
	data, err = fsys.ReadFile(path.Clean(file))
	return data, file, err
}
