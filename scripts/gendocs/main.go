// Command gendocs writes fathom's command reference (docs/reference/*.md) and man pages
// (docs/man/*.1) from the commands themselves:
//
//	go run ./scripts/gendocs [DIR]     # DIR defaults to docs
//
// internal/cli's TestDocsUpToDate fails when the files in docs/ are not what this
// writes; run it after changing a command, a flag or a help text.
package main

import (
	"fmt"
	"os"

	"github.com/fathom-lab/fathom/internal/cli"
)

func main() {
	dir := "docs"
	if len(os.Args) > 1 {
		dir = os.Args[1]
	}
	if err := cli.WriteDocs(dir); err != nil {
		fmt.Fprintln(os.Stderr, "gendocs:", err)
		os.Exit(1)
	}
}
