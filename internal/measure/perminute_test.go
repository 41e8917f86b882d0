package measure

import (
	"testing"
	"time"
)

func TestPerMinute(t *testing.T) {
	iv := NewInterval(0, []string{"new-order", "payment", "new-order-rollback"})
	iv.Types[0].OK, iv.Types[1].OK, iv.Types[2].OK = 90, 86, 1
	nopm, tpm := PerMinute(iv, 30)
	if nopm != 180 || tpm != 354 {
		t.Errorf("NOPM %v TPM %v, want 180 and 354", nopm, tpm)
	}
	if n, m := PerMinute(iv, 0); n != 0 || m != 0 {
		t.Errorf("over no time: %v %v", n, m)
	}
	other := NewInterval(0, []string{"tpcb-like"})
	other.Types[0].OK = 1000
	if n, m := PerMinute(other, 10); n != 0 || m != 0 {
		t.Errorf("a run without new-order has NOPM %v TPM %v", n, m)
	}
	s := Summarize([]string{"new-order", "payment"}, []*Interval{iv2(45, 43, 0, 15), iv2(45, 43, 15, 30)})
	if s.NOPM != 180 || s.TPM != 352 {
		t.Errorf("summary NOPM %v TPM %v, want 180 and 352", s.NOPM, s.TPM)
	}
}

func iv2(no, pay int64, from, to int) *Interval {
	iv := NewInterval(0, []string{"new-order", "payment"})
	iv.Types[0].OK, iv.Types[1].OK = no, pay
	iv.Start, iv.End = secs(from), secs(to)
	return iv
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }
