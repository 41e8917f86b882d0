package collect

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// A snapshot is scenario 9's review bundle: everything a consultant collects about a
// server in one go (version, settings, configuration files, status twice with the
// differences, sessions, InnoDB status, replication, sizes, schema, log locations, OS
// and hardware facts, vmstat-like samples), one file per source, with a summary page on
// top. Sources are independent: one that fails is listed in errors.txt and the summary,
// and the others are still taken. Credentials are masked in every file.

// SnapshotOptions configure a snapshot.
type SnapshotOptions struct {
	// Interval separates the two status samples; vmstat-like samples are taken every
	// second meanwhile (default 10s).
	Interval time.Duration
	// TopTables is how many of the largest tables to list (default 25).
	TopTables int
	// LongRunning: sessions with a statement or transaction older than this are listed
	// as long-running (default 60s).
	LongRunning time.Duration
	// MaxSchemaTables bounds the tables whose definitions are written (default 500).
	MaxSchemaTables int
	// Secrets are strings masked wherever they appear (the DSN's password).
	Secrets []string
	// DSN is the target's DSN (for a SQLite file's location); it is never written.
	DSN string
	// Progress, when set, is told which source is being taken.
	Progress func(source string)
	// Version is fathom's version, for the summary.
	Version string
}

func (o *SnapshotOptions) defaults() {
	if o.Interval <= 0 {
		o.Interval = 10 * time.Second
	}
	if o.TopTables <= 0 {
		o.TopTables = 25
	}
	if o.LongRunning <= 0 {
		o.LongRunning = time.Minute
	}
	if o.MaxSchemaTables <= 0 {
		o.MaxSchemaTables = 500
	}
}

// BundleFile is one file of a snapshot.
type BundleFile struct {
	Name string
	// What says in a few words what the file holds (listed in the summary).
	What string
	Data []byte
}

// SourceError is a source that could not be taken.
type SourceError struct {
	Source string
	Err    string
}

// Bundle is a finished snapshot.
type Bundle struct {
	Taken  time.Time
	Files  []BundleFile // summary.txt first
	Errors []SourceError
}

// File returns the named file, or nil.
func (b *Bundle) File(name string) *BundleFile {
	for i := range b.Files {
		if b.Files[i].Name == name {
			return &b.Files[i]
		}
	}
	return nil
}

// snap is a snapshot being taken.
type snap struct {
	ctx    context.Context
	opts   SnapshotOptions
	tgt    target.Target
	conn   target.Conn
	srv    *Server
	files  []BundleFile
	errs   []SourceError
	facts  [][2]string // summary lines: label, text
	sect   map[string][][2]string
	order  []string
	status [2]*Sample
}

func (s *snap) add(name, what string, data []byte) {
	s.files = append(s.files, BundleFile{Name: name, What: what, Data: data})
}

func (s *snap) fail(source string, err error) {
	s.errs = append(s.errs, SourceError{Source: source, Err: oneLine(err)})
}

// fact adds a line to a section of the summary page.
func (s *snap) fact(section, label, format string, args ...any) {
	if s.sect == nil {
		s.sect = map[string][][2]string{}
	}
	if _, ok := s.sect[section]; !ok {
		s.order = append(s.order, section)
	}
	s.sect[section] = append(s.sect[section], [2]string{label, fmt.Sprintf(format, args...)})
}

// source runs one source, recording its failure.
func (s *snap) source(name string, f func() error) {
	if s.opts.Progress != nil {
		s.opts.Progress(name)
	}
	if err := s.ctx.Err(); err != nil {
		s.fail(name, err)
		return
	}
	if err := f(); err != nil {
		s.fail(name, err)
	}
}

