package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// Version and Commit may be set at build time (the Makefile and deploy/Dockerfile do):
//
//	-ldflags "-X github.com/fathom-lab/fathom/internal/cli.Version=v1.2.3 -X github.com/fathom-lab/fathom/internal/cli.Commit=<sha>"
//
// Otherwise both come from the build information Go records in the binary: the
// module's version (v1.2.3 after `go install …@v1.2.3`; a pseudo-version such as
// v0.0.0-20260101120000-84b6cfbd19d0, with +dirty for uncommitted changes, after
// `go build` or `go install` in a git checkout) and the vcs.* settings.
var (
	Version = ""
	Commit  = ""
)

// buildInfo is what fathom knows about its own build.
type buildInfo struct {
	Version    string `json:"version"`               // "(devel)" when nothing is known
	Commit     string `json:"commit,omitempty"`      // full revision when known, else the pseudo-version's 12 digits
	CommitTime string `json:"commit_time,omitempty"` // RFC 3339, from vcs.time
	Modified   bool   `json:"modified,omitempty"`    // built from a checkout with uncommitted changes
	Go         string `json:"go"`
	Platform   string `json:"platform"` // GOOS/GOARCH
}

// pseudoRev matches the revision at the end of a Go pseudo-version
// (vX.Y.Z-yyyymmddhhmmss-abcdefabcdef, vX.Y.Z-pre.0.yyyymmddhhmmss-abcdef…), before
// any +build metadata such as +dirty.
var pseudoRev = regexp.MustCompile(`[-.]\d{14}-([0-9a-f]{12})(\+.*)?$`)

// readBuild reads the build's facts from the linker flags and from bi (nil when the
// binary has none).
func readBuild(bi *debug.BuildInfo, ldVersion, ldCommit string) buildInfo {
	b := buildInfo{Version: ldVersion, Commit: ldCommit, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi == nil {
		if b.Version == "" {
			b.Version = "(devel)"
		}
		return b
	}
	if bi.GoVersion != "" {
		b.Go = bi.GoVersion
	}
	var rev string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			b.CommitTime = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	mv := bi.Main.Version
	if mv == "(devel)" {
		mv = ""
	}
	if b.Commit == "" {
		b.Commit = rev
	}
	if b.Commit == "" {
		// `go install …@version` builds from the module zip: no vcs.* settings, but a
		// pseudo-version names its commit.
		if m := pseudoRev.FindStringSubmatch(mv); m != nil {
			b.Commit = m[1]
		}
	}
	if b.Version == "" {
		switch {
		case mv != "": // already names the commit and +dirty when it is a pseudo-version
			b.Version = mv
		case rev != "": // VCS settings without a module version (not done by Go 1.24+, kept for safety)
			b.Version = "devel-" + rev[:min(12, len(rev))]
			if b.Modified {
				b.Version += "+dirty"
			}
		default:
			b.Version = "(devel)"
		}
	}
	return b
}

func build() buildInfo {
	bi, _ := debug.ReadBuildInfo()
	return readBuild(bi, Version, Commit)
}

// version is the version recorded with runs and reports and printed by --version.
func version() string { return build().Version }

func newVersionCmd(env *Env) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print fathom's version, commit, Go version and platform",
		Long: `Prints what fathom knows about its own build. The version and commit come from the
linker flags of make build, or from what Go recorded: go build and go install in a git
checkout record the commit; go run records nothing, and then the version is "(devel)".`,
		RunE: func(cmd *cobra.Command, args []string) error {
			b := build()
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(b)
			}
			fmt.Fprintf(env.Stdout, "fathom %s\n", b.Version)
			if b.Commit != "" {
				c := b.Commit
				if b.CommitTime != "" {
					c += " (" + b.CommitTime + ")"
				}
				if b.Modified {
					c += ", with uncommitted changes"
				}
				fmt.Fprintf(env.Stdout, "commit   %s\n", c)
			} else {
				fmt.Fprintf(env.Stdout, "commit   unknown (built without version control information: use make build, or go build in a git checkout)\n")
			}
			fmt.Fprintf(env.Stdout, "go       %s\nplatform %s\n", b.Go, b.Platform)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build's facts as JSON")
	return cmd
}
