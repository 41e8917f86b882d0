package capture

import (
	"slices"
	"strconv"
	"strings"
)

// maxSamples bounds the calls kept per transaction shape for the value inference.
const maxSamples = 20_000

// shape is one kind of transaction seen in a log: the same kept statements in the
// same order, in an explicit transaction (BEGIN … COMMIT) or one autocommit statement.
type shape struct {
	steps    []int // indexes into the kept statements
	explicit bool
	count    int64
	rolled   int64        // ended with ROLLBACK
	samples  [][][]string // per kept call: per step, the values
}

// grouping is what the grouping of a log's calls found.
type grouping struct {
	shapes     []*shape // busiest first
	calls      int64    // calls of kept statements that were grouped
	other      int64    // calls inside explicit transactions of statements not kept
	unfinished int64    // transactions still open at the end of the log
}

// group groups the events of each session into transactions: BEGIN (or START
// TRANSACTION) … COMMIT, END or ROLLBACK; a kept statement outside one is its own
// autocommit transaction. kept maps a kept statement's text to its index.
func group(events []Event, kept map[string]int) grouping {
	type sess struct {
		in    bool
		steps []int
		vals  [][]string
	}
	var g grouping
	sessions := map[string]*sess{}
	byKey := map[string]*shape{}
	emit := func(steps []int, vals [][]string, explicit, rolled bool) {
		if len(steps) == 0 {
			return
		}
		var kb strings.Builder
		if explicit {
			kb.WriteString("T")
		}
		for _, s := range steps {
			kb.WriteString("," + strconv.Itoa(s))
		}
		sh := byKey[kb.String()]
		if sh == nil {
			sh = &shape{steps: slices.Clone(steps), explicit: explicit}
			byKey[kb.String()] = sh
			g.shapes = append(g.shapes, sh)
		}
		sh.count++
		if rolled {
			sh.rolled++
		}
		if len(sh.samples) < maxSamples {
			sh.samples = append(sh.samples, slices.Clone(vals))
		}
		g.calls += int64(len(steps))
	}
	for _, e := range events {
		s := sessions[e.Session]
		if s == nil {
			s = &sess{}
			sessions[e.Session] = s
		}
		switch verb(e.SQL) {
		case "begin", "start":
			if s.in { // a BEGIN inside a transaction is a warning to the server, not a new one
				continue
			}
			s.in, s.steps, s.vals = true, s.steps[:0], s.vals[:0]
			continue
		case "commit", "end", "rollback", "abort":
			if strings.Contains(strings.ToLower(e.SQL), " to ") { // ROLLBACK TO SAVEPOINT
				continue
			}
			if s.in {
				emit(s.steps, s.vals, true, verb(e.SQL) == "rollback" || verb(e.SQL) == "abort")
				s.in = false
			}
			continue
		}
		i, ok := kept[e.SQL]
		switch {
		case !ok:
			if s.in {
				g.other++
			}
		case s.in:
			s.steps, s.vals = append(s.steps, i), append(s.vals, e.Values)
		default:
			emit([]int{i}, [][]string{e.Values}, false, false)
		}
	}
	for _, s := range sessions {
		if s.in && len(s.steps) > 0 {
			g.unfinished++
		}
	}
	slices.SortStableFunc(g.shapes, func(a, b *shape) int {
		if a.count != b.count {
			if a.count > b.count {
				return -1
			}
			return 1
		}
		return 0
	})
	return g
}

func verb(sql string) string {
	f := strings.Fields(sql)
	if len(f) == 0 {
		return ""
	}
	return strings.ToLower(strings.TrimSuffix(f[0], ";"))
}

// sameValues finds the parameters of a shape that carried the same value in (nearly)
// every call, such as a key read and then updated: they become one value of the
// transaction. pos lists the shape's parameters as (step, value index); the result
// gives each one its representative (the first of its class).
func sameValues(sh *shape, pos [][2]int) []int {
	rep := make([]int, len(pos))
	for i := range rep {
		rep[i] = i
	}
	at := func(sample [][]string, p [2]int) (string, bool) {
		if p[0] >= len(sample) || p[1] >= len(sample[p[0]]) {
			return "", false
		}
		return sample[p[0]][p[1]], true
	}
	if len(sh.samples) < 5 {
		return rep
	}
	for j := range pos {
		for i := 0; i < j; i++ {
			if rep[i] != i {
				continue
			}
			same, n := 0, 0
			for _, smp := range sh.samples {
				a, ok1 := at(smp, pos[i])
				b, ok2 := at(smp, pos[j])
				if ok1 && ok2 {
					n++
					if a == b {
						same++
					}
				}
			}
			if n >= 5 && float64(same) >= 0.99*float64(n) {
				rep[j] = i
				break
			}
		}
	}
	return rep
}
