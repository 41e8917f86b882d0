package redis

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	rd "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// restart is one measured restart of a Redis instance (fathom instance restart --measure).
type restart struct {
	Seconds    float64 `json:"seconds"`
	Source     string  `json:"source"` // AOF or RDB
	FileBytes  int64   `json:"file_bytes"`
	FileText   string  `json:"-"`
	Keys       string  `json:"keys"`
	Memory     int64   `json:"used_memory"`
	MemoryText string  `json:"-"`
}

// measureRestart reads what the server will load (the AOF when appendonly is on,
// else the RDB file) and its size, restarts it, and reads the keys it loaded.
func measureRestart(ctx context.Context, inst *instance.Instance) (restart, error) {
	var m restart
	tg, err := rd.Open(inst.DSN(), target.Config{AppName: "fathom"})
	if err != nil {
		return m, err
	}
	defer tg.Close()
	c, err := tg.Connect(ctx)
	if err != nil {
		return m, err
	}
	info, err := readRedisInfo(ctx, c, "everything")
	c.Close()
	tg.Close()
	if err != nil {
		return m, err
	}
	m.Source = "RDB"
	file := filepath.Join(inst.DataDir(), "dump.rdb")
	if info["aof_enabled"] == "1" {
		m.Source = "AOF"
		file = filepath.Join(inst.DataDir(), "appendonlydir")
	}
	d, err := inst.MeasureRestart(ctx)
	if err != nil {
		return m, err
	}
	m.Seconds = d.Seconds()
	m.FileBytes = pathSize(file)
	m.FileText = fmt.Sprintf("%.1f MB", float64(m.FileBytes)/1e6)
	tg2, err := rd.Open(inst.DSN(), target.Config{AppName: "fathom"})
	if err != nil {
		return m, err
	}
	defer tg2.Close()
	if c, err := tg2.Connect(ctx); err == nil {
		if after, err := readRedisInfo(ctx, c, "everything"); err == nil {
			m.Keys = keysOf(after)
			fmt.Sscan(after["used_memory"], &m.Memory)
			m.MemoryText = after["used_memory_human"]
		}
		c.Close()
	}
	return m, nil
}

// keysOf sums the keys= of INFO keyspace's db lines.
func keysOf(info map[string]string) string {
	var total int64
	for k, v := range info {
		if len(k) > 2 && k[:2] == "db" {
			var n int64
			if _, err := fmt.Sscanf(v, "keys=%d", &n); err == nil {
				total += n
			}
		}
	}
	return fmt.Sprint(total)
}