// query runs SQL with a timeout on the snapshot's connection, reconnecting once if a
// previous source's timeout closed it.
func (s *snap) query(sql string) ([][]string, error) {
	if s.conn == nil || !s.conn.Alive() {
		if s.conn != nil {
			s.conn.Close()
			s.conn = nil
		}
		if s.tgt == nil || s.tgt.Kind() == "sqlite" && sql == "" {
			return nil, errNoConn
		}
		c, err := s.tgt.Connect(s.ctx)
		if err != nil {
			return nil, err
		}
		s.conn = c
	}
	ctx, cancel := context.WithTimeout(s.ctx, 30*time.Second)
	defer cancel()
	return s.conn.Query(ctx, sql)
}

// table renders rows as tab-separated text with a header line.
func table(header []string, rows [][]string) []byte {
	var b bytes.Buffer
	b.WriteString(strings.Join(header, "\t") + "\n")
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c)
		}
		b.WriteString(strings.Join(cells, "\t") + "\n")
	}
	return b.Bytes()
}

// aligned renders rows as aligned columns for reading.
func aligned(header []string, rows [][]string) []byte {
	var b bytes.Buffer
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		cells := make([]string, len(r))
		for i, c := range r {
			cells[i] = strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(c)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	tw.Flush()
	return b.Bytes()
}

// Snapshot takes a review bundle of tgt and this host.
func Snapshot(ctx context.Context, tgt target.Target, opts SnapshotOptions) (*Bundle, error) {
	opts.defaults()
	s := &snap{ctx: ctx, opts: opts, tgt: tgt}
	taken := time.Now().UTC()
	kind := tgt.Kind()
	if kind != "sqlite" {
		c, err := tgt.Connect(ctx)
		if err != nil {
			return nil, err
		}
		s.conn = c
		defer func() {
			if s.conn != nil {
				s.conn.Close()
			}
		}()
	}
	smp := NewSampler(tgt, Options{DSN: opts.DSN, Timeout: 5 * time.Second})
	defer smp.Close()
	s.srv = smp.Start(ctx)
	switch kind {
	case "postgres":
		s.postgres()
	case "mysql":
		s.mysql()
	case "sqlite":
		s.sqlite()
	}
	s.status2(smp)
	s.host()
	b := &Bundle{Taken: taken, Errors: s.errs}
	if len(s.errs) > 0 {
		var rows [][]string
		for _, e := range s.errs {
			rows = append(rows, []string{e.Source, e.Err})
		}
		s.add("errors.txt", "sources that could not be taken, and why", aligned([]string{"source", "error"}, rows))
	}
	b.Files = append([]BundleFile{{Name: "summary.txt", What: "this page", Data: s.summary(taken, tgt.Redacted())}}, s.files...)
	// Credentials never leave: the DSN's password and anything that looks like one.
	for i := range b.Files {
		b.Files[i].Data = redactBytes(b.Files[i].Data, opts.Secrets)
	}
	return b, nil
}

var (
	reIdentified = regexp.MustCompile(`(?i)(identified\s+(?:with\s+\S+\s+)?(?:by|as)\s+(?:password\s+)?)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")`)
	rePassword   = regexp.MustCompile(`(?i)(\bpassword\s+)('(?:[^'\\]|\\.)*')`)
	reMasterPwd  = regexp.MustCompile(`(?i)((?:master|source)_password\s*=\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")`)
)

// RedactText masks credentials in text: DSN passwords, password=…, IDENTIFIED BY
// '…', PASSWORD '…', MASTER_PASSWORD='…', and the given secrets.
func RedactText(s string, secrets []string) string {
	s = target.RedactString(s)
	s = reIdentified.ReplaceAllString(s, "${1}'xxxxx'")
	s = rePassword.ReplaceAllString(s, "${1}'xxxxx'")
	s = reMasterPwd.ReplaceAllString(s, "${1}'xxxxx'")
	for _, sec := range secrets {
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, "xxxxx")
		}
	}
	return s
}

func redactBytes(b []byte, secrets []string) []byte { return []byte(RedactText(string(b), secrets)) }

