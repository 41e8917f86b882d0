package tpcc

import (
	"math"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/gen"
)

// nurandProb is the exact distribution of NURand(A, x, y) with constant c: the
// probability of each value, from the distribution of random(0, A) | random(x, y).
func nurandProb(a, c, x, y int64) []float64 {
	n := y - x + 1
	p := make([]float64, n)
	w := 1 / float64((a+1)*n)
	for i := int64(0); i <= a; i++ {
		for j := x; j <= y; j++ {
			p[((i|j)+c)%n] += w
		}
	}
	return p
}

// chiSquare tests counts against probabilities p with Pearson's statistic and
// returns it with the value a correct generator stays under but for one run in about
// 10^6 (mean + 7 standard deviations of the chi-square with len(p)-1 degrees).
func chiSquare(counts []int64, p []float64, total int64) (stat, limit float64) {
	df := float64(len(p) - 1)
	for i, c := range counts {
		e := p[i] * float64(total)
		if e == 0 {
			if c != 0 {
				return math.Inf(1), 0
			}
			continue
		}
		stat += (float64(c) - e) * (float64(c) - e) / e
	}
	return stat, df + 7*math.Sqrt(2*df)
}

// TestNURand checks NURand for the three A of clause 2.1.6 against its exact
// distribution, and that it is not uniform (a generator that forgot the OR would
// pass a range check but fail here).
func TestNURand(t *testing.T) {
	for _, c := range []struct{ a, c, x, y int64 }{
		{aLast, 123, 0, 999}, {aCID, 259, 1, customersPerDistrict}, {aItem, 7911, 1, 10_000},
	} {
		r := gen.New(42, uint64(c.a))
		p := nurandProb(c.a, c.c, c.x, c.y)
		counts := make([]int64, len(p))
		const draws = 2_000_000
		for range draws {
			v := nuRand(r, c.a, c.c, c.x, c.y)
			if v < c.x || v > c.y {
				t.Fatalf("NURand(%d, %d, %d) = %d out of range", c.a, c.x, c.y, v)
			}
			counts[v-c.x]++
		}
		stat, limit := chiSquare(counts, p, draws)
		if stat > limit {
			t.Errorf("NURand(%d, %d..%d): chi-square %.0f over %.0f", c.a, c.x, c.y, stat, limit)
		}
		uniform := make([]float64, len(p))
		for i := range uniform {
			uniform[i] = 1 / float64(len(p))
		}
		if stat, limit := chiSquare(counts, uniform, draws); stat < 10*limit {
			t.Errorf("NURand(%d, %d..%d) looks uniform: chi-square %.0f against %.0f", c.a, c.x, c.y, stat, limit)
		}
	}
}

func TestConstants(t *testing.T) {
	load := loadConstants()
	if load != loadConstants() {
		t.Fatal("the load constants differ between calls")
	}
	if load.Last < 0 || load.Last > aLast || load.CID < 0 || load.CID > aCID || load.Item < 0 || load.Item > aItem {
		t.Fatalf("load constants out of range: %+v", load)
	}
	seen := map[int64]bool{}
	for seed := range uint64(500) {
		c := runConstants(seed)
		if !validDelta(load.Last, c.Last) {
			t.Fatalf("seed %d: C_LAST %d against load %d breaks clause 2.1.6.1", seed, c.Last, load.Last)
		}
		if c != runConstants(seed) {
			t.Fatalf("seed %d: run constants differ between calls", seed)
		}
		seen[c.Last] = true
	}
	if len(seen) < 20 {
		t.Errorf("only %d distinct run C_LAST values over 500 seeds", len(seen))
	}
	for _, c := range []struct {
		load, run int64
		ok        bool
	}{{0, 65, true}, {0, 64, false}, {200, 81, true}, {200, 80, false}, {0, 119, true}, {0, 120, false}, {10, 106, false}, {130, 18, false}, {0, 97, true}} {
		if validDelta(c.load, c.run) != c.ok {
			t.Errorf("ValidDelta(%d, %d) = %v", c.load, c.run, !c.ok)
		}
	}
}

