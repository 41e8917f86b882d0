package redis

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/target"
)

func TestParseDSN(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want dsn
		bad  string
	}{
		{in: "redis://127.0.0.1:6379/2", want: dsn{network: "tcp", addr: "127.0.0.1:6379", db: 2}},
		{in: "redis://localhost", want: dsn{network: "tcp", addr: "localhost:6379"}},
		{in: "redis://:s3cret@h:7000/1", want: dsn{network: "tcp", addr: "h:7000", password: "s3cret", db: 1}},
		{in: "redis://bob:pw@h/0", want: dsn{network: "tcp", addr: "h:6379", user: "bob", password: "pw"}},
		{in: "rediss://h:6380?insecure=true", want: dsn{network: "tcp", addr: "h:6380", tls: true, insecure: true}},
		{in: "unix:///run/redis.sock?db=3", want: dsn{network: "unix", addr: "/run/redis.sock", db: 3}},
		{in: "redis+unix:///tmp/r.sock", want: dsn{network: "unix", addr: "/tmp/r.sock"}},
		{in: "redis://h:99999/0", bad: "not a port"},
		{in: "redis://h/x", bad: "not a number"},
		{in: "redis://:pw@h/0?bogus=1", bad: "unknown parameter"},
		{in: "unix://", bad: "socket path"},
	} {
		got, err := parseDSN(tc.in)
		if tc.bad != "" {
			if err == nil || !strings.Contains(err.Error(), tc.bad) {
				t.Errorf("%s: error %v, want one containing %q", tc.in, err, tc.bad)
			}
			if err != nil && strings.Contains(err.Error(), "pw") {
				t.Errorf("%s: error shows the password: %v", tc.in, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s: got %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestRedactedAndPasswordFromConfig(t *testing.T) {
	tg, err := Open("redis://:topsecret@127.0.0.1:6379/2", target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tg.Redacted(), "topsecret") {
		t.Fatalf("Redacted shows the password: %s", tg.Redacted())
	}
	tg, err = Open("redis://127.0.0.1:6379/2", target.Config{Getenv: env("fromenv")})
	if err != nil || tg.password() != "fromenv" {
		t.Fatalf("REDISCLI_AUTH not used: %v %q", err, tg.password())
	}
	tg, _ = Open("redis://:indsn@127.0.0.1/2", target.Config{Getenv: env("fromenv")})
	if tg.password() != "indsn" {
		t.Fatalf("the DSN's password must win over REDISCLI_AUTH")
	}
}

func open(t testing.TB) *redisTarget {
	t.Helper()
	tg, err := Open(dbtest.RedisURL(t), target.Config{AppName: "fathom-test"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tg.Close() })
	return tg
}

func connect(t testing.TB, tg *redisTarget) *Conn {
	t.Helper()
	c, err := tg.connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestConnQueryStmtTx(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	c := connect(t, tg)
	if c.ID() <= 0 {
		t.Errorf("ID = %d, want the CLIENT ID", c.ID())
	}
	if want := map[bool]string{false: "tcp", true: "tcp+tls"}[tg.d.tls]; tg.d.network == "tcp" && tg.Transport() != want {
		t.Errorf("transport %q, want %q", tg.Transport(), want)
	}
	if err := c.Exec(ctx, "DEL fathom:test:a fathom:test:h fathom:test:n"); err != nil {
		t.Fatal(err)
	}
	set, err := c.Prepare(ctx, "SET fathom:test:? ?")
	if err != nil {
		t.Fatal(err)
	}
	var res target.Result
	if err := set.Run(ctx, []target.Value{target.Text([]byte("a")), target.Text([]byte("hello world"))}, &res); err != nil {
		t.Fatal(err)
	}
	get, _ := c.Prepare(ctx, "GET fathom:test:?")
	res.Keep = true
	if err := get.Run(ctx, []target.Value{target.Text([]byte("a"))}, &res); err != nil {
		t.Fatal(err)
	}
	if res.Rows != 1 || string(res.First[0].Text) != "hello world" {
		t.Fatalf("GET: rows %d first %q", res.Rows, res.First[0].Text)
	}
	if err := get.Run(ctx, []target.Value{target.Text([]byte("missing"))}, &res); err != nil || res.Rows != 0 {
		t.Fatalf("GET of a missing key: %v, rows %d", err, res.Rows)
	}
	rows, err := c.Query(ctx, "HSET fathom:test:h f1 ? f2 ?", target.Int64(7), target.Float(1.5))
	if err != nil || len(rows) != 1 || rows[0][0] != "2" {
		t.Fatalf("HSET: %v %v", rows, err)
	}
	rows, err = c.Query(ctx, "HGETALL fathom:test:h")
	if err != nil || len(rows) != 2 || rows[0][0] != "f1" || rows[0][1] != "7" || rows[1][1] != "1.5" {
		t.Fatalf("HGETALL: %v %v", rows, err)
	}
	// MULTI/EXEC
	if err := c.Begin(ctx); err != nil {
		t.Fatal(err)
	}
	incr, _ := c.Prepare(ctx, "INCRBY fathom:test:n ?")
	for i := 0; i < 3; i++ {
		if err := incr.Run(ctx, []target.Value{target.Int64(2)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ = c.Query(ctx, "GET fathom:test:n")
	if len(rows) != 1 || rows[0][0] != "6" {
		t.Fatalf("after EXEC n = %v, want 6", rows)
	}
	// Rollback discards.
	_ = c.Begin(ctx)
	_ = incr.Run(ctx, []target.Value{target.Int64(100)}, nil)
	if err := c.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	rows, _ = c.Query(ctx, "GET fathom:test:n")
	if rows[0][0] != "6" {
		t.Fatalf("after DISCARD n = %v, want 6", rows)
	}
	// WATCH conflict: EXEC returns nil, a retryable serialization failure.
	other := connect(t, tg)
	_ = c.Exec(ctx, "WATCH fathom:test:n")
	_ = c.Begin(ctx)
	_ = incr.Run(ctx, []target.Value{target.Int64(1)}, nil)
	if err := other.Exec(ctx, "INCR fathom:test:n"); err != nil {
		t.Fatal(err)
	}
	err = c.Commit(ctx)
	if target.ClassOf(err) != target.ClassSerialization || !target.ClassOf(err).Retryable() {
		t.Fatalf("EXEC after a watched key changed: %v (class %v), want serialization", err, target.ClassOf(err))
	}
	_ = c.Exec(ctx, "DEL fathom:test:a fathom:test:h fathom:test:n")
}

func TestErrorClasses(t *testing.T) {
	tg := open(t)
	ctx := context.Background()
	c := connect(t, tg)
	_ = c.Exec(ctx, "SET fathom:test:str x")
	defer connect(t, tg).Exec(ctx, "DEL fathom:test:str")
	for _, tc := range []struct {
		cmd   string
		class target.Class
		code  string
	}{
		{"LPUSH fathom:test:str y", target.ClassConstraint, "WRONGTYPE"},
		{"NOSUCHCOMMAND a b", target.ClassUndefined, "ERR"},
		{"INCR fathom:test:str", target.ClassOther, "ERR"},
	} {
		err := c.Exec(ctx, tc.cmd)
		var e *target.Error
		if !errors.As(err, &e) || e.Class != tc.class || e.Code != tc.code {
			t.Errorf("%s: %v, want class %v code %s", tc.cmd, err, tc.class, tc.code)
		}
		if !c.Alive() {
			t.Fatalf("%s: the connection must stay usable after an error reply", tc.cmd)
		}
	}
	// A connection killed by the server is ClassConnection and not alive.
	killer := connect(t, tg)
	if _, err := killer.Query(ctx, "CLIENT KILL ID ?", target.Int64(c.ID())); err != nil {
		t.Fatal(err)
	}
	err := c.Exec(ctx, "PING")
	if target.ClassOf(err) != target.ClassConnection || c.Alive() {
		t.Fatalf("after CLIENT KILL: %v (class %v), alive %v; want connection, dead", err, target.ClassOf(err), c.Alive())
	}
}

func TestCancelInterruptsBlockedCall(t *testing.T) {
	tg := open(t)
	c := connect(t, tg)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() { errc <- c.Exec(ctx, "BLPOP fathom:test:never 0") }()
	// Cancel once the server reports this client blocked (blocked_clients counts every
	// client of the server, which other packages' tests and checkouts share).
	probe := connect(t, tg)
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		rows, err := probe.Query(context.Background(), "CLIENT LIST ID ?", target.Int64(c.ID()))
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 1 && len(rows[0]) == 1 && strings.Contains(rows[0][0], " cmd=blpop ") && regexp.MustCompile(` flags=[A-Za-z]*b`).MatchString(rows[0][0]) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the BLPOP did not block within 30s: %v", rows)
		}
	}
	cancel()
	err := <-errc
	if target.ClassOf(err) != target.ClassCanceled || c.Alive() {
		t.Fatalf("canceled BLPOP: %v (class %v), alive %v", err, target.ClassOf(err), c.Alive())
	}
}

func TestInfoHidesSecrets(t *testing.T) {
	tg := open(t)
	info, err := tg.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Version == "" || info.Settings["appendonly"] == "" {
		t.Fatalf("Info: %+v", info)
	}
	if _, ok := info.Settings["requirepass"]; ok {
		t.Fatal("Info reports requirepass")
	}
}

// TestAuthUnixSocket runs a throwaway redis-server on a unix socket with a password:
// the password from Config.Password works, a wrong one is ClassAuth without the
// password in the message.
func TestAuthUnixSocket(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if dbtest.Required() {
			t.Fatal("redis-server not found but FATHOM_TEST_REQUIRE=1")
		}
		t.Skip("redis-server not installed")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "r.sock")
	cmd := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--requirepass", "pa55word-x", "--save", "", "--appendonly", "no", "--dir", dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	ctx := context.Background()
	tg, _ := Open("unix://"+sock+"?db=1", target.Config{Getenv: env("pa55word-x")})
	defer tg.Close()
	var c *Conn
	deadline := time.Now().Add(30 * time.Second)
	for {
		c, err = tg.connect(ctx)
		if err == nil || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Exec(ctx, "SET k v"); err != nil {
		t.Fatal(err)
	}
	if tg.Transport() != "unix" {
		t.Errorf("transport %q on the socket, want unix", tg.Transport())
	}
	bad, _ := Open("unix://"+sock, target.Config{Getenv: env("wrong-pa55")})
	defer bad.Close()
	_, err = bad.connect(ctx)
	if target.ClassOf(err) != target.ClassAuth || strings.Contains(err.Error(), "wrong-pa55") {
		t.Fatalf("wrong password: %v (class %v)", err, target.ClassOf(err))
	}
}

// BenchmarkGetSet measures one GET or SET per round trip, and 16 pipelined.
func BenchmarkGetSet(b *testing.B) {
	tg := open(b)
	c := connect(b, tg)
	ctx := context.Background()
	val := []byte(strings.Repeat("v", 100))
	for _, depth := range []int{1, 16} {
		for _, op := range []string{"SET", "GET"} {
			b.Run(op+"/P"+string(rune('0'+depth/10))+string(rune('0'+depth%10)), func(b *testing.B) {
				batch := c.NewBatch()
				b.ReportAllocs()
				for i := 0; i < b.N; i += depth {
					for j := 0; j < depth; j++ {
						batch.Cmd(op).Concat("fathom:bench:", int64((i+j)%1000))
						if op == "SET" {
							batch.Bytes(val)
						}
						batch.End()
					}
					if err := c.Send(ctx, batch); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// env is a Getenv with REDISCLI_AUTH set.
func env(pw string) func(string) string {
	return func(k string) string {
		if k == "REDISCLI_AUTH" {
			return pw
		}
		return ""
	}
}
