package redis

import (
	"bytes"
	"fmt"
	"maps"
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
	r := &redisSnap{s: s}
	s.Source("info", r.info)
	s.Source("config", r.config)
	s.Source("slowlog", r.slowlog)
	s.Source("latency", r.latency)
	s.Source("memory", r.memory)
	s.Source("persistence files", r.persistenceFiles)
}

// redisSnap holds what one source learns for a later one: the persistence files
// are named by CONFIG GET and sized by INFO when the server is elsewhere.
type redisSnap struct {
	s   *collect.Snap
	inf map[string]string // INFO's fields
	cfg map[string]string // CONFIG GET *, nil when it failed
}

// info adds INFO everything and its facts.
func (r *redisSnap) info() error {
	s := r.s
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
	info := parseRedisInfo(rows)
	r.inf = info
	s.Add("info.txt", "INFO everything: server, clients, memory, persistence, stats, replication, cpu, commandstats, latencystats, keyspace", b.Bytes())
	s.Fact("Server", "Version", "Redis %s (%s mode)", info["redis_version"], collect.OrUnknown(info["redis_mode"]))
	s.Fact("Server", "Up", "%s s, role %s, %s clients", info["uptime_in_seconds"], info["role"], info["connected_clients"])
	s.Fact("Memory", "Used", "%s (rss %s, fragmentation %s), maxmemory %s %s", info["used_memory_human"], info["used_memory_rss_human"],
		info["mem_fragmentation_ratio"], info["maxmemory_human"], info["maxmemory_policy"])
	return nil
}

// configMap reads CONFIG GET's reply, a RESP3 map or RESP2's name, value, name, value ….
func configMap(rows [][]string) map[string]string {
	cfg := map[string]string{}
	if len(rows) > 0 && len(rows[0]) == 2 { // RESP3 map
		for _, r := range rows {
			cfg[r[0]] = r[1]
		}
		return cfg
	}
	for i := 0; i+1 < len(rows); i += 2 { // RESP2
		if len(rows[i]) > 0 && len(rows[i+1]) > 0 {
			cfg[rows[i][0]] = rows[i+1][0]
		}
	}
	return cfg
}

// config adds CONFIG GET * with secrets not shown, and the persistence facts.
func (r *redisSnap) config() error {
	s := r.s
	rows, err := s.Query("CONFIG GET *")
	if err != nil {
		return err
	}
	cfg := configMap(rows)
	r.cfg = cfg
	var out [][]string
	for _, k := range slices.Sorted(maps.Keys(cfg)) {
		v := cfg[k]
		if slices.Contains(redisSecretConfig, k) && v != "" {
			v = "(set, not shown)"
		}
		out = append(out, []string{k, v})
	}
	s.Add("config.tsv", "CONFIG GET * (secrets not shown)", collect.Table([]string{"name", "value"}, out))
	s.Fact("Persistence", "AOF", "appendonly %s, appendfsync %s, no-appendfsync-on-rewrite %s", cfg["appendonly"], cfg["appendfsync"], cfg["no-appendfsync-on-rewrite"])
	s.Fact("Persistence", "RDB", "save %q", cfg["save"])
	return nil
}

// slowlog adds SLOWLOG GET 128, one row per entry.
func (r *redisSnap) slowlog() error {
	s := r.s
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
}

// latency adds LATENCY DOCTOR's text.
func (r *redisSnap) latency() error {
	s := r.s
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
}

// memory adds MEMORY STATS.
func (r *redisSnap) memory() error {
	rows, err := r.s.Query("MEMORY STATS")
	if err != nil {
		return err
	}
	r.s.Add("memory_stats.tsv", "MEMORY STATS", collect.Table([]string{"name", "value"}, rows))
	return nil
}

// persistenceFiles adds the RDB and AOF files named by CONFIG GET, with their
// sizes when the server is on this host.
func (r *redisSnap) persistenceFiles() error {
	s, cfg := r.s, r.cfg
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
		fmt.Fprintf(&b, "the server is not on this host: sizes from INFO only (AOF %s bytes)\n", collect.OrUnknown(r.inf["aof_current_size"]))
		for _, f := range files {
			fmt.Fprintf(&b, "%s\n", f)
		}
	} else {
		for _, f := range files {
			r.fileSize(&b, f)
		}
	}
	s.Add("persistence_files.txt", "RDB and AOF files with their sizes", b.Bytes())
	return nil
}

// fileSize writes one local persistence file's (or AOF directory's) size line.
func (r *redisSnap) fileSize(b *bytes.Buffer, f string) {
	size, n, mod, err := treeSize(f)
	switch {
	case os.IsNotExist(err):
		fmt.Fprintf(b, "%s: none\n", f)
	case err != nil:
		fmt.Fprintf(b, "%s: %v\n", f, err)
	default:
		fmt.Fprintf(b, "%s: %s in %d file(s), modified %s\n", f, collect.SizeText(size), n, mod.UTC().Format(time.RFC3339))
		r.s.Fact("Persistence", filepath.Base(f), "%s", collect.SizeText(size))
	}
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
