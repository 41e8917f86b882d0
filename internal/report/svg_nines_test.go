package report

import "testing"

func TestNinesLabel(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {7, "99.99999%"}, {1.5, "96.8377%"}} {
		if got := ninesLabel(c.x); got != c.want {
			t.Errorf("ninesLabel(%v) = %q, want %q", c.x, got, c.want)
		}
	}
}