func TestLastName(t *testing.T) {
	for n, want := range map[int64]string{0: "BARBARBAR", 371: "PRICALLYOUGHT", 999: "EINGEINGEING", 40: "BARPRESBAR"} {
		if got := string(lastName(nil, n)); got != want {
			t.Errorf("LastName(%d) = %s, want %s", n, got, want)
		}
	}
}

func TestStrings(t *testing.T) {
	r := gen.New(1, 1)
	orig := 0
	for range 20_000 {
		s := string(data(r, nil))
		if len(s) < 26 || len(s) > 50 {
			t.Fatalf("data %q: %d characters", s, len(s))
		}
		if strings.Contains(s, "ORIGINAL") {
			orig++
		}
	}
	if orig < 1700 || orig > 2300 { // 10% of 20,000: mean 2000, sd 42
		t.Errorf("%d of 20000 with ORIGINAL", orig)
	}
	for _, c := range []struct{ c int64 }{{0}, {1}, {99}, {100}, {123456}, {-1000}, {-5}} {
		got := string(appendCents(nil, c.c))
		want := map[int64]string{0: "0.00", 1: "0.01", 99: "0.99", 100: "1.00", 123456: "1234.56", -1000: "-10.00", -5: "-0.05"}[c.c]
		if got != want {
			t.Errorf("appendCents(%d) = %s, want %s", c.c, got, want)
		}
		if back := parseCents([]byte(got)); back != c.c {
			t.Errorf("parseCents(%s) = %d", got, back)
		}
	}
	if got := string(appendFrac4(nil, 1234)); got != "0.1234" {
		t.Errorf("appendFrac4 = %s", got)
	}
	if z := string(zip(r, nil)); len(z) != 9 || !strings.HasSuffix(z, "11111") {
		t.Errorf("zip %q", z)
	}
	for _, c := range []struct {
		s    string
		want int64
	}{{"3001", 3001}, {"-7", -7}, {"", 0}, {"12.50", 12}} {
		if got := parseInt([]byte(c.s)); got != c.want {
			t.Errorf("parseInt(%q) = %d", c.s, got)
		}
	}
	if parseCents([]byte("29.999999999")) != 3000 || parseCents([]byte("7")) != 700 {
		t.Errorf("parseCents of floats")
	}
}

// within reports whether k successes of n are within 5 standard deviations of p.
func within(k, n int64, p float64) bool {
	mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
	return math.Abs(float64(k)-mean) <= 5*sd
}