// pathSize is the size of a file, or of the files in a directory.
func pathSize(p string) int64 {
	st, err := os.Stat(p)
	if err != nil {
		return 0
	}
	if !st.IsDir() {
		return st.Size()
	}
	var n int64
	ents, _ := os.ReadDir(p)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// measureRestarts restarts a running instance once from each format in turn (rdb: the
// RDB snapshot; aof: the append-only file with its RDB preamble; aof-plain: the
// append-only file as commands only) and times each start until the server answers.
// Before each restart it writes that file from the data set in memory (SAVE, or
// BGREWRITEAOF and waiting for it) and starts the server with appendonly and
// aof-use-rdb-preamble set for it; a restart that loads a different number of keys
// than the server held is an error. Afterwards the instance's configuration file
// and the live appendonly and aof-use-rdb-preamble are what they were, with no
// background save or rewrite running.
func measureRestarts(ctx context.Context, inst *instance.Instance, formats []string) ([]restart, error) {
	base := slices.Clone(inst.Settings)
	var before map[string]string
	err := withConn(ctx, inst, func(c target.Conn) error {
		before = map[string]string{}
		for _, n := range []string{"appendonly", "aof-use-rdb-preamble", "dbfilename", "appenddirname"} {
			v, err := configGet(ctx, c, n)
			if err != nil {
				return err
			}
			before[n] = v
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if before["dbfilename"] == "" {
		before["dbfilename"] = "dump.rdb"
	}
	if before["appenddirname"] == "" {
		before["appenddirname"] = "appendonlydir" // Redis 7; 6 keeps appendonly.aof in dir
	}
	var out []restart
	for _, f := range formats {
		m, err := measureFrom(ctx, inst, base, before, f)
		if err != nil {
			// Leave the instance with the cell's configuration file, running, for
			// whatever runs next (best effort: the error is what is reported).
			bg, cancel := context.WithTimeout(context.WithoutCancel(ctx), inst.StartTimeout())
			defer cancel()
			if inst.Configure(base) == nil && !inst.Running() {
				_ = inst.Start(bg)
			} else if inst.Running() {
				_ = restoreLive(bg, inst, before)
			}
			return out, fmt.Errorf("restart from %s: %v", f, err)
		}
		out = append(out, m)
	}
	// Back to the cell's configuration: the file for the next start, the server's
	// live values (turning the AOF on starts a rewrite: wait for it).
	if err := inst.Configure(base); err != nil {
		return out, err
	}
	return out, restoreLive(ctx, inst, before)
}

// restoreLive sets appendonly and aof-use-rdb-preamble back to what they were and
// waits for the rewrite that turning the AOF on starts.
func restoreLive(ctx context.Context, inst *instance.Instance, before map[string]string) error {
	return withConn(ctx, inst, func(c target.Conn) error {
		for _, n := range []string{"aof-use-rdb-preamble", "appendonly"} {
			if err := c.Exec(ctx, "CONFIG SET "+n+" "+quote(before[n])); err != nil {
				return fmt.Errorf("CONFIG SET %s %s: %v", n, before[n], err)
			}
		}
		return waitQuiet(ctx, c)
	})
}

func measureFrom(ctx context.Context, inst *instance.Instance, base []instance.Setting, before map[string]string, format string) (restart, error) {
	m := restart{Source: format}
	aof, preamble := "no", before["aof-use-rdb-preamble"]
	file := filepath.Join(inst.DataDir(), before["dbfilename"])
	switch format {
	case "aof":
		aof, preamble = "yes", "yes"
	case "aof-plain":
		aof, preamble = "yes", "no"
	}
	if aof == "yes" {
		file = filepath.Join(inst.DataDir(), before["appenddirname"])
	}
	var keys int64
	err := withConn(ctx, inst, func(c target.Conn) error {
		if err := waitQuiet(ctx, c); err != nil {
			return err
		}
		for _, kv := range [][2]string{{"aof-use-rdb-preamble", preamble}, {"appendonly", aof}} {
			if err := c.Exec(ctx, "CONFIG SET "+kv[0]+" "+kv[1]); err != nil {
				return fmt.Errorf("CONFIG SET %s %s: %v", kv[0], kv[1], err)
			}
		}
		// Turning the AOF on starts a rewrite; one already on is rewritten so that
		// its base file is in the format asked for.
		if err := waitQuiet(ctx, c); err != nil {
			return err
		}
		if aof == "yes" {
			if err := c.Exec(ctx, "BGREWRITEAOF"); err != nil {
				return fmt.Errorf("BGREWRITEAOF: %v", err)
			}
			if err := waitQuiet(ctx, c); err != nil {
				return err
			}
			info, err := readRedisInfo(ctx, c, "persistence")
			if err != nil {
				return err
			}
			if s := info["aof_last_bgrewrite_status"]; s != "ok" {
				return fmt.Errorf("the AOF rewrite before it ended %s (see the instance's log)", s)
			}
		} else if err := c.Exec(ctx, "SAVE"); err != nil {
			return fmt.Errorf("SAVE: %v", err)
		}
		info, err := readRedisInfo(ctx, c, "keyspace")
		if err != nil {
			return err
		}
		fmt.Sscan(keysOf(info), &keys)
		return nil
	})
	if err != nil {
		return m, err
	}
	over := slices.DeleteFunc(slices.Clone(base), func(s instance.Setting) bool {
		return s.Name == "appendonly" || s.Name == "aof-use-rdb-preamble"
	})
	over = append(over, instance.Setting{Name: "appendonly", Value: aof}, instance.Setting{Name: "aof-use-rdb-preamble", Value: preamble})
	if err := inst.Configure(over); err != nil {
		return m, err
	}
	d, err := inst.MeasureRestart(ctx)
	if err != nil {
		return m, err
	}
	m.Seconds = d.Seconds()
	m.FileBytes = pathSize(file)
	m.FileText = fmt.Sprintf("%.1f MB", float64(m.FileBytes)/1e6)
	err = withConn(ctx, inst, func(c target.Conn) error {
		info, err := readRedisInfo(ctx, c, "everything")
		if err != nil {
			return err
		}
		m.Keys = keysOf(info)
		fmt.Sscan(info["used_memory"], &m.Memory)
		m.MemoryText = info["used_memory_human"]
		return nil
	})
	if err != nil {
		return m, err
	}
	if m.Keys != fmt.Sprint(keys) {
		return m, fmt.Errorf("the server held %d keys and loaded %s", keys, m.Keys)
	}
	return m, nil
}

// withConn runs f on a new connection to the instance.
func withConn(ctx context.Context, inst *instance.Instance, f func(target.Conn) error) error {
	tg, err := rd.Open(inst.DSN(), target.Config{AppName: "fathom", ConnectTimeout: 10 * time.Second})
	if err != nil {
		return err
	}
	defer tg.Close()
	c, err := tg.Connect(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	return f(c)
}

// waitQuiet waits until no background save or AOF rewrite runs or is scheduled.
func waitQuiet(ctx context.Context, c target.Conn) error {
	for {
		info, err := readRedisInfo(ctx, c, "persistence")
		if err != nil {
			return err
		}
		if info["rdb_bgsave_in_progress"] == "0" && info["aof_rewrite_in_progress"] == "0" && info["aof_rewrite_scheduled"] == "0" {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for a background save or AOF rewrite to end: %v", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