// status2 samples every collector twice, Interval apart, with vmstat-like samples
// every second in between, and writes both samples and their differences.
func (s *snap) status2(smp *Sampler) {
	if s.opts.Progress != nil {
		s.opts.Progress(fmt.Sprintf("status twice, %s apart (with vmstat every second)", s.opts.Interval))
	}
	s.status[0] = smp.Sample(s.ctx, 0, time.Now())
	vm := newVMStatSampler()
	start := time.Now()
	var vmLines []string
	vmLines = append(vmLines, vm.header())
	if line, err := vm.sample(); err == nil {
		vmLines = append(vmLines, line)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	deadline := time.NewTimer(s.opts.Interval)
	defer deadline.Stop()
loop:
	for {
		select {
		case <-s.ctx.Done():
			break loop
		case <-deadline.C:
			break loop
		case <-tick.C:
			if line, err := vm.sample(); err == nil {
				vmLines = append(vmLines, line)
			}
		}
	}
	s.status[1] = smp.Sample(s.ctx, 1, time.Now())
	elapsed := time.Since(start)
	s.add("vmstat.txt", "vmstat-like samples every second between the two status samples (first line: since boot)",
		[]byte(strings.Join(vmLines, "\n")+"\n"))
	for i, smpl := range s.status {
		var rows [][]string
		for _, r := range smpl.Readings {
			rows = append(rows, []string{r.Name, r.Kind.String(), r.Unit, fmtFloat(r.Value)})
		}
		sort.Slice(rows, func(a, b int) bool { return rows[a][0] < rows[b][0] })
		s.add(fmt.Sprintf("status_%d.tsv", i+1), fmt.Sprintf("every metric, sample %d", i+1), table([]string{"metric", "kind", "unit", "value"}, rows))
	}
	first := map[string]Reading{}
	for _, r := range s.status[0].Readings {
		first[r.Name] = r
	}
	var rows [][]string
	for _, r := range s.status[1].Readings {
		a, ok := first[r.Name]
		if !ok {
			continue
		}
		delta := r.Value - a.Value
		rate := ""
		switch {
		case r.Kind == Counter && r.Reset:
			rate = "reset"
		case r.Kind == Counter && r.HasRate:
			rate = fmtFloat(r.Rate)
		}
		if delta == 0 && r.Kind == Counter {
			continue
		}
		rows = append(rows, []string{r.Name, r.Kind.String(), r.Unit, fmtFloat(a.Value), fmtFloat(r.Value), fmtFloat(delta), rate})
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a][0] < rows[b][0] })
	s.add("status_diff.tsv", fmt.Sprintf("what changed between the two samples (%.1fs apart): counters with their per-second rate", elapsed.Seconds()),
		table([]string{"metric", "kind", "unit", "first", "second", "delta", "per_second"}, rows))
	var res [][]string
	for _, r := range s.status[1].Results {
		res = append(res, []string{r.Collector, string(r.Status), r.Took.Round(time.Microsecond).String(), r.Error})
	}
	s.add("collectors.txt", "how each collector did in the second sample", aligned([]string{"collector", "status", "took", "error"}, res))
	for _, r := range s.status[1].Results {
		if r.Status == StatusFailed || r.Status == StatusTimeout {
			s.fail("collector "+r.Collector, errors.New(r.Error))
		}
	}
	s.activity(elapsed)
}

