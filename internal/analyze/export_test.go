package analyze

// Internals the external tests (which get each kind's stall rules through
// internal/db) call.
var (
	HostLoadOf         = hostLoad
	StallRollingMedian = stallRollingMedian
)

// StallMetricLists are the metric lists the generic stall rules read, by name.
func StallMetricLists() map[string][]string {
	return map[string][]string{
		"serverRates": serverRates, "stallTableLockSessions": stallTableLockSessions,
		"stallRowLockSessions": stallRowLockSessions, "stallAnyLockSessions": stallAnyLockSessions,
		"host": {stallRowLockTime, metricRunQueue, metricCPUs, metricSteal},
	}
}
