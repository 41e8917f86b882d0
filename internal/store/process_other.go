//go:build !unix

package store

// processExists: not checked here, so a run is never taken for gone.
func processExists(int) bool { return true }
