//go:build !unix

package serve

func processCPU() float64 { return 0 }
