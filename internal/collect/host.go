// Package collect gathers facts and samples from the server and the OS.
package collect

import (
	"errors"
	"os"
	"runtime"
	"strings"

	"github.com/prometheus/procfs"
)

// host describes the machine fathom runs on.
type host struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel,omitempty"`
	CPUModel    string `json:"cpu_model,omitempty"`
	CPUs        int    `json:"cpus"`
	MemoryBytes uint64 `json:"memory_bytes,omitempty"`
	GoVersion   string `json:"go_version"`
}

// HostFacts reads the host's facts; what cannot be read is left empty. On Linux they
// come from /proc; elsewhere only what Go's runtime knows (name, OS, CPU count).
func HostFacts() host { return hostFacts(true) }

// hostFacts is HostFacts, taking the portable path when useProcfs is false (as every
// system but Linux does), so that path is tested on Linux too.
func hostFacts(useProcfs bool) host {
	h := host{OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	h.Hostname, _ = os.Hostname()
	fs, err := openProcfs(useProcfs)
	if err != nil {
		return h
	}
	h.CPUModel = cpuModel(fs)
	if mi, err := fs.Meminfo(); err == nil && mi.MemTotal != nil {
		h.MemoryBytes = *mi.MemTotal * 1024
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	return h
}

// Where OS metrics come from, as OSMetrics says.
const (
	// OSMetricsProcfs: Linux's /proc and /sys, through prometheus/procfs.
	OSMetricsProcfs = "procfs"
	// OSMetricsUnsupported: no OS metrics; the OS collectors report themselves
	// skipped as unsupported.
	OSMetricsUnsupported = "unsupported"
)

// OSMetrics says which path OS metrics take in this build, and with noProcfs (the
// portable path forced, as Options.NoProcfs): OSMetricsProcfs or OSMetricsUnsupported.
// A run records it with its host facts.
func OSMetrics(noProcfs bool) string {
	if hasProcfs && !noProcfs {
		return OSMetricsProcfs
	}
	return OSMetricsUnsupported
}

// unsupportedError is what the OS side reads where there is no /proc to read.
type unsupportedError struct{ forced bool }

func (e unsupportedError) Error() string {
	if e.forced {
		return "unsupported: the portable path was forced, /proc is not read"
	}
	return "unsupported on " + runtime.GOOS + ": fathom reads OS metrics from Linux's /proc"
}

func (unsupportedError) Is(target error) bool { return target == errors.ErrUnsupported }

// openProcfs opens /proc where this build reads it and use is set; otherwise the
// error is errors.ErrUnsupported.
func openProcfs(use bool) (procfs.FS, error) {
	if !hasProcfs || !use {
		return procfs.FS{}, unsupportedError{forced: hasProcfs}
	}
	return procfs.NewDefaultFS()
}
