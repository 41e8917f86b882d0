package pgscript

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/workload/pgscript/pgbenchtest"
)

// seqGen writes random scripts of meta-commands: \set over the script's variables,
// \if/\elif/\else/\endif nested two deep on conditions over them, SELECT … \gset
// through the server, \sleep, and probes that print a variable with debug(). Every
// value stays within ±997 (each assignment takes % 997), so a probe prints
// client_id × 1,000,000 + value and the clients' lines can be told apart in pgbench's
// output.
type seqGen struct {
	r    *rand.Rand
	vars int
	b    strings.Builder
}

func (g *seqGen) v() string { return fmt.Sprintf(":v%d", g.r.IntN(g.vars)) }

func (g *seqGen) term() string {
	switch g.r.IntN(6) {
	case 0:
		return strconv.Itoa(g.r.IntN(20) - 5)
	case 1:
		return ":client_id"
	case 2:
		if g.r.IntN(2) == 0 {
			return "abs(" + g.v() + ")"
		}
		return fmt.Sprintf("mod(%s, %d)", g.v(), 2+g.r.IntN(9))
	case 3:
		return []string{"greatest", "least"}[g.r.IntN(2)] + "(" + g.v() + ", " + g.v() + ")"
	}
	return g.v()
}

func (g *seqGen) intExpr() string {
	s := g.term()
	for range g.r.IntN(3) {
		s += " " + []string{"+", "-", "*"}[g.r.IntN(3)] + " " + g.term()
	}
	return s
}

func (g *seqGen) cond() string {
	c := fmt.Sprintf("%s %s %s", g.intExpr(), []string{"=", "<>", "<", ">=", ">"}[g.r.IntN(5)], g.intExpr())
	if g.r.IntN(3) == 0 {
		c = fmt.Sprintf("(%s) %s (%s %% %d = 0)", c, []string{"AND", "OR"}[g.r.IntN(2)], g.v(), 2+g.r.IntN(3))
	}
	return c
}

func (g *seqGen) block(depth, n int) {
	for range n {
		switch k := g.r.IntN(10); {
		case k <= 3:
			fmt.Fprintf(&g.b, "\\set v%d (%s) %% 997\n", g.r.IntN(g.vars), g.intExpr())
		case k == 4:
			fmt.Fprintf(&g.b, "SELECT (%s + %s) %% 997 AS v%d, (%s * 3) %% 997 AS v%d \\gset\n", g.v(), g.v(), g.r.IntN(g.vars), g.v(), g.r.IntN(g.vars))
		case k == 5:
			fmt.Fprintf(&g.b, "\\sleep %d %s\n", g.r.IntN(2), []string{"us", "ms"}[g.r.IntN(2)])
		case k <= 7:
			fmt.Fprintf(&g.b, "\\set p debug(:client_id * 1000000 + %s)\n", g.v())
		default:
			if depth >= 2 {
				fmt.Fprintf(&g.b, "\\set p debug(:client_id * 1000000 + %s)\n", g.v())
				continue
			}
			fmt.Fprintf(&g.b, "\\if %s\n", g.cond())
			g.block(depth+1, 1+g.r.IntN(3))
			for range g.r.IntN(3) {
				fmt.Fprintf(&g.b, "\\elif %s\n", g.cond())
				g.block(depth+1, 1+g.r.IntN(3))
			}
			if g.r.IntN(2) == 0 {
				g.b.WriteString("\\else\n")
				g.block(depth+1, 1+g.r.IntN(3))
			}
			g.b.WriteString("\\endif\n")
		}
	}
}

// script is one generated script: every variable set from the client's id first,
// the random body, then a probe of every variable.
func (g *seqGen) script() string {
	g.b.Reset()
	for i := range g.vars {
		fmt.Fprintf(&g.b, "\\set v%d (:client_id * %d + %d) %% 997\n", i, 3+2*i, i)
	}
	g.block(0, 6+g.r.IntN(10))
	for i := range g.vars {
		fmt.Fprintf(&g.b, "\\set p debug(:client_id * 1000000 + :v%d)\n", i)
	}
	return g.b.String()
}

// probes turns debug lines into each client's probes in order: "command N: value".
func probes(lines []string, clients int) [][]string {
	out := make([][]string, clients)
	for _, l := range lines {
		m := debugLine.FindStringSubmatch(strings.TrimSpace(l))
		if m == nil {
			continue
		}
		x, err := strconv.ParseInt(strings.TrimPrefix(m[2], "int "), 10, 64)
		if err != nil {
			continue
		}
		c := int((x + 500_000) / 1_000_000)
		if c >= 0 && c < clients {
			out[c] = append(out[c], fmt.Sprintf("command %s: %d", m[1], x-int64(c)*1_000_000))
		}
	}
	return out
}

// TestGeneratedSequencesAgainstPgbench runs random meta-command sequences (see
// seqGen) through pgbench and through fathom, every client taking its own path
// through the branches, and compares each client's probes, command by command and
// value by value: which branches ran, what \set and \gset left in the variables.
func TestGeneratedSequencesAgainstPgbench(t *testing.T) {
	pgbenchtest.Path(t)
	dsn := dbtest.PostgresDatabase(t, "pgbench_diff")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seed := uint64(20261128)
	if s := os.Getenv("FATHOM_TEST_SEQ_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	g := &seqGen{r: rand.New(rand.NewPCG(seed, 11)), vars: 4}
	const scripts, clients = 20, 8
	dir := t.TempDir()
	var total, agree, probesSeen int
	for b := range scripts {
		src := g.script()
		file := filepath.Join(dir, fmt.Sprintf("s%d.sql", b))
		if err := os.WriteFile(file, []byte(src), 0o600); err != nil {
			t.Fatal(err)
		}
		p := pgbenchtest.Run(t, dsn, "-n", "-M", "simple", "-c", strconv.Itoa(clients), "-t", "1", "-f", file)
		if p.Class != pgbenchtest.OK {
			t.Fatalf("pgbench did not run generated script %d (%s): the generator must write what pgbench runs:\n%s\n%s", b, p.Class, src, p.Stderr)
		}
		want := probes(p.Debug, clients)

		var dbg bytes.Buffer
		w, err := Open(Options{Files: []string{file}, Mode: "simple", Debug: &dbg})
		if err != nil {
			t.Fatalf("fathom refused generated script %d: %v\n%s", b, err, src)
		}
		_, conn := openConn(t, ctx, dsn, true)
		if err := w.Setup(ctx, conn); err != nil {
			t.Fatal(err)
		}
		for i := range clients {
			dbg.Reset()
			k := w.NewWorker(i, 1)
			if err := k.Bind(ctx, conn); err != nil {
				t.Fatal(err)
			}
			k.Next()
			if _, err := k.Do(ctx); err != nil {
				t.Errorf("script %d client %d: fathom failed where pgbench ran: %v\n%s", b, i, err, src)
				continue
			}
			got := probes(strings.Split(dbg.String(), "\n"), clients)[i]
			total++
			probesSeen += len(want[i])
			if slices.Equal(got, want[i]) {
				agree++
				continue
			}
			t.Errorf("script %d client %d:\n  pgbench: %v\n  fathom:  %v\nscript:\n%s", b, i, want[i], got, src)
		}
	}
	t.Logf("generated sequences (seed %d): %d scripts × %d clients, %d client paths agree with pgbench of %d (%d probes)", seed, scripts, clients, agree, total, probesSeen)
}
