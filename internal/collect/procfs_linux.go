//go:build linux

package collect

import (
	"strings"
	"syscall"

	"github.com/prometheus/procfs"
)

// hasProcfs: this build reads OS metrics from Linux's /proc and /sys (procfs_other.go
// is the portable build, where OS collectors report themselves unsupported).
const hasProcfs = true

// cpuModel is the first CPU's model name from /proc/cpuinfo.
func cpuModel(fs procfs.FS) string {
	if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
		return strings.TrimSpace(cpus[0].ModelName)
	}
	return ""
}

// deviceOf is the major and minor number of the device holding path.
func deviceOf(path string) (maj, min uint32, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(path, &st); err != nil {
		return 0, 0, err
	}
	return devMajor(uint64(st.Dev)), devMinor(uint64(st.Dev)), nil
}
