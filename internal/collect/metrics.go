package collect

import (
	"fmt"
	"strings"

	"github.com/fathom-lab/fathom/internal/sample"
)

// The metric vocabulary: every metric a collector emits is declared once, as data
// (name, kind, unit, help), the way mysqld_exporter declares its descriptors. The
// host's collectors declare theirs here; a database kind's collectors declare theirs
// in its directory (internal/db/KIND/metrics.go) and hand them over with each
// collector (Func.Metrics). Stall rules, report charts, watch, check and snapshot
// refer to the names through exported constants, so renaming a metric breaks the
// build, and the tests fail when a collector emits a name it does not declare or a
// consumer refers to one no collector declares (Vocabulary).

// Desc declares one metric, or a family of metrics whose last part is named by what
// the server reports (one per wait event, per lock type, per status variable).
type Desc struct {
	Name string      `json:"name"`
	Kind sample.Kind `json:"-"`
	Unit string      `json:"unit,omitempty"`
	Help string      `json:"help"`
	// Family: Name is a prefix ending in "." and the members are Name plus a part
	// named by the server. A member is a gauge that reads 0 when a later scrape does
	// not mention it, unless the family says otherwise.
	Family bool `json:"family,omitempty"`
	// Member, when set, classifies a member of a family (MySQL status variables differ
	// in kind and unit) and says whether the name can belong to it.
	Member func(name string) (Desc, bool) `json:"-"`
}

// kindName is the kind as text, for JSON and listings.
func (d Desc) kindName() string {
	if d.Member != nil {
		return "per variable"
	}
	return d.Kind.String()
}

// Host metric names other packages refer to. A database kind's are in its directory
// (internal/db/KIND/metrics.go). A test fails for a constant no collector declares.
const (
	OSCPUIowaitPct                  = "os.cpu.iowait_pct"
	OSCPUStealPct                   = "os.cpu.steal_pct"
	OSCPUSystemPct                  = "os.cpu.system_pct"
	OSCPUUserPct                    = "os.cpu.user_pct"
	OSCPUs                          = "os.cpus"
	OSDiskAwaitMs                   = "os.disk.await_ms"
	OSDiskFlushes                   = "os.disk.flushes"
	OSDiskReadBytes                 = "os.disk.read_bytes"
	OSDiskReads                     = "os.disk.reads"
	OSDiskUtilPct                   = "os.disk.util_pct"
	OSDiskWriteBytes                = "os.disk.write_bytes"
	OSDiskWrites                    = "os.disk.writes"
	OSFathomCPUPct                  = "os.fathom.cpu_pct"
	OSMemDirtyBytes                 = "os.mem.dirty_bytes"
	OSMemTotalBytes                 = "os.mem.total_bytes"
	OSMemWritebackBytes             = "os.mem.writeback_bytes"
	OSPressureIOFullPct             = "os.pressure.io_full_pct"
	OSPressureIOSomePct             = "os.pressure.io_some_pct"
	osProcsBlocked                  = "os.procs_blocked"
	OSProcsRunning                  = "os.procs_running"
	OSServerCPUPct                  = "os.server.cpu_pct"
	osServerMemoryBytes             = "os.server.memory_bytes"
	OSVmDirtyBackgroundRatio        = "os.vm.dirty_background_ratio"
	OSVmDirtyBackgroundThresholdPct = "os.vm.dirty_background_threshold_pct"
	OSVmDirtyRatio                  = "os.vm.dirty_ratio"
	OSVmDirtyThresholdPct           = "os.vm.dirty_threshold_pct"
	PrefixOSFathom                  = "os.fathom."
)

// Counter declares a counter.
func Counter(name, unit, help string) Desc {
	return Desc{Name: name, Kind: sample.Counter, Unit: unit, Help: help}
}

// Gauge declares a gauge.
func Gauge(name, unit, help string) Desc {
	return Desc{Name: name, Kind: sample.Gauge, Unit: unit, Help: help}
}

// Family declares a family of gauges named by the server (name ends in ".").
func Family(name, unit, help string) Desc {
	return Desc{Name: name, Kind: sample.Gauge, Unit: unit, Help: help, Family: true}
}

