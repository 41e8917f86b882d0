package analyze

// Internals the external tests (which get each kind's stall rules through
// internal/db) call.
var (
	HostLoadOf         = hostLoad
	StallRollingMedian = stallRollingMedian
)

// StallMetricLists are the host's metrics the generic stall rules read, by name (the
// kinds' are their vocabularies, checked by db's TestUndeclared).
func StallMetricLists() map[string][]string {
	return map[string][]string{"host": {metricRunQueue, metricCPUs, metricSteal}}
}