// activity summarises the key rates between the two status samples.
func (s *snap) activity(elapsed time.Duration) {
	rate := map[string]float64{}
	level := map[string]float64{}
	for _, r := range s.status[1].Readings {
		if r.Kind == Counter && r.HasRate {
			rate[r.Name] = r.Rate
		} else if r.Kind == Gauge {
			level[r.Name] = r.Value
		}
	}
	var parts []string
	add := func(format, name string, m map[string]float64) {
		if v, ok := m[name]; ok {
			parts = append(parts, fmt.Sprintf(format, v))
		}
	}
	add("%.0f commits/s", "pg.xact_commit", rate)
	add("%.0f statements/s", "mysql.Questions", rate)
	if v, ok := rate["pg.wal_bytes"]; ok {
		parts = append(parts, fmt.Sprintf("WAL %s/s", sizeText(int64(v))))
	}
	if v, ok := rate["mysql.Innodb_os_log_written"]; ok {
		parts = append(parts, fmt.Sprintf("redo %s/s", sizeText(int64(v))))
	}
	add("%.0f rows read/s", "mysql.Innodb_rows_read", rate)
	add("CPU user %.0f%%", "os.cpu.user_pct", rate)
	add("system %.0f%%", "os.cpu.system_pct", rate)
	add("iowait %.0f%%", "os.cpu.iowait_pct", rate)
	add("disk %.0f writes/s", "os.disk.writes", rate)
	if v, ok := rate["os.disk.util_pct"]; ok {
		parts = append(parts, fmt.Sprintf("disk busy %.0f%%", v))
	}
	if len(parts) > 0 {
		s.fact("Activity", fmt.Sprintf("over %.0fs", elapsed.Seconds()), "%s", strings.Join(parts, ", "))
	}
	for _, n := range []string{"pg.checkpoints_req", "pg.checkpoints_timed"} {
		if v, ok := rate[n]; ok && v > 0 {
			s.fact("Activity", "checkpoints", "%s during the sampling (%.2f/s)", strings.TrimPrefix(n, "pg."), v)
		}
	}
}

func fmtFloat(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.4f", v)
}

// summary renders the top page.
func (s *snap) summary(taken time.Time, target string) []byte {
	var b bytes.Buffer
	line := func(title string) {
		b.WriteString("# " + title + " " + strings.Repeat("#", max(3, 74-len(title))) + "\n")
	}
	row := func(label, text string) { fmt.Fprintf(&b, "%18s | %s\n", label, text) }
	line("fathom snapshot")
	row("Taken", taken.Format(time.RFC3339)+" by fathom "+s.opts.Version)
	row("Target", target+" (credentials masked in every file)")
	for _, sec := range s.order {
		line(sec)
		for _, f := range s.sect[sec] {
			row(f[0], f[1])
		}
	}
	line("Files")
	for _, f := range s.files {
		row(f.Name, f.What)
	}
	if len(s.errs) > 0 {
		line("Could not be taken")
		for _, e := range s.errs {
			row(e.Source, e.Err)
		}
	}
	return b.Bytes()
}

// WriteDir writes the bundle's files into dir (created; it must not hold files yet).
func (b *Bundle) WriteDir(dir string) error {
	if ents, err := os.ReadDir(dir); err == nil && len(ents) > 0 {
		return fmt.Errorf("%s already holds files: name a new directory or a FILE.tar.gz", dir)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	for _, f := range b.Files {
		if err := os.WriteFile(filepath.Join(dir, f.Name), f.Data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// WriteTarGz writes the bundle as a gzipped tar archive whose files are in one
// directory named after the archive.
func (b *Bundle) WriteTarGz(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, os.ErrExist) {
			return fmt.Errorf("%s already exists: name another file", path)
		}
		return err
	}
	if err := b.writeTar(f, strings.TrimSuffix(strings.TrimSuffix(filepath.Base(path), ".gz"), ".tar")); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

func (b *Bundle) writeTar(w io.Writer, dir string) error {
	dir = strings.TrimSuffix(dir, ".tgz")
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	mod := b.Taken
	if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: dir + "/", Mode: 0o700, ModTime: mod}); err != nil {
		return err
	}
	for _, f := range b.Files {
		if err := tw.WriteHeader(&tar.Header{Name: dir + "/" + f.Name, Mode: 0o600, Size: int64(len(f.Data)), ModTime: mod}); err != nil {
			return err
		}
		if _, err := tw.Write(f.Data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

func sizeText(n int64) string {
	f := float64(n)
	for _, u := range []struct {
		s string
		n float64
	}{{"TB", 1 << 40}, {"GB", 1 << 30}, {"MB", 1 << 20}, {"kB", 1 << 10}} {
		if f >= u.n {
			return fmt.Sprintf("%.1f %s", f/u.n, u.s)
		}
	}
	return fmt.Sprintf("%d B", n)
}