// hostDeclared lists, per OS collector, the metrics it emits.
var hostDeclared = map[string][]Desc{
	"os_meminfo": {
		Gauge(OSMemDirtyBytes, "bytes", "memory waiting to be written back (Dirty)"),
		Gauge(OSMemWritebackBytes, "bytes", "memory being written back (Writeback)"),
		Gauge("os.mem.free_bytes", "bytes", "free memory"),
		Gauge("os.mem.available_bytes", "bytes", "memory available without swapping"),
		Gauge("os.mem.cached_bytes", "bytes", "page cache"),
		Gauge("os.mem.buffers_bytes", "bytes", "buffers"),
		Gauge(OSMemTotalBytes, "bytes", "total memory"),
		Gauge("os.mem.shmem_bytes", "bytes", "shared memory"),
		Gauge("os.mem.swap_used_bytes", "bytes", "swap in use"),
	},
	"os_vmstat": {
		Gauge("os.vm.dirty_bytes", "bytes", "dirty pages (nr_dirty)"),
		Gauge("os.vm.writeback_bytes", "bytes", "pages under writeback (nr_writeback)"),
		Gauge("os.vm.dirty_threshold_bytes", "bytes", "where writers are throttled (nr_dirty_threshold)"),
		Gauge("os.vm.dirty_background_threshold_bytes", "bytes", "where background writeback starts"),
		Gauge(OSVmDirtyBackgroundThresholdPct, "%", "dirty and writeback pages as a share of the background threshold"),
		Gauge(OSVmDirtyThresholdPct, "%", "dirty and writeback pages as a share of the throttling threshold"),
		Counter("os.vm.dirtied_bytes", "bytes", "pages dirtied"),
		Counter("os.vm.written_bytes", "bytes", "pages written back"),
		Counter("os.vm.pgpgin_bytes", "bytes", "paged in"),
		Counter("os.vm.pgpgout_bytes", "bytes", "paged out"),
		Counter("os.vm.swap_in_pages", "pages", "pages swapped in"),
		Counter("os.vm.swap_out_pages", "pages", "pages swapped out"),
		Counter("os.vm.major_faults", "faults", "major page faults"),
		Counter("os.vm.alloc_stalls", "stalls", "direct reclaim stalls"),
		Counter("os.vm.pages_scanned", "pages", "pages scanned by reclaim"),
		Counter("os.vm.pages_reclaimed", "pages", "pages reclaimed"),
		Gauge(OSVmDirtyRatio, "", "vm.dirty_ratio"),
		Gauge(OSVmDirtyBackgroundRatio, "", "vm.dirty_background_ratio"),
		Gauge("os.vm.dirty_bytes_setting", "", "vm.dirty_bytes"),
		Gauge("os.vm.dirty_background_bytes_setting", "", "vm.dirty_background_bytes"),
		Gauge("os.vm.dirty_expire_centisecs", "", "vm.dirty_expire_centisecs"),
		Gauge("os.vm.dirty_writeback_centisecs", "", "vm.dirty_writeback_centisecs"),
	},
	"os_cpu": {
		Counter(OSCPUUserPct, "%", "CPU in user mode (and nice), % of all CPUs"),
		Counter(OSCPUSystemPct, "%", "CPU in the kernel, % of all CPUs"),
		Counter(OSCPUIowaitPct, "%", "CPU idle waiting for I/O, % of all CPUs"),
		Counter("os.cpu.irq_pct", "%", "CPU in interrupts, % of all CPUs"),
		Counter(OSCPUStealPct, "%", "CPU taken by the hypervisor, % of all CPUs"),
		Counter("os.cpu.idle_pct", "%", "CPU idle, % of all CPUs"),
		Gauge(OSCPUs, "cpus", "CPUs"),
		Gauge(OSProcsRunning, "tasks", "runnable tasks"),
		Gauge(osProcsBlocked, "tasks", "tasks blocked on I/O"),
		Counter("os.context_switches", "switches", "context switches"),
		Counter("os.interrupts", "interrupts", "interrupts"),
		Gauge("os.load1", "tasks", "load average over one minute"),
	},
	"os_disk": {
		Counter(OSDiskReads, "ops", "reads completed"),
		Counter(OSDiskWrites, "ops", "writes completed"),
		Counter(OSDiskReadBytes, "bytes", "bytes read"),
		Counter(OSDiskWriteBytes, "bytes", "bytes written"),
		Counter("os.disk.read_time_ms", "ms", "time spent reading"),
		Counter("os.disk.write_time_ms", "ms", "time spent writing"),
		Counter("os.disk.merged", "ops", "requests merged"),
		Counter(OSDiskUtilPct, "%", "utilisation: time busy, % (per device)"),
		Counter("os.disk.weighted_time_ms", "ms", "time weighted by requests in flight"),
		Counter(OSDiskFlushes, "ops", "flush requests completed"),
		Counter("os.disk.flush_time_ms", "ms", "time spent flushing"),
		Counter("os.disk.discards", "ops", "discards completed"),
		Gauge("os.disk.in_flight", "ops", "requests in flight"),
		Gauge(OSDiskAwaitMs, "ms", "average time per completed I/O (iostat await)"),
		Gauge("os.disk.r_await_ms", "ms", "average time per completed read"),
		Gauge("os.disk.w_await_ms", "ms", "average time per completed write"),
		Gauge("os.disk.queue_depth", "requests", "average queue depth"),
		Gauge("os.disk.write_size_bytes", "bytes", "average write size"),
	},
	"os_pressure": {
		Counter(OSPressureIOSomePct, "%", "share of time some tasks stalled on I/O (PSI)"),
		Counter(OSPressureIOFullPct, "%", "share of time all tasks stalled on I/O (PSI)"),
		Counter("os.pressure.memory_some_pct", "%", "share of time some tasks stalled on memory (PSI)"),
		Counter("os.pressure.memory_full_pct", "%", "share of time all tasks stalled on memory (PSI)"),
		Counter("os.pressure.cpu_some_pct", "%", "share of time some tasks waited for a CPU (PSI)"),
	},
	"os_process": {
		Counter(OSFathomCPUPct, "%", "fathom's own CPU, % of one core"),
		Counter(OSServerCPUPct, "%", "the server processes' CPU, % of one core"),
		Gauge("os.server.processes", "processes", "server processes"),
		Gauge("os.server.threads", "threads", "server threads"),
		Gauge(osServerMemoryBytes, "bytes", "server memory: private summed, shared counted once"),
		Gauge("os.server.private_memory_bytes", "bytes", "server private resident memory"),
		Counter("os.server.read_bytes", "bytes", "bytes the server processes read from storage"),
		Counter("os.server.write_bytes", "bytes", "bytes the server processes wrote to storage"),
	},
}

