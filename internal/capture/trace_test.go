package capture

import (
	"context"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// TestFitInts: uniform draws are called uniform, Zipfian ones Zipfian with about the
// exponent they were drawn with, and each verdict says how sure it is.
func TestFitInts(t *testing.T) {
	r := gen.New(7, 1)
	pcg := rand.New(rand.NewPCG(1, 2))
	var uni, zip, scr []string
	z := gen.NewZipf(100_000, 0.99)
	for range 5000 {
		uni = append(uni, strconv.FormatInt(1+pcg.Int64N(100_000), 10))
		zip = append(zip, strconv.FormatInt(z.Next(r), 10))
		scr = append(scr, strconv.FormatInt(gen.Scramble(z.Next(r), 1, 100_000), 10))
	}
	g := fitValues(uni, 1, 100_000, true)
	if g.YAML != "{uniform: [1, 100000]}" || !strings.Contains(g.Comment, "uniform fits the 5000 observed values") {
		t.Errorf("uniform: %+v", g)
	}
	for _, c := range []struct {
		vals     []string
		scramble bool
	}{{zip, false}, {scr, true}} {
		g = fitValues(c.vals, 1, 100_000, true)
		t.Logf("zipfian 0.99, scrambled %v: %s  # %s", c.scramble, g.YAML, g.Comment)
		var lo, hi int64
		var exp float64
		if _, err := fmt.Sscanf(g.YAML, "{zipfian: {min: %d, max: %d, exp: %g", &lo, &hi, &exp); err != nil || lo != 1 || hi != 100_000 ||
			exp < 0.94 || exp > 1.04 || strings.Contains(g.YAML, "scramble") != c.scramble || !strings.Contains(g.Comment, "a good fit") {
			t.Errorf("zipfian 0.99 (scrambled %v): %+v", c.scramble, g)
		}
	}
	if g := fitValues(uni[:10], 1, 100_000, true); !strings.Contains(g.Comment, "too few") {
		t.Errorf("10 values: %+v", g)
	}
	if g := fitValues([]string{"5", "5", "5", "5", "5", "5"}, 1, 10, true); g.YAML != "5" {
		t.Errorf("a constant: %+v", g)
	}
	var tiers []string
	for i := range 90 {
		tiers = append(tiers, []string{"gold", "basic", "basic"}[i%3])
	}
	if g := fitValues(tiers, 0, 0, false); g.YAML != `{choice: [{value: "basic", weight: 60}, {value: "gold", weight: 30}]}` {
		t.Errorf("texts: %+v", g)
	}
	// Values crowded in part of the range without repeats: said to be a poor fit.
	var low []string
	for i := range 500 {
		low = append(low, strconv.Itoa(1+i*10))
	}
	if g := fitValues(low, 1, 100_000, true); !strings.Contains(g.Comment, "NOT a good fit") {
		t.Errorf("crowded values: %+v", g)
	}
}

// TestGroup: calls are grouped into the transactions their sessions ran, interleaved
// sessions kept apart; a value read and then updated becomes one value.
func TestGroup(t *testing.T) {
	upd, sel := "UPDATE kv SET v = v + $1 WHERE k = $2", "SELECT v FROM kv WHERE k = $1"
	var ev []Event
	for i := range 60 {
		k, u := strconv.Itoa(i%7+1), strconv.Itoa(i*13%1000+1)
		ev = append(ev, Event{Session: "1", SQL: "BEGIN"}, Event{Session: "2", SQL: sel, Values: []string{u}},
			Event{Session: "1", SQL: upd, Values: []string{"1", k}}, Event{Session: "1", SQL: "SET x = 1"},
			Event{Session: "1", SQL: sel, Values: []string{k}}, Event{Session: "1", SQL: "COMMIT"})
	}
	ev = append(ev, Event{Session: "3", SQL: "BEGIN"}, Event{Session: "3", SQL: sel, Values: []string{"1"}})
	st := statementsOf(ev)
	kept := []Statement{}
	for _, s := range st {
		if keep(s) {
			kept = append(kept, s)
		}
	}
	w := Build(context.Background(), nil, kept, ev, Source{}, Options{})
	if len(w.Txns) != 2 || w.Unfinished != 1 {
		t.Fatalf("%d transactions, %d unfinished: %+v", len(w.Txns), w.Unfinished, w.Txns)
	}
	var tx, auto capturedTxn
	for _, x := range w.Txns {
		if x.Autocommit {
			auto = x
		} else {
			tx = x
		}
	}
	if tx.Count != 60 || !reflect.DeepEqual(tx.Steps, []string{"UPDATE kv SET v = v + :v WHERE k = :k", "SELECT v FROM kv WHERE k = :k"}) || len(tx.Values) != 2 ||
		tx.Values[0].YAML != "1" || auto.Count != 60 || len(auto.Steps) != 1 || w.Other != 60 {
		t.Errorf("explicit %+v\nautocommit %+v\nother calls %d", tx, auto, w.Other)
	}
	var b strings.Builder
	if err := w.Write(&b); err != nil || !strings.Contains(b.String(), "# Transactions: as the sessions ran them") || !strings.Contains(b.String(), "1 transactions still open") {
		t.Errorf("written:\n%s", b.String())
	}
}
