package pgscript

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/workload/pgscript/pgbenchtest"
)

// exprGen writes random pgbench expressions from a seeded generator: constants at
// the edges of each type, every operator and every deterministic function (the
// random ones draw from another generator than pgbench's, and permute is not
// pgbench's permutation: both are listed differences).
type exprGen struct{ r *rand.Rand }

var genLeaves = []string{"0", "1", "2", "3", "-1", "7", "10", "100", "9223372036854775807", "(-9223372036854775807 - 1)",
	"4611686018427387904", "0.0", "0.5", "2.5", "-1.5", "1e300", "3.14159", "1e-300", "true", "false", "null", ":i", ":d", ":b", ":t"}

var genBinary = []string{"+", "-", "*", "/", "%", "&", "|", "#", "<<", ">>", "=", "<>", "!=", "<", "<=", ">", ">=", "AND", "OR"}

var genFuncs = []struct {
	name string
	args int
}{{"abs", 1}, {"int", 1}, {"double", 1}, {"greatest", -1}, {"least", -1}, {"mod", 2}, {"hash", 2}, {"hash_fnv1a", 2},
	{"hash_murmur2", 2}, {"sqrt", 1}, {"ln", 1}, {"exp", 1}, {"pow", 2}, {"power", 2}, {"pi", 0}}

func (g *exprGen) expr(depth int) string {
	if depth == 0 || g.r.IntN(5) == 0 {
		return genLeaves[g.r.IntN(len(genLeaves))]
	}
	paren := func(s string) string {
		if g.r.IntN(3) > 0 {
			return "(" + s + ")"
		}
		return s
	}
	switch k := g.r.IntN(12); {
	case k == 0:
		return []string{"- ", "~", "NOT ", "+"}[g.r.IntN(4)] + paren(g.expr(depth-1))
	case k <= 5:
		op := genBinary[g.r.IntN(len(genBinary))]
		if strings.ContainsAny(op, "=<>!") && op != "<<" && op != ">>" {
			// Comparisons do not chain in pgbench's grammar: keep each side whole.
			return "(" + g.expr(depth-1) + ") " + op + " (" + g.expr(depth-1) + ")"
		}
		return paren(g.expr(depth-1)) + " " + op + " " + paren(g.expr(depth-1))
	case k == 6:
		return "(" + g.expr(depth-1) + ")" + []string{" IS NULL", " ISNULL", " NOTNULL", " IS NOT NULL", " IS TRUE", " IS NOT FALSE"}[g.r.IntN(6)]
	case k == 7:
		s := "CASE"
		for range 1 + g.r.IntN(2) {
			s += " WHEN " + g.expr(depth-1) + " THEN " + g.expr(depth-1)
		}
		if g.r.IntN(2) == 0 {
			s += " ELSE " + g.expr(depth-1)
		}
		return s + " END"
	}
	f := genFuncs[g.r.IntN(len(genFuncs))]
	n := f.args
	if n < 0 {
		n = 1 + g.r.IntN(4)
	}
	args := make([]string, n)
	for i := range args {
		args[i] = g.expr(depth - 1)
	}
	return f.name + "(" + strings.Join(args, ", ") + ")"
}

var debugLine = regexp.MustCompile(`^debug\(script=0,command=(\d+)\): (.*)$`)

// TestGeneratedExpressionsAgainstPgbench evaluates a few hundred random expressions
// with pgbench and with fathom and compares them value by value (type and text as
// debug() prints them) or error by error. Each batch is one script in which client i
// evaluates expression i, so that an expression that fails aborts only its client.
func TestGeneratedExpressionsAgainstPgbench(t *testing.T) {
	pgbenchtest.Path(t)
	dsn := dbtest.PostgresDatabase(t, "pgbench_diff")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	seed := uint64(20240601)
	if s := os.Getenv("FATHOM_TEST_EXPR_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	g := &exprGen{r: rand.New(rand.NewPCG(seed, 7))}
	const batches, batch = 12, 25
	defines := []string{"-Di=12", "-Dd=-2.5", "-Db=of", "-Dt= 7"}
	var total, agree, errs int
	dir := t.TempDir()
	for b := range batches {
		exprs := make([]string, batch)
		var src strings.Builder
		for i := range exprs {
			exprs[i] = g.expr(1 + g.r.IntN(4))
			kw := "\\elif"
			if i == 0 {
				kw = "\\if"
			}
			fmt.Fprintf(&src, "%s :client_id = %d\n\\set r debug(%s)\n", kw, i, exprs[i])
		}
		src.WriteString("\\endif\n")
		file := filepath.Join(dir, fmt.Sprintf("e%d.sql", b))
		if err := os.WriteFile(file, []byte(src.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		p := pgbenchtest.Run(t, dsn, append([]string{"-c", strconv.Itoa(batch), "-t", "1", "-f", file}, defines...)...)
		if p.Class == pgbenchtest.Refused {
			if _, err := Open(Options{Files: []string{file}, Defines: stripD(defines), Mode: "simple"}); err != nil {
				t.Logf("script %d refused by both: %v", b, err)
				continue
			}
			t.Fatalf("pgbench refused generated script %d (the generator must write what pgbench reads):\n%s\n%s", b, src.String(), p.Stderr)
		}
		// pgbench: client i's \set is command 2i+1, which debug() numbers 2i+2.
		want := make([]string, batch)
		for _, l := range p.Debug {
			if m := debugLine.FindStringSubmatch(l); m != nil {
				n, _ := strconv.Atoi(m[1])
				want[(n-2)/2] = m[2]
			}
		}
		for _, c := range p.Aborted {
			want[c] = "error"
		}

		var dbg bytes.Buffer
		w, err := Open(Options{Files: []string{file}, Defines: stripD(defines), Mode: "simple", Debug: &dbg})
		if err != nil {
			t.Fatalf("fathom refused generated script %d: %v\n%s", b, err, src.String())
		}
		_, conn := openConn(t, ctx, dsn, true)
		if err := w.Setup(ctx, conn); err != nil {
			t.Fatal(err)
		}
		for i := range exprs {
			dbg.Reset()
			k := w.NewWorker(i, 1)
			if err := k.Bind(ctx, conn); err != nil {
				t.Fatal(err)
			}
			k.Next()
			got := ""
			if _, err := k.Do(ctx); err != nil {
				got = "error"
			} else if m := debugLine.FindStringSubmatch(strings.TrimSpace(dbg.String())); m != nil {
				got = m[2]
			}
			total++
			if got == "error" {
				errs++
			}
			if got == want[i] {
				agree++
				continue
			}
			t.Errorf("\\set r %s\n  pgbench: %s\n  fathom:  %s", exprs[i], want[i], got)
		}
	}
	t.Logf("generated expressions (seed %d): %d evaluated, %d agree with pgbench (%d of them errors in both)", seed, total, agree, errs)
}

func stripD(ds []string) []string {
	out := slices.Clone(ds)
	for i := range out {
		out[i] = strings.TrimPrefix(out[i], "-D")
	}
	return out
}
