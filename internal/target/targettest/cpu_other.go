//go:build !unix

package targettest

import "time"

// CPUTime is not measured here.
func CPUTime() time.Duration { return 0 }