// TestInputs draws transactions as the workers do and checks the shares clause 2
// sets: the mix, New-Order's 1% rollbacks with the unused item last and 1% remote
// lines, Payment's 15% remote customers and 60% by last name, the inputs' ranges.
func TestInputs(t *testing.T) {
	w, err := newWorkload(workload.Params{"warehouses": "5"})
	if err != nil {
		t.Fatal(err)
	}
	w.warehouses = 5
	k := w.NewWorker(3, 99).(*worker)
	if k.home != 4 {
		t.Errorf("client 3 of 5 warehouses has home %d, want 4", k.home)
	}
	const n = 200_000
	var types [numTxn]int64
	var lines, remoteLines, payments, remotePay, byName, osByName int64
	for range n {
		typ := k.Next()
		types[typ]++
		if k.wid != 4 || k.did < 1 || k.did > 10 {
			t.Fatalf("home %d district %d", k.wid, k.did)
		}
		switch typ {
		case txnNewOrder, txnNewOrderRollback:
			if len(k.lines) < 5 || len(k.lines) > 15 || k.cid < 1 || k.cid > 3000 {
				t.Fatalf("new-order with %d lines, customer %d", len(k.lines), k.cid)
			}
			local := true
			for i, l := range k.lines {
				lines++
				if l.supplyW != k.wid {
					remoteLines++
					local = false
				}
				if l.qty < 1 || l.qty > 10 || l.item < 1 || l.item > items+1 {
					t.Fatalf("line %+v", l)
				}
				if (l.item == items+1) != (typ == txnNewOrderRollback && i == len(k.lines)-1) {
					t.Fatalf("unused item at line %d of %d in a %s", i+1, len(k.lines), txnNames[typ])
				}
			}
			if local != k.allLocal {
				t.Fatalf("o_all_local %v with lines %+v", k.allLocal, k.lines)
			}
		case txnPayment:
			payments++
			if k.cwid != k.wid {
				remotePay++
			}
			if k.byName {
				byName++
				if k.cid != 0 || len(k.last) < 9 {
					t.Fatalf("by name %q with id %d", k.last, k.cid)
				}
			}
			if k.amount < 100 || k.amount > 500_000 {
				t.Fatalf("amount %d", k.amount)
			}
		case txnOrderStatus:
			if k.cwid != k.wid {
				t.Fatal("order-status for a remote customer")
			}
			if k.byName {
				osByName++
			}
		case txnDelivery:
			if k.carrier < 1 || k.carrier > 10 {
				t.Fatalf("carrier %d", k.carrier)
			}
		case txnStockLevel:
			if k.threshold < 10 || k.threshold > 20 {
				t.Fatalf("threshold %d", k.threshold)
			}
		}
	}
	newOrders := types[txnNewOrder] + types[txnNewOrderRollback]
	for i, p := range []float64{0.45, 0.43, 0.04, 0.04, 0.04} {
		got := types[i]
		if i == 0 {
			got = newOrders
		}
		if !within(got, n, p) {
			t.Errorf("%s: %d of %d, want %.0f%%", txnNames[i], got, n, p*100)
		}
	}
	checks := []struct {
		what string
		k, n int64
		p    float64
	}{
		{"rolled-back new-orders", types[txnNewOrderRollback], newOrders, 0.01},
		{"remote order lines", remoteLines, lines, 0.01},
		{"remote payments", remotePay, payments, 0.15},
		{"payments by last name", byName, payments, 0.60},
		{"order-status by last name", osByName, types[txnOrderStatus], 0.60},
	}
	for _, c := range checks {
		if !within(c.k, c.n, c.p) {
			t.Errorf("%s: %d of %d, want %.0f%%", c.what, c.k, c.n, c.p*100)
		}
	}

	// One warehouse: nothing is remote. Another mix; all_warehouses spreads the home.
	w1, _ := newWorkload(workload.Params{"mix": "10,10,20,30,30", "all_warehouses": "on"})
	w1.warehouses = 1
	k1 := w1.NewWorker(0, 1).(*worker)
	var t1 [numTxn]int64
	for range 50_000 {
		typ := k1.Next()
		t1[typ]++
		if typ == txnPayment && k1.cwid != 1 || (typ == txnNewOrder && !k1.allLocal) {
			t.Fatal("a remote warehouse with one warehouse")
		}
	}
	if !within(t1[txnDelivery], 50_000, 0.3) || !within(t1[txnNewOrder]+t1[txnNewOrderRollback], 50_000, 0.1) {
		t.Errorf("mix 10,10,20,30,30 drew %v", t1)
	}
	w.allWH = true
	k = w.NewWorker(0, 5).(*worker)
	homes := map[int64]int{}
	for range 1000 {
		k.Next()
		homes[k.wid]++
	}
	if len(homes) != 5 {
		t.Errorf("all_warehouses used homes %v", homes)
	}
}

func TestOptions(t *testing.T) {
	for _, c := range []struct {
		p   workload.Params
		err string
	}{
		{workload.Params{"warehouses": "0"}, "option warehouses: 0 is out of range"},
		{workload.Params{"mix": "45,43,4,4"}, "give five percentages"},
		{workload.Params{"mix": "45,43,4,4,5"}, "adds up to 101, not 100"},
		{workload.Params{"mix": "45,43,x,4,4"}, `"x" is not a percentage`},
		{workload.Params{"all_warehouses": "maybe"}, "not on or off"},
		{workload.Params{"scale": "3"}, "workload tpcc has no option scale"},
	} {
		if _, err := newWorkload(c.p); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%v: %v, want %q", c.p, err, c.err)
		}
	}
	w, err := newWorkload(workload.Params{"warehouses": "3"})
	if err != nil || w.Options()["warehouses"] != "3" || w.Options()["mix"] != defaultMix || len(w.TxnTypes()) != 6 {
		t.Errorf("%v %v", w.Options(), err)
	}
}

