package analyze

import (
	"fmt"
	"math"
	"time"
)

// How explanations write figures: rates and levels in their units, numbers to about
// three significant digits, bytes in binary multiples, moments in seconds.

func stallRate(v float64, unit string) string {
	switch unit {
	case "bytes":
		return stallBytes(v) + "/s"
	}
	if unit == "" {
		return fmt.Sprintf("%s/s", stallNum(v))
	}
	return fmt.Sprintf("%s %s/s", stallNum(v), unit)
}

func stallLevel(v float64, unit string) string {
	switch unit {
	case "bytes":
		return stallBytes(v)
	case "%":
		return fmt.Sprintf("%.0f%%", v)
	}
	if unit == "" {
		return stallNum(v)
	}
	return stallNum(v) + " " + unit
}

func stallNum(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 100:
		return fmt.Sprintf("%.0f", v)
	case a >= 10:
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func stallBytes(v float64) string {
	for _, u := range []struct {
		s string
		n float64
	}{{"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if math.Abs(v) >= u.n {
			return fmt.Sprintf("%.1f %s", v/u.n, u.s)
		}
	}
	return fmt.Sprintf("%.0f B", v)
}

// stallChange describes a metric's move: "from 120/s to 5,400/s".
func stallChange(d stallDuring) string {
	if d.ms.ser.IsCounter() {
		return fmt.Sprintf("from %s to %s", stallRate(d.ms.base, d.ms.ser.Unit), stallRate(d.mean, d.ms.ser.Unit))
	}
	return fmt.Sprintf("from %s to %s", stallLevel(d.ms.base, d.ms.ser.Unit), stallLevel(d.peak, d.ms.ser.Unit))
}

func stallAt(d time.Duration) string { return fmt.Sprintf("%.1fs", d.Seconds()) }
