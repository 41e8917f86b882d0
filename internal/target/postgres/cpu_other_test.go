//go:build !unix

package postgres

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
