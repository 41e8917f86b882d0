package sqlite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/procfs"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// collectSide is the file's side for collect: discovery and snapshot sections.
type collectSide struct{}

func (collectSide) Name() string                    { return "sqlite" }
func (collectSide) Title() string                   { return "SQLite" }
func (collectSide) Collectors() []collect.Collector { return nil }
func (collectSide) Embedded() bool                  { return true }
func (collectSide) Discover(_ context.Context, s *sample.Server, _ target.Conn, dsn string, _ procfs.FS, _ bool) {
	s.Flavor = "sqlite"
	s.Local = true
	if p := sqlitePath(dsn); p != "" {
		if abs, err := filepath.Abs(p); err == nil {
			s.DataDir = filepath.Dir(abs)
		}
	}
}
func (collectSide) Snapshot(sn *collect.Snap) { snapshot(sn) }

// sqlitePath extracts the file of a sqlite:PATH DSN.
func sqlitePath(dsn string) string {
	p := strings.TrimPrefix(dsn, "sqlite:")
	p = strings.TrimPrefix(p, "//")
	if i := strings.IndexByte(p, '?'); i >= 0 {
		p = p[:i]
	}
	if p == "" || p == ":memory:" {
		return ""
	}
	return p
}

// snapshot adds the file's sources: where it is, its WAL and their sizes.
func snapshot(s *collect.Snap) {
	s.Source("server", func() error {
		p := sqlitePath(s.Options().DSN)
		var b bytes.Buffer
		fmt.Fprintf(&b, "embedded SQLite database file: %s\n", collect.OrUnknown(p))
		for _, f := range []string{p, p + "-wal", p + "-shm"} {
			if st, err := os.Stat(f); err == nil {
				fmt.Fprintf(&b, "  %s: %s, modified %s\n", f, collect.SizeText(st.Size()), st.ModTime().UTC().Format(time.RFC3339))
			}
		}
		s.Add("server.txt", "the SQLite file and its WAL", b.Bytes())
		s.Fact("Server", "SQLite", "%s%s", collect.OrUnknown(p), s.DiskText())
		return nil
	})
}
