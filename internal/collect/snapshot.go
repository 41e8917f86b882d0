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

	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/sample"
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
	// Interval separates the status samples; vmstat-like samples are taken every
	// second meanwhile (default 10s).
	Interval time.Duration
	// Samples is how many times status (and MySQL's InnoDB status) is sampled,
	// Interval apart (default 2, at least 2).
	Samples int
	// LogLines is how many lines of the error log's end are kept (default 200).
	LogLines int
	// TopStatements is how many statements the slow-query digest lists (default 20).
	TopStatements int
	// TopTables is how many of the largest tables to list (default 25).
	TopTables int
	// LongRunning: sessions with a statement or transaction older than this are listed
	// as long-running (default 60s).
	LongRunning time.Duration
	// MaxSchemaTables bounds the tables whose definitions are written (default 500).
	MaxSchemaTables int
	// Secrets are strings masked wherever they appear (the DSN's password).
	Secrets []string
	// Kind is the target's database kind (its bundle in internal/db gives it).
	Kind Database
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
	if o.Samples < 2 {
		o.Samples = 2
	}
	if o.LogLines <= 0 {
		o.LogLines = 200
	}
	if o.TopStatements <= 0 {
		o.TopStatements = 20
	}
	if o.LongRunning <= 0 {
		o.LongRunning = time.Minute
	}
	if o.MaxSchemaTables <= 0 {
		o.MaxSchemaTables = 500
	}
}

// bundleFile is one file of a snapshot.
type bundleFile struct {
	Name string
	// What says in a few words what the file holds (listed in the summary).
	What string
	Data []byte
}

// sourceError is a source that could not be taken.
type sourceError struct {
	Source string
	Err    string
}

// Bundle is a finished snapshot.
type Bundle struct {
	Taken  time.Time
	Files  []bundleFile // summary.txt first
	Errors []sourceError
}

// File returns the named file, or nil.
func (b *Bundle) File(name string) *bundleFile {
	for i := range b.Files {
		if b.Files[i].Name == name {
			return &b.Files[i]
		}
	}
	return nil
}

// Snap is a snapshot being taken (a Database adds its sources to it).
type Snap struct {
	ctx    context.Context
	opts   SnapshotOptions
	tgt    target.Target
	conn   target.Conn
	srv    *sample.Server
	files  []bundleFile
	errs   []sourceError
	sect   map[string][][2]string
	order  []string
	status []*sample.Sample
	// perSample are sources taken with each status sample (i from 1 of n).
	perSample []func(i, n int)
}

func (s *Snap) Add(name, what string, data []byte) {
	s.files = append(s.files, bundleFile{Name: name, What: what, Data: data})
}

func (s *Snap) Fail(source string, err error) {
	s.errs = append(s.errs, sourceError{Source: source, Err: OneLine(err)})
}

// Fact adds a line to a section of the summary page.
func (s *Snap) Fact(section, label, format string, args ...any) {
	if s.sect == nil {
		s.sect = map[string][][2]string{}
	}
	if _, ok := s.sect[section]; !ok {
		s.order = append(s.order, section)
	}
	s.sect[section] = append(s.sect[section], [2]string{label, fmt.Sprintf(format, args...)})
}

// Source runs one source, recording its failure.
func (s *Snap) Source(name string, f func() error) {
	if s.opts.Progress != nil {
		s.opts.Progress(name)
	}
	if err := s.ctx.Err(); err != nil {
		s.Fail(name, err)
		return
	}
	if err := f(); err != nil {
		s.Fail(name, err)
	}
}

