package report

import "testing"

func TestUnits(t *testing.T) {
	for _, c := range []struct {
		kind int
		vals []float64
		v    float64
		want string
	}{
		{kindMillis, []float64{0.2, 0.5}, 0.25, "250 µs"},
		{kindMillis, []float64{1.5, 12}, 1.5, "1.5 ms"},
		{kindMillis, []float64{1.5, 1200}, 1.5, "0.0015 s"},
		{kindMillis, []float64{2500}, 2500, "2.5 s"},
		{kindCount, []float64{27, 1437}, 1437, "1437"},
		{kindCount, []float64{12345}, 12345, "12.3K"},
		{kindCount, []float64{2.5e6}, 2.5e6, "2.5M"},
		{kindCount, []float64{3}, 2.345, "2.35"},
		{kindCount, []float64{3}, 0, "0"},
		{kindPercent, []float64{3}, 0.1234, "0.123%"},
	} {
		if got := unitFor(c.kind, c.vals...).Format(c.v); got != c.want {
			t.Errorf("UnitFor(%d, %v).Format(%v) = %q, want %q", c.kind, c.vals, c.v, got, c.want)
		}
	}
	if signedPct(-98.123) != "-98.1%" || signedPct(4.2) != "+4.2%" || pValue(0.0001) != "p<0.001" || pValue(0.1) != "p=0.100" {
		t.Error("signedPct/pValue")
	}
}
