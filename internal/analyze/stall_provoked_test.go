package analyze_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/mysql/target"
	"github.com/fathom-lab/fathom/internal/db/postgres/target"
	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
)

// Acceptance tests of stall detection and naming: stalls are caused for real on a
// throwaway server while `fathom run` and `fathom watch` observe it, and what fathom
// found is compared with when and how each stall was caused.

// provocation is one stall caused on purpose: when (on the wall clock) and what
// fathom should call it.
type provocation struct {
	what       string
	from, to   time.Time
	want       string   // the expected cause key ("" when any cause but notWant is right)
	notWant    []string // causes that would be wrong
	optional   bool     // the load may not fall enough to be a stall (a write elsewhere)
	wantSet    string   // a setting the advice must name
	notWantSet string   // a setting the advice must not name
}

// shortDir is a short base directory every server account can reach (socket paths
// must stay short).
func shortDir(t *testing.T) string {
	t.Helper()
	d, err := os.MkdirTemp("", "fs-")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(d, 0o755)
	t.Cleanup(func() { os.RemoveAll(d) })
	return d
}

func needInstance(t *testing.T, k instance.Kind) {
	t.Helper()
	if testing.Short() {
		t.Skip("a throwaway server under load for a minute or two")
	}
	if _, err := instance.Version(k, ""); err != nil {
		if dbtest.Required() {
			t.Fatalf("%v (FATHOM_TEST_REQUIRE=1)", err)
		}
		t.Skip(err)
	}
}

func adminConn(t *testing.T, dsn string) target.Conn {
	t.Helper()
	tg, err := mysql.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// runClock finds when a run's clock started, on the wall clock: from the first stored
// interval seen, polled (so the error is at most a poll).
func runClock(t *testing.T, db string, deadline time.Time) (int64, time.Time) {
	t.Helper()
	ctx := context.Background()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(db); err != nil {
			continue
		}
		st, err := stores.Open(db)
		if err != nil {
			continue
		}
		id, err := st.LatestRunID(ctx)
		if err == nil {
			if run, err := st.Run(ctx, id); err == nil {
				if ivs, err := st.EncodedIntervals(ctx, run); err == nil && len(ivs) > 0 {
					last := ivs[len(ivs)-1]
					st.Close()
					return id, time.Now().Add(-last.End)
				}
			}
		}
		st.Close()
	}
	t.Fatalf("the run in %s did not start", db)
	return 0, time.Time{}
}

type observed struct {
	name   string
	db     string
	origin time.Time
	stalls []store.Stall
}

