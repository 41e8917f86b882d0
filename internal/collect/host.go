// Package collect gathers facts and samples from the server and the OS.
package collect

import (
	"os"
	"runtime"
	"strings"

	"github.com/prometheus/procfs"
)

// Host describes the machine fathom runs on.
type Host struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
}

// HostFacts reads the host's facts; what cannot be read is left empty.
func HostFacts() Host {
	h := Host{OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	fs, err := procfs.NewDefaultFS()
	if err != nil {
		return h
	}
	if cpus, err := fs.CPUInfo(); err == nil && len(cpus) > 0 {
		h.CPUModel = strings.TrimSpace(cpus[0].ModelName)
	}
	if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
		h.MemoryBytes = *mi.MemTotal * 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}