// The spec's terminals (keying on): ten per warehouse, each with its Stock-Level
// district; before each transaction the keying time of its type and the think time
// of the one before, negative exponential with the clause's mean, at most ten times
// it; the ceiling they imply is 12.86 New-Orders per minute per warehouse.
func TestKeying(t *testing.T) {
	if c := ceilingPerTerminal([5]int{45, 43, 4, 4, 4}) * terminalsPerWarehouse; math.Abs(c-12.86) > 0.005 {
		t.Errorf("ceiling %.4f per warehouse, the spec's is 12.86", c)
	}
	if _, err := newWorkload(workload.Params{"keying": "on", "all_warehouses": "on"}); err == nil || !strings.Contains(err.Error(), "leave all_warehouses off") {
		t.Errorf("keying with all_warehouses: %v", err)
	}
	off, _ := newWorkload(workload.Params{"warehouses": "2"})
	off.warehouses = 2
	if d := off.NewWorker(0, 1).(*worker).Wait(); d != 0 || off.RunNotes(20) != nil {
		t.Errorf("keying off: wait %s, notes %v", d, off.RunNotes(20))
	}
	w, err := newWorkload(workload.Params{"warehouses": "2", "keying": "on"})
	if err != nil {
		t.Fatal(err)
	}
	w.warehouses = 2
	for id, want := range map[int][2]int64{0: {1, 1}, 9: {1, 10}, 10: {2, 1}, 13: {2, 4}, 20: {1, 1}} {
		k := w.NewWorker(id, 1).(*worker)
		if k.home != want[0] || k.slDistrict != want[1] {
			t.Errorf("terminal %d: warehouse %d district %d, want %v", id, k.home, k.slDistrict, want)
		}
	}
	notes := w.RunNotes(20)
	if len(notes) != 1 || !strings.Contains(notes[0], "12.86 per warehouse") || !strings.Contains(notes[0], "NOPM 25.5 for these 20 clients") || strings.Contains(notes[0], "-c 20") {
		t.Errorf("notes for 20 clients: %v", notes)
	}
	if n := w.RunNotes(8); len(n) != 1 || !strings.Contains(n[0], "-c 20") {
		t.Errorf("notes for 8 clients: %v", n)
	}
	if o := w.Options()["keying_ceiling"]; !strings.HasPrefix(o, "12.86 New-Orders per minute per warehouse") || !strings.Contains(o, "25.7 for 2 warehouses") {
		t.Errorf("keying_ceiling %q", o)
	}

	k := w.NewWorker(13, 7).(*worker)
	const n = 100_000
	var sum [5]float64
	var cnt [5]int
	prev := -1
	for i := range n {
		typ := k.Next()
		if typ == txnStockLevel && k.did != 4 {
			t.Fatalf("stock-level of terminal 13 in district %d", k.did)
		}
		d := k.Wait()
		think := d - keyingTime[k.typ]
		if i == 0 && think != 0 {
			t.Fatalf("the first wait %s is not the keying time %s", d, keyingTime[k.typ])
		}
		if prev >= 0 {
			if think < 0 || think > 10*thinkMean[prev] {
				t.Fatalf("think time %s after %s", think, txnNames[prev])
			}
			sum[prev] += think.Seconds()
			cnt[prev]++
		}
		prev = k.typ
	}
	// The truncated exponential's mean is (1 - e^-10) m; 5 standard errors of m/sqrt(n).
	for i, m := range thinkMean {
		mean, want := sum[i]/float64(cnt[i]), m.Seconds()*(1-math.Exp(-10))
		if se := m.Seconds() / math.Sqrt(float64(cnt[i])); math.Abs(mean-want) > 5*se {
			t.Errorf("%s: mean think time %.3f s over %d, want %.3f", txnNames[i], mean, cnt[i], want)
		}
	}
}
