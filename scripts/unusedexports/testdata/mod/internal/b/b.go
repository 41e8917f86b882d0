// Package b uses a.
package b

import "example.com/m/internal/a"

// B calls a.Used.
func B() int { return a.Used() }
