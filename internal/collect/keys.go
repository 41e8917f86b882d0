package collect

import "time"

// KeyMetricser is a Database that names the few of its metrics shown first (fathom
// show, fathom watch): the ones the stall patterns read.
type KeyMetricser interface {
	KeyMetrics() []string
}

// hostKeyMetrics are the host's key metrics, shown after the server's.
var hostKeyMetrics = []string{OSCPUUserPct, OSCPUSystemPct, OSCPUIowaitPct, osProcsBlocked, OSMemDirtyBytes, OSMemWritebackBytes,
	OSVmDirtyBackgroundThresholdPct, OSDiskWrites, OSDiskWriteBytes, OSDiskReads, OSDiskAwaitMs,
	OSDiskUtilPct, OSDiskFlushes, OSPressureIOSomePct, OSServerCPUPct, osServerMemoryBytes}

// KeyMetrics lists the key metrics of a kind's server (d nil or without any: none)
// followed by the host's.
func KeyMetrics(d Database) []string {
	var out []string
	if k, ok := d.(KeyMetricser); ok {
		out = append(out, k.KeyMetrics()...)
	}
	return append(out, hostKeyMetrics...)
}

// Timeout is the sampler's default per-collector timeout.
func (s *Sampler) Timeout() time.Duration { return s.opts.Timeout }