// Query runs SQL with a timeout on the snapshot's connection, reconnecting once if a
// previous source's timeout closed it.
func (s *Snap) Query(sql string) ([][]string, error) {
	if s.conn == nil || !s.conn.Alive() {
		if s.conn != nil {
			s.conn.Close()
			s.conn = nil
		}
		if s.tgt == nil || embedded(s.opts.Kind) && sql == "" {
			return nil, ErrNoConn
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

// Table renders rows as tab-separated text with a header line.
func Table(header []string, rows [][]string) []byte {
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

// Aligned renders rows as aligned columns for reading.
func Aligned(header []string, rows [][]string) []byte {
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
	s := &Snap{ctx: ctx, opts: opts, tgt: tgt}
	taken := time.Now().UTC()
	if !embedded(opts.Kind) {
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
	smp := NewSampler(tgt, Options{Kind: opts.Kind, DSN: opts.DSN, Timeout: 5 * time.Second})
	defer smp.Close()
	s.srv = smp.Start(ctx)
	if opts.Kind != nil {
		opts.Kind.Snapshot(s)
	}
	s.statusN(smp)
	s.host()
	s.network()
	b := &Bundle{Taken: taken, Errors: s.errs}
	if len(s.errs) > 0 {
		var rows [][]string
		for _, e := range s.errs {
			rows = append(rows, []string{e.Source, e.Err})
		}
		s.Add("errors.txt", "sources that could not be taken, and why", Aligned([]string{"source", "error"}, rows))
	}
	b.Files = append([]bundleFile{{Name: "summary.txt", What: "this page", Data: s.summary(taken, tgt.Redacted())}}, s.files...)
	// Credentials never leave: the DSN's password and anything that looks like one.
	for i := range b.Files {
		b.Files[i].Data = redactBytes(b.Files[i].Data, opts.Secrets)
	}
	return b, nil
}

var (
	reIdentified = regexp.MustCompile(`(?i)(identified\s+(?:with\s+\S+\s+)?(?:by|as)\s+(?:password\s+)?)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")`)
	rePassword   = regexp.MustCompile(`(?i)(\bpassword\s+)('(?:[^'\\]|\\.)*')`)
	reUsing      = regexp.MustCompile(`(?i)(\bidentified\s+via\s+[^;]*?\busing\s+(?:password\s*\(\s*)?)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")`)
	reMasterPwd  = regexp.MustCompile(`(?i)((?:master|source)_password\s*=\s*)('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")`)
)

// redactText masks credentials in text: DSN passwords, password=…, IDENTIFIED BY
// '…', PASSWORD '…', MASTER_PASSWORD='…', and the given secrets.
func redactText(s string, secrets []string) string {
	s = target.RedactString(s)
	s = reIdentified.ReplaceAllString(s, "${1}'xxxxx'")
	s = rePassword.ReplaceAllString(s, "${1}'xxxxx'")
	s = reMasterPwd.ReplaceAllString(s, "${1}'xxxxx'")
	s = reUsing.ReplaceAllString(s, "${1}'xxxxx'")
	for _, sec := range secrets {
		if len(sec) >= 3 {
			s = strings.ReplaceAll(s, sec, "xxxxx")
		}
	}
	return s
}

func redactBytes(b []byte, secrets []string) []byte { return []byte(redactText(string(b), secrets)) }

// statusN samples every collector Samples times, Interval apart, with vmstat-like
// samples every second in between and the per-sample sources (InnoDB status) beside
// each, and writes every sample and the differences between the first and the last.
func (s *Snap) statusN(smp *Sampler) {
	n := s.opts.Samples
	if s.opts.Progress != nil {
		s.opts.Progress(fmt.Sprintf("status %d times, %s apart (with vmstat every second)", n, s.opts.Interval))
	}
	take := func(i int) {
		s.status = append(s.status, smp.Sample(s.ctx, i-1, time.Now()))
		for _, f := range s.perSample {
			f(i, n)
		}
	}
	take(1)
	vm := newVMStatSampler()
	start := time.Now()
	var vmLines []string
	vmLines = append(vmLines, vm.header())
	if line, err := vm.sample(); err == nil {
		vmLines = append(vmLines, line)
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for i := 2; i <= n && s.ctx.Err() == nil; i++ {
		deadline := time.NewTimer(s.opts.Interval)
	wait:
		for {
			select {
			case <-s.ctx.Done():
				break wait
			case <-deadline.C:
				break wait
			case <-tick.C:
				if line, err := vm.sample(); err == nil {
					vmLines = append(vmLines, line)
				}
			}
		}
		deadline.Stop()
		take(i)
	}
	if len(s.status) < 2 {
		return // interrupted
	}
	elapsed := time.Since(start)
	s.Add("vmstat.txt", "vmstat-like samples every second while status was sampled (first line: since boot)",
		[]byte(strings.Join(vmLines, "\n")+"\n"))
	for i, smpl := range s.status {
		var rows [][]string
		for _, r := range smpl.Readings {
			rows = append(rows, []string{r.Name, r.Kind.String(), r.Unit, fmtFloat(r.Value)})
		}
		sort.Slice(rows, func(a, b int) bool { return rows[a][0] < rows[b][0] })
		s.Add(fmt.Sprintf("status_%d.tsv", i+1), fmt.Sprintf("every metric, sample %d of %d", i+1, len(s.status)), Table([]string{"metric", "kind", "unit", "value"}, rows))
	}
	last := s.status[len(s.status)-1]
	first := map[string]sample.Reading{}
	for _, r := range s.status[0].Readings {
		first[r.Name] = r
	}
	var rows [][]string
	for _, r := range last.Readings {
		a, ok := first[r.Name]
		if !ok {
			continue
		}
		delta := r.Value - a.Value
		rate := ""
		switch {
		case r.Kind == sample.Counter && r.Reset:
			rate = "reset"
		case r.Kind == sample.Counter && elapsed > 0 && delta >= 0:
			rate = fmtFloat(delta / elapsed.Seconds())
		}
		if delta == 0 && r.Kind == sample.Counter {
			continue
		}
		rows = append(rows, []string{r.Name, r.Kind.String(), r.Unit, fmtFloat(a.Value), fmtFloat(r.Value), fmtFloat(delta), rate})
	}
	sort.Slice(rows, func(a, b int) bool { return rows[a][0] < rows[b][0] })
	s.Add("status_diff.tsv", fmt.Sprintf("what changed between the first and the last sample (%.1fs apart): counters with their per-second rate over that time", elapsed.Seconds()),
		Table([]string{"metric", "kind", "unit", "first", "second", "delta", "per_second"}, rows))
	var res [][]string
	for _, r := range last.Results {
		res = append(res, []string{r.Collector, string(r.Status), r.Took.Round(time.Microsecond).String(), r.Error})
	}
	s.Add("collectors.txt", "how each collector did in the last sample", Aligned([]string{"collector", "status", "took", "error"}, res))
	for _, r := range last.Results {
		if r.Status == sample.StatusFailed || r.Status == sample.StatusTimeout {
			s.Fail("collector "+r.Collector, errors.New(r.Error))
		}
	}
	s.activity(s.status[len(s.status)-1].At.Sub(s.status[len(s.status)-2].At))
}

// activity summarises the key rates between the last two status samples.
func (s *Snap) activity(elapsed time.Duration) {
	rate := map[string]float64{}
	level := map[string]float64{}
	for _, r := range s.status[len(s.status)-1].Readings {
		if r.Kind == sample.Counter && r.HasRate {
			rate[r.Name] = r.Rate
		} else if r.Kind == sample.Gauge {
			level[r.Name] = r.Value
		}
	}
	var parts []string
	add := func(format, name string, m map[string]float64) {
		if v, ok := m[name]; ok {
			parts = append(parts, fmt.Sprintf(format, v))
		}
	}
	var after [][2]string
	if a, ok := s.opts.Kind.(Activity); ok {
		var ps []string
		ps, after = a.Activity(rate)
		parts = append(parts, ps...)
	}
	add("CPU user %.0f%%", OSCPUUserPct, rate)
	add("system %.0f%%", OSCPUSystemPct, rate)
	add("iowait %.0f%%", OSCPUIowaitPct, rate)
	add("disk %.0f writes/s", OSDiskWrites, rate)
	if v, ok := rate[OSDiskUtilPct]; ok {
		parts = append(parts, fmt.Sprintf("disk busy %.0f%%", v))
	}
	if len(parts) > 0 {
		s.Fact("Activity", fmt.Sprintf("last %.0fs", elapsed.Seconds()), "%s", strings.Join(parts, ", "))
	}
	for _, f := range after {
		s.Fact("Activity", f[0], "%s", f[1])
	}
}

// Activity is a Database that sums up its server's key rates (counters' per-second
// rates by name) for a snapshot's Activity section: parts of the activity line, shown
// before the host's ("120 commits/s"), and facts of their own (label, text) after it.
type Activity interface {
	Activity(rate map[string]float64) (parts []string, facts [][2]string)
}

func fmtFloat(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return fmt.Sprintf("%d", int64(v))
	}
	return fmt.Sprintf("%.4f", v)
}

// summary renders the top page.
func (s *Snap) summary(taken time.Time, target string) []byte {
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
	// Private, and refused when another user owns it (they could read or replace
	// what the bundle holds: settings, process lists, logs).
	if err := safefile.Dir(dir, 0o700); err != nil {
		return err
	}
	for _, f := range b.Files {
		if err := safefile.WriteFile(filepath.Join(dir, f.Name), f.Data); err != nil {
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

func SizeText(n int64) string {
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

// Server is what the snapshot's sampler learnt about the server.
func (s *Snap) Server() *sample.Server { return s.srv }

// Options are the snapshot's options, defaults filled in.
func (s *Snap) Options() SnapshotOptions { return s.opts }

// PerSample adds a source taken with each status sample (i from 1 of n).
func (s *Snap) PerSample(f func(i, n int)) { s.perSample = append(s.perSample, f) }

// OrUnknown is s, or "unknown" when it is empty.
func OrUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// FirstWords is the first n words of s (a statement, for a table).
func FirstWords(s string, n int) string {
	f := strings.Fields(s)
	if len(f) > n {
		f = f[:n]
	}
	return strings.TrimSuffix(strings.Join(f, " "), ",")
}