// Vocabulary is the declarations of a set of collectors (the host's and some kinds'),
// indexed by name; families by prefix.
type Vocabulary struct {
	byName      map[string]Desc
	byCollector map[string][]Desc
}

// NewVocabulary gathers the declarations of the host's collectors and of the kinds'
// (nil kinds are skipped). A family whose name does not end in "." (or a metric whose
// does) or a name declared twice differently is an error.
func NewVocabulary(kinds ...Database) (*Vocabulary, error) {
	v := &Vocabulary{byName: map[string]Desc{}, byCollector: map[string][]Desc{}}
	for _, list := range sourceCollectors(kinds...) {
		for _, c := range list {
			if err := v.add(c.Name(), c.Metrics()); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

func (v *Vocabulary) add(coll string, list []Desc) error {
	v.byCollector[coll] = append(v.byCollector[coll], list...)
	for _, d := range list {
		if d.Family != strings.HasSuffix(d.Name, ".") {
			return fmt.Errorf("collect: metric %q of %s: a family's name ends in '.', a metric's does not", d.Name, coll)
		}
		if prev, dup := v.byName[d.Name]; dup && (prev.Kind != d.Kind || prev.Unit != d.Unit || prev.Family != d.Family) {
			return fmt.Errorf("collect: metric %q declared twice, differently", d.Name)
		}
		v.byName[d.Name] = d
	}
	return nil
}

// Lookup finds the declaration of a metric name: its own, or that of the family it
// belongs to (the longest matching prefix), with the member's name.
func (v *Vocabulary) Lookup(name string) (Desc, bool) {
	if d, ok := v.byName[name]; ok && !d.Family {
		return d, true
	}
	best := ""
	for n, d := range v.byName {
		if d.Family && len(n) > len(best) && strings.HasPrefix(name, n) && len(name) > len(n) {
			if d.Member != nil {
				if _, ok := d.Member(name); !ok {
					continue
				}
			}
			best = n
		}
	}
	if best == "" {
		return Desc{}, false
	}
	d := v.byName[best]
	if d.Member != nil {
		m, _ := d.Member(name)
		return m, true
	}
	d.Name, d.Family = name, false
	return d, true
}

// IsFamily reports whether name is a declared family's own prefix.
func (v *Vocabulary) IsFamily(name string) bool {
	d, ok := v.byName[name]
	return ok && d.Family
}

// Declared reports whether a name refers to declared metrics: a metric, a member of
// a family, a family's own prefix, or (ending in "." or "*") a prefix some declared
// metric or family starts with. Consumers' tests call it on every name they use.
func (v *Vocabulary) Declared(ref string) bool {
	if strings.HasSuffix(ref, "*") || strings.HasSuffix(ref, ".") || strings.HasSuffix(ref, "_") {
		p := strings.TrimSuffix(ref, "*")
		for n := range v.byName {
			if strings.HasPrefix(n, p) || (v.byName[n].Family && strings.HasPrefix(p, n)) {
				return true
			}
		}
		return false
	}
	_, ok := v.Lookup(ref)
	return ok
}

// DeclaredBy finds a name among one collector's declarations (a member of one of its
// families included).
func (v *Vocabulary) DeclaredBy(collector, name string) (Desc, bool) {
	d, ok := v.Lookup(name)
	if !ok {
		return d, false
	}
	for _, own := range v.byCollector[collector] {
		if own.Name == name || own.Family && strings.HasPrefix(name, own.Name) {
			return d, true
		}
	}
	return d, false
}

// Metrics lists the declarations of a collector's metrics: a kind's collector's are
// its Func's; the host's are hostDeclared's.
func (c *fn) Metrics() []Desc {
	if c.metrics != nil {
		return c.metrics
	}
	return hostDeclared[c.name]
}

// MetricPart makes a server's name (a wait event, a state, a command) a part of a
// metric name: lower case, runs of other characters as one "_".
func MetricPart(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
			under = false
		} else if !under && b.Len() > 0 {
			b.WriteByte('_')
			under = true
		}
	}
	return strings.TrimRight(b.String(), "_")
}