// load reads what an observer stored: its stalls, and its clock's origin when not
// known (a watch session's start).
func (o *observed) load(t *testing.T) {
	t.Helper()
	st, err := stores.Open(o.db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	id, err := st.LatestRunID(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stalls, _, analyzed, err := st.Stalls(ctx, id)
	if err != nil || !analyzed {
		t.Fatalf("%s: stalls not analysed: %v", o.name, err)
	}
	o.stalls = stalls
	if o.origin.IsZero() {
		run, err := st.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		o.origin = run.StartedAt
	}
}

func (o *observed) at(d time.Duration) string {
	return o.origin.Add(d).Format("15:04:05.0")
}

// check compares an observer's stalls with the provocations: each provocation has a
// stall overlapping it (within slack), named as wanted; a stall that overlaps none is
// a phantom unless it is put down to the saturated client host.
func (o *observed) check(t *testing.T, provs []provocation, slack time.Duration) {
	t.Helper()
	used := map[int]bool{}
	for _, p := range provs {
		a, b := p.from.Sub(o.origin), p.to.Sub(o.origin)
		var hit []store.Stall
		for i, s := range o.stalls {
			if s.Start <= b+slack && s.End >= a-slack {
				hit = append(hit, s)
				used[i] = true
			}
		}
		var said []string
		for _, s := range hit {
			said = append(said, fmt.Sprintf("#%d %.1f–%.1fs %q [%s]", s.Number, s.Start.Seconds(), s.End.Seconds(), s.Title, s.Cause))
		}
		t.Logf("%s: %s caused %.1f–%.1fs (%s–%s): %s", o.name, p.what, a.Seconds(), b.Seconds(), p.from.Format("15:04:05.0"), p.to.Format("15:04:05.0"), strings.Join(said, "; "))
		if len(hit) == 0 {
			if !p.optional {
				t.Errorf("%s: no stall found for %s (%.1f–%.1fs)", o.name, p.what, a.Seconds(), b.Seconds())
			}
			continue
		}
		// The stall that overlaps the provocation most is the one it caused (a dip just
		// after it, within the slack, is its after-effect: a server catching up).
		overlap := func(s store.Stall) time.Duration { return min(s.End, b) - max(s.Start, a) }
		main := hit[0]
		for _, s := range hit[1:] {
			if o, m := overlap(s), overlap(main); o > m || (o == m && s.End-s.Start > main.End-main.Start) {
				main = s
			}
		}
		// On a saturated host throughput may not recover between two provocations, and
		// one stall then covers both: it must be named for one of them.
		other := o.otherCause(provs, p, main)
		if other != "" {
			t.Logf("%s: %s shares stall #%d with another provocation; named for that one [%s]", o.name, p.what, main.Number, other)
		}
		if p.want != "" && main.Cause != p.want && other == "" {
			t.Errorf("%s: %s was named %q [%s], want %s\n%s", o.name, p.what, main.Title, main.Cause, p.want, describe(main))
		}
		for _, bad := range p.notWant {
			for _, s := range hit {
				// A stall within the slack but outside the provocation (another one's, just
				// before or after) is not this provocation's naming.
				if s.Cause == bad && overlap(s) > 0 && o.otherCause(provs, p, s) == "" {
					t.Errorf("%s: %s was named %q [%s]\n%s", o.name, p.what, s.Title, s.Cause, describe(s))
				}
			}
		}
		if other != "" {
			continue
		}
		var set []string
		for _, x := range main.Settings {
			set = append(set, x.Name)
		}
		if p.wantSet != "" && !contains(set, p.wantSet) {
			t.Errorf("%s: %s: advice names %v, not %s", o.name, p.what, set, p.wantSet)
		}
		if p.notWantSet != "" && contains(set, p.notWantSet) {
			t.Errorf("%s: %s: advice names %s, which does not govern it", o.name, p.what, p.notWantSet)
		}
	}
	for i, s := range o.stalls {
		if used[i] {
			continue
		}
		// A busy machine makes real dips nobody caused on purpose; they must not be
		// named for what was provoked elsewhere (lock waits, a server that stopped
		// answering: neither happened then).
		t.Logf("%s: unprovoked stall #%d %.1f–%.1fs (%s): %q [%s]\n%s", o.name, s.Number, s.Start.Seconds(), s.End.Seconds(), o.at(s.Start), s.Title, s.Cause, describe(s))
		if s.Cause == "lock_waits" || s.Cause == "server_unresponsive" {
			t.Errorf("%s: stall #%d at %.1f–%.1fs, when nothing was provoked, named %q [%s]\n%s", o.name, s.Number, s.Start.Seconds(), s.End.Seconds(), s.Title, s.Cause, describe(s))
		}
	}
}

// otherCause returns s's cause when s also overlaps another provocation than p that
// wants that cause (one stall covering two provocations), else "".
func (o *observed) otherCause(provs []provocation, p provocation, s store.Stall) string {
	for _, q := range provs {
		if q.what == p.what || q.want == "" || q.want != s.Cause {
			continue
		}
		a, b := q.from.Sub(o.origin), q.to.Sub(o.origin)
		if min(s.End, b)-max(s.Start, a) > 0 {
			return s.Cause
		}
	}
	return ""
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func describe(s store.Stall) string {
	var b strings.Builder
	fmt.Fprintf(&b, "    %s\n", s.Explanation)
	for _, e := range s.Evidence {
		fmt.Fprintf(&b, "    %s %v → %v (peak %v) z=%+.1f\n", e.Metric, e.Baseline, e.During, e.Peak, e.Score)
	}
	return b.String()
}

// TestProvokedStallsMariaDB causes, in one benchmark run watched by `fathom watch` at
// the same time: a LOCK TABLES held by another session, DDL waiting for a metadata lock
// behind an open transaction (and everything queueing behind it), a server that stops
// answering for 3 s (SIGSTOP/SIGCONT), an outage longer than the stall window (12 s
// with --stall-window 9), a long write of another table, and a table lock that lasts
// until the end of the run. Each must be found when it was caused and named for what
// it was, the same way by `run` and by `watch`.
func TestProvokedStallsMariaDB(t *testing.T) {
	needInstance(t, instance.MariaDB)
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.MariaDB, Name: "stalls", Dir: shortDir(t),
		Settings: []instance.Setting{{Name: "innodb_buffer_pool_size", Value: "64M"}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := inst.DSN()
	if code, out, errs := fathom(t, "prepare", "--target", dsn, "--workload", "oltp_update_index", "--tables", "2", "--table-size", "30000"); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, out, errs)
	}
	dir := t.TempDir()
	if keep := os.Getenv("FATHOM_TEST_KEEP_STORES"); keep != "" {
		dir = keep // to read the stores after a failure
	}
	runDB, watchDB := filepath.Join(dir, "run.db"), filepath.Join(dir, "watch.db")
	const runFor = 95 * time.Second
	var wg sync.WaitGroup
	var runOut, watchOut string
	var runCode, watchCode int
	wg.Add(1)
	go func() {
		defer wg.Done()
		var errs string
		runCode, runOut, errs = fathom(t, "run", "--target", dsn, "--workload", "oltp_update_index", "--tables", "1", "-c", "4",
			"-T", runFor.String(), "-P", "1", "--stall-window", "9", "--store", runDB)
		runOut += errs
	}()
	_, origin := runClock(t, runDB, time.Now().Add(60*time.Second))
	// The watch session starts once the load runs and ends with the run's table lock
	// still held, so that its throughput (the server's statements) is the run's.
	wg.Add(1)
	go func() {
		defer wg.Done()
		var errs string
		watchCode, watchOut, errs = fathom(t, "watch", "--target", dsn, "--store", watchDB, "-T", (runFor - 4*time.Second).String(), "-P", "1", "--stall-window", "9", "-q")
		watchOut += errs
	}()
	at := func(d time.Duration) { time.Sleep(time.Until(origin.Add(d))) }
	admin := adminConn(t, dsn)
	holder := adminConn(t, dsn)
	var provs []provocation
	mark := func(p provocation, from time.Time) {
		p.from, p.to = from, time.Now()
		provs = append(provs, p)
	}

	// 1. LOCK TABLES … WRITE held by another session for 4 s.
	at(12 * time.Second)
	from := time.Now()
	if err := holder.Exec(ctx, "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(4 * time.Second)
	if err := holder.Exec(ctx, "UNLOCK TABLES"); err != nil {
		t.Fatal(err)
	}
	mark(provocation{what: "LOCK TABLES sbtest1 WRITE for 4 s", want: "lock_waits", notWant: []string{"os_writeback", "server_unresponsive"},
		wantSet: "lock_wait_timeout", notWantSet: "innodb_lock_wait_timeout"}, from)

	// 2. DDL: an ALTER waits for the metadata lock of an open transaction, and every
	// statement on the table queues behind the ALTER, for 4 s.
	at(26 * time.Second)
	from = time.Now()
	alterBehindTransaction(ctx, t, holder, admin, "ALTER TABLE sbtest1 ADD COLUMN stall_probe INT NULL", 4*time.Second)
	mark(provocation{what: "ALTER TABLE waiting 4 s for a metadata lock", want: "lock_waits", notWant: []string{"os_writeback", "server_unresponsive"},
		wantSet: "lock_wait_timeout", notWantSet: "innodb_lock_wait_timeout"}, from)

	// 3. The server stops answering for 3 s.
	pid := inst.PID()
	if pid <= 0 {
		t.Fatal("no server pid")
	}
	at(40 * time.Second)
	from = time.Now()
	syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(3 * time.Second)
	syscall.Kill(pid, syscall.SIGCONT)
	mark(provocation{what: "SIGSTOP of the server for 3 s", want: "server_unresponsive", notWant: []string{"lock_waits", "os_writeback"}}, from)

	// 4. An outage longer than the window: 12 s with --stall-window 9.
	at(52 * time.Second)
	from = time.Now()
	syscall.Kill(pid, syscall.SIGSTOP)
	time.Sleep(12 * time.Second)
	syscall.Kill(pid, syscall.SIGCONT)
	mark(provocation{what: "SIGSTOP of the server for 12 s (window 9)", want: "server_unresponsive", notWant: []string{"lock_waits", "os_writeback"}}, from)

	// 5. A long write of another table, in one transaction for 6 s: the workload's table
	// is not locked; the write competes for CPU, the log and the disk.
	at(72 * time.Second)
	from = time.Now()
	if err := admin.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	for time.Since(from) < 6*time.Second {
		if err := admin.Exec(ctx, "UPDATE sbtest2 SET k = k + 1, c = concat(substr(c, 2), substr(c, 1, 1))"); err != nil {
			t.Fatal(err)
		}
	}
	if err := admin.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	mark(provocation{what: "6 s of UPDATEs of every row of sbtest2 (another table) in one transaction", optional: true, notWant: []string{"lock_waits", "server_unresponsive"}}, from)

	// 6. A table lock until the end of the run.
	at(runFor - 10*time.Second)
	from = time.Now()
	if err := holder.Exec(ctx, "LOCK TABLES sbtest1 WRITE"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(origin.Add(runFor + 2*time.Second)))
	mark(provocation{what: "LOCK TABLES sbtest1 WRITE until the end of the run", want: "lock_waits", wantSet: "lock_wait_timeout"}, from)
	holder.Exec(ctx, "UNLOCK TABLES")
	wg.Wait()
	t.Logf("run:\n%s", runOut)
	t.Logf("watch:\n%s", watchOut)
	if runCode != 0 || watchCode != 0 {
		t.Fatalf("run exit %d, watch exit %d", runCode, watchCode)
	}
	run := &observed{name: "run", db: runDB, origin: origin}
	run.load(t)
	run.check(t, provs, 1500*time.Millisecond)
	// The watch session ends a second or so after the run: its last stall is the
	// table lock and then the run's clients gone.
	watch := &observed{name: "watch", db: watchDB}
	watch.load(t)
	watch.check(t, provs, 1500*time.Millisecond)
}

// alterBehindTransaction provokes a DDL stall: holder opens a transaction that reads
// sbtest1, admin runs ddl (which waits for holder's lock, and every statement on the
// table queues behind it) for hold, then holder commits and the DDL completes.
func alterBehindTransaction(ctx context.Context, t *testing.T, holder, admin target.Conn, ddl string, hold time.Duration) {
	t.Helper()
	if err := holder.Exec(ctx, "BEGIN"); err != nil {
		t.Fatal(err)
	}
	if _, err := holder.Query(ctx, "SELECT count(*) FROM sbtest1 WHERE id < 10"); err != nil {
		t.Fatal(err)
	}
	alter := make(chan error, 1)
	go func() { alter <- admin.Exec(ctx, ddl) }()
	time.Sleep(hold)
	if err := holder.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	if err := <-alter; err != nil {
		t.Fatal(err)
	}
}

func pgAdminConn(t *testing.T, dsn string) target.Conn {
	t.Helper()
	tg, err := postgres.Open(dsn, target.Config{ConnectTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c, err := tg.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serverProcesses are a PostgreSQL server's processes: the postmaster and its children.
func serverProcesses(t *testing.T, pid int) []int {
	t.Helper()
	out := []int{pid}
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join("/proc", d.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after the last ')'.
		s := string(b)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		var child, parent int
		if len(fields) > 1 {
			fmt.Sscan(d.Name(), &child)
			fmt.Sscan(fields[1], &parent)
		}
		if parent == pid && child > 0 {
			out = append(out, child)
		}
	}
	return out
}

// TestProvokedStallsPostgres causes a LOCK TABLE held by another session, DDL
// queueing behind an open transaction, and a server that stops answering for 3 s (every
// server process stopped) on a throwaway PostgreSQL: the stalls are found and named
// table lock waits with lock_timeout and server stopped answering, and nothing else is
// named either.
func TestProvokedStallsPostgres(t *testing.T) {
	needInstance(t, instance.Postgres)
	ctx := context.Background()
	// In the PostgreSQL version matrix (scripts/test-servers.sh --pg-matrix) the
	// instance is of the version under test.
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.Postgres, Name: "stalls", Dir: shortDir(t), Bin: dbtest.PGBin(true)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := inst.DSN()
	if code, out, errs := fathom(t, "prepare", "--target", dsn, "--workload", "oltp_update_index", "--tables", "1", "--table-size", "10000"); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, out, errs)
	}
	runDB := filepath.Join(t.TempDir(), "run.db")
	const runFor = 48 * time.Second
	done := make(chan struct{})
	var runOut string
	var runCode int
	go func() {
		defer close(done)
		var errs string
		runCode, runOut, errs = fathom(t, "run", "--target", dsn, "--workload", "oltp_update_index", "--tables", "1", "-c", "4",
			"-T", runFor.String(), "-P", "1", "--stall-window", "9", "--store", runDB)
		runOut += errs
	}()
	_, origin := runClock(t, runDB, time.Now().Add(60*time.Second))
	at := func(d time.Duration) { time.Sleep(time.Until(origin.Add(d))) }
	admin, holder := pgAdminConn(t, dsn), pgAdminConn(t, dsn)
	var provs []provocation
	at(12 * time.Second)
	from := time.Now()
	for _, q := range []string{"BEGIN", "LOCK TABLE sbtest1 IN ACCESS EXCLUSIVE MODE"} {
		if err := holder.Exec(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(4 * time.Second)
	if err := holder.Exec(ctx, "COMMIT"); err != nil {
		t.Fatal(err)
	}
	provs = append(provs, provocation{what: "LOCK TABLE sbtest1 for 4 s", from: from, to: time.Now(), want: "lock_waits", wantSet: "lock_timeout",
		notWant: []string{"server_unresponsive", "os_writeback", "checkpoint"}})
	at(26 * time.Second)
	from = time.Now()
	alterBehindTransaction(ctx, t, holder, admin, "ALTER TABLE sbtest1 ADD COLUMN stall_probe int", 4*time.Second)
	provs = append(provs, provocation{what: "ALTER TABLE waiting 4 s behind a transaction", from: from, to: time.Now(), want: "lock_waits", wantSet: "lock_timeout",
		notWant: []string{"server_unresponsive", "os_writeback", "checkpoint"}})
	at(38 * time.Second)
	procs := serverProcesses(t, inst.PID())
	from = time.Now()
	for _, p := range procs {
		syscall.Kill(p, syscall.SIGSTOP)
	}
	time.Sleep(3 * time.Second)
	for _, p := range procs {
		syscall.Kill(p, syscall.SIGCONT)
	}
	provs = append(provs, provocation{what: fmt.Sprintf("SIGSTOP of the server's %d processes for 3 s", len(procs)), from: from, to: time.Now(),
		want: "server_unresponsive", notWant: []string{"lock_waits", "os_writeback"}})
	<-done
	t.Logf("run:\n%s", runOut)
	if runCode != 0 {
		t.Fatalf("run exit %d", runCode)
	}
	run := &observed{name: "run", db: runDB, origin: origin}
	run.load(t)
	run.check(t, provs, 1500*time.Millisecond)
}

// TestQuietRunHasNoStalls runs a steady workload on a throwaway MariaDB with nothing
// provoked: no stall may be found, unless it is put down to a saturated client host,
// which the run then says.
func TestQuietRunHasNoStalls(t *testing.T) {
	needInstance(t, instance.MariaDB)
	ctx := context.Background()
	inst, err := instance.Create(ctx, instance.Options{Kind: instance.MariaDB, Name: "quiet", Dir: shortDir(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inst.Remove(context.Background()) })
	if err := inst.Start(ctx); err != nil {
		t.Fatal(err)
	}
	dsn := inst.DSN()
	if code, out, errs := fathom(t, "prepare", "--target", dsn, "--workload", "oltp_point_select", "--tables", "1", "--table-size", "10000"); code != 0 {
		t.Fatalf("prepare: exit %d\n%s\n%s", code, out, errs)
	}
	db := filepath.Join(t.TempDir(), "run.db")
	code, out, errs := fathom(t, "run", "--target", dsn, "--workload", "oltp_point_select", "--tables", "1", "-c", "2", "-T", "25s", "-P", "1", "--store", db)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errs)
	}
	o := &observed{name: "quiet run", db: db}
	o.load(t)
	for _, s := range o.stalls {
		t.Logf("stall #%d %.1f–%.1fs %q [%s]\n%s", s.Number, s.Start.Seconds(), s.End.Seconds(), s.Title, s.Cause, describe(s))
		if s.Cause != "client_host" {
			t.Errorf("quiet run: stall #%d named %q [%s]", s.Number, s.Title, s.Cause)
		}
		if !strings.Contains(out, "! client host saturated") {
			t.Errorf("a stall put down to the client host, but the run did not say the host was saturated:\n%s", out)
		}
	}
	if len(o.stalls) == 0 && !strings.Contains(out, "stalls: none") {
		t.Errorf("no stalls, but the run did not say so:\n%s", out)
	}
}
