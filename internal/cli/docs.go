package cli

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/instance"
)

// WriteDocs writes the command reference (Markdown, dir/reference) and the man pages
// (dir/man, section 1) from the commands themselves, as cobra's generator makes them.
// What depends on the machine that generates them (the user's data directory, the
// instances' directory) is written in general terms, so that the files are the same
// wherever they are made; TestDocsUpToDate fails when they are stale.
func WriteDocs(dir string) error {
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Now: time.Now,
		Getenv: func(k string) string {
			if k == "HOME" {
				return "~"
			}
			return ""
		}}
	root := newRoot(env)
	maskDefaults(root)
	root.InitDefaultCompletionCmd()
	instDir := instance.DefaultDir()
	general := func(f *pflag.Flag) {
		f.DefValue = strings.ReplaceAll(f.DefValue, instDir, "$TMPDIR/fathom-instances-UID")
		f.Usage = strings.ReplaceAll(f.Usage, instDir, "$TMPDIR/fathom-instances-UID")
	}
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		c.Flags().VisitAll(general)
		c.PersistentFlags().VisitAll(general)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	ref, man := filepath.Join(dir, "reference"), filepath.Join(dir, "man")
	for _, d := range []string{ref, man} {
		if err := os.RemoveAll(d); err != nil {
			return err
		}
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := doc.GenMarkdownTree(root, ref); err != nil {
		return fmt.Errorf("writing the command reference: %w", err)
	}
	date := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) // fixed: a new day is not a change
	header := &doc.GenManHeader{Title: "FATHOM", Section: "1", Source: "fathom", Manual: "fathom manual", Date: &date}
	if err := doc.GenManTree(root, header, man); err != nil {
		return fmt.Errorf("writing the man pages: %w", err)
	}
	return nil
}
