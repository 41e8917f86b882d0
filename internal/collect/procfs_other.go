//go:build !linux

package collect

import (
	"errors"

	"github.com/prometheus/procfs"
)

// hasProcfs: this build has no /proc to read (see procfs_linux.go); OS collectors
// report themselves unsupported and host facts are what Go's runtime knows.
const hasProcfs = false

func cpuModel(procfs.FS) string { return "" }

func deviceOf(string) (maj, min uint32, err error) { return 0, 0, errors.ErrUnsupported }
