//go:build !unix

package mysql

import "time"

// cpuTime is not measured here.
func cpuTime() time.Duration { return 0 }
