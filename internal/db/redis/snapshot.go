package redis

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/collect"
)

// redisSecretConfig are settings whose values are secrets: CONFIG GET output never
// carries them into a snapshot.
var redisSecretConfig = []string{"requirepass", "masterauth", "masteruser", "tls-key-file-pass", "tls-client-key-file-pass"}

// redis adds a Redis server's sources: INFO (every section), CONFIG GET * without
// secrets, SLOWLOG, LATENCY DOCTOR, MEMORY STATS and the persistence files' sizes.
func snapshot(s *collect.Snap) {
	var info map[string]string
	s.Source("info", func() error {
		rows, err := s.Query("INFO everything")
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, r := range rows {
			for _, c := range r {
				b.WriteString(strings.ReplaceAll(c, "\r\n", "\n"))
			}
		}
		info = ParseRedisInfo(rows)
		s.Add("info.txt", "INFO everything: server, clients, memory, persistence, stats, replication, cpu, commandstats, latencystats, keyspace", b.Bytes())
		s.Fact("Server", "Version", "Redis %s (%s mode)", info["redis_version"], collect.OrUnknown(info["redis_mode"]))
		s.Fact("Server", "Up", "%s s, role %s, %s clients", info["uptime_in_seconds"], info["role"], info["connected_clients"])
		s.Fact("Memory", "Used", "%s (rss %s, fragmentation %s), maxmemory %s %s", info["used_memory_human"], info["used_memory_rss_human"],
			info["mem_fragmentation_ratio"], info["maxmemory_human"], info["maxmemory_policy"])
		return nil
	})
	var cfg map[string]string
	s.Source("config", func() error {
		rows, err := s.Query("CONFIG GET *")
		if err != nil {
			return err
		}
		cfg = map[string]string{}
		if len(rows) > 0 && len(rows[0]) == 2 { // RESP3 map
			for _, r := range rows {
				cfg[r[0]] = r[1]
			}
		} else { // RESP2: name, value, name, value …
			for i := 0; i+1 < len(rows); i += 2 {
				if len(rows[i]) > 0 && len(rows[i+1]) > 0 {
					cfg[rows[i][0]] = rows[i+1][0]
				}
			}
		}
		var out [][]string
		for _, k := range slices.Sorted(func(yield func(string) bool) {
			for k := range cfg {
				if !yield(k) {
					return
				}
			}
		}) {
			v := cfg[k]
			if slices.Contains(redisSecretConfig, k) {
				if v != "" {
					v = "(set, not shown)"
				}
			}
			out = append(out, []string{k, v})
		}
		s.Add("config.tsv", "CONFIG GET * (secrets not shown)", collect.Table([]string{"name", "value"}, out))
		s.Fact("Persistence", "AOF", "appendonly %s, appendfsync %s, no-appendfsync-on-rewrite %s", cfg["appendonly"], cfg["appendfsync"], cfg["no-appendfsync-on-rewrite"])
		s.Fact("Persistence", "RDB", "save %q", cfg["save"])
		return nil
	})
	s.Source("slowlog", func() error {
		rows, err := s.Query("SLOWLOG GET 128")
		if err != nil {
			return err
		}
		var out [][]string
		for _, r := range rows {
			// id, unix time, microseconds, command words …, client address, client name
			if len(r) < 3 {
				continue
			}
			row := []string{r[0], r[1], r[2]}
			if len(r) > 3 {
				row = append(row, strings.Join(r[3:], " "))
			}
			out = append(out, row)
		}
		s.Add("slowlog.tsv", "SLOWLOG GET 128: commands over slowlog-log-slower-than (id, unix time, microseconds, command and client)", collect.Table([]string{"id", "time", "usec", "command"}, out))
		return nil
	})
	s.Source("latency", func() error {
		rows, err := s.Query("LATENCY DOCTOR")
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, r := range rows {
			b.WriteString(strings.Join(r, " ") + "\n")
		}
		s.Add("latency_doctor.txt", "LATENCY DOCTOR (needs latency-monitor-threshold > 0 to have events)", b.Bytes())
		return nil
	})
	s.Source("memory", func() error {
		rows, err := s.Query("MEMORY STATS")
		if err != nil {
			return err
		}
		s.Add("memory_stats.tsv", "MEMORY STATS", collect.Table([]string{"name", "value"}, rows))
		return nil
	})
	s.Source("persistence files", func() error {
		if cfg == nil {
			return fmt.Errorf("no CONFIG GET: the files are unknown")
		}
		dir := cfg["dir"]
		var b bytes.Buffer
		fmt.Fprintf(&b, "dir: %s\n", collect.OrUnknown(dir))
		files := []string{filepath.Join(dir, cfg["dbfilename"])}
		if d := cfg["appenddirname"]; d != "" { // Redis 7: a directory of AOF files
			files = append(files, filepath.Join(dir, d))
		} else if f := cfg["appendfilename"]; f != "" {
			files = append(files, filepath.Join(dir, f))
		}
		if !s.Server().Local {
			fmt.Fprintf(&b, "the server is not on this host: sizes from INFO only (AOF %s bytes)\n", collect.OrUnknown(info["aof_current_size"]))
		}
		for _, f := range files {
			if !s.Server().Local {
				fmt.Fprintf(&b, "%s\n", f)
				continue
			}
			size, n, mod, err := treeSize(f)
			switch {
			case os.IsNotExist(err):
				fmt.Fprintf(&b, "%s: none\n", f)
			case err != nil:
				fmt.Fprintf(&b, "%s: %v\n", f, err)
			default:
				fmt.Fprintf(&b, "%s: %s in %d file(s), modified %s\n", f, collect.SizeText(size), n, mod.UTC().Format(time.RFC3339))
				s.Fact("Persistence", filepath.Base(f), "%s", collect.SizeText(size))
			}
		}
		s.Add("persistence_files.txt", "RDB and AOF files with their sizes", b.Bytes())
		return nil
	})
}

// treeSize sums the sizes of a file or of the files in a directory.
func treeSize(p string) (size int64, files int, mod time.Time, err error) {
	st, err := os.Stat(p)
	if err != nil {
		return 0, 0, mod, err
	}
	if !st.IsDir() {
		return st.Size(), 1, st.ModTime(), nil
	}
	ents, err := os.ReadDir(p)
	if err != nil {
		return 0, 0, mod, err
	}
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && !fi.IsDir() {
			size += fi.Size()
			files++
			if fi.ModTime().After(mod) {
				mod = fi.ModTime()
			}
		}
	}
	return size, files, mod, nil
}
