package collect

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/prometheus/procfs"
	"github.com/prometheus/procfs/blockdevice"
)

// OS collectors read /proc through prometheus/procfs (and /proc/vmstat, which procfs
// does not parse, directly). Counters that are times are scaled so that their rate
// reads as a percentage: CPU as a share of all CPUs, disk busy time as utilisation,
// pressure stall time as the share of wall time stalled.

// pageSize is the kernel's page size, for /proc/vmstat page counts.
var pageSize = float64(os.Getpagesize())

func newOSMeminfo() Collector {
	return &fn{
		name: "os_meminfo",
		help: "/proc/meminfo: Dirty and Writeback (pages waiting for and under writeback), free, available, cached memory",
		collect: func(ctx context.Context, s *Scrape) error {
			mi, err := s.FS.Meminfo()
			if err != nil {
				return err
			}
			kb := func(name string, p *uint64) {
				if p != nil {
					s.Gauge("os.mem."+name, "bytes", float64(*p)*1024)
				}
			}
			kb("dirty_bytes", mi.Dirty)
			kb("writeback_bytes", mi.Writeback)
			kb("free_bytes", mi.MemFree)
			kb("available_bytes", mi.MemAvailable)
			kb("cached_bytes", mi.Cached)
			kb("buffers_bytes", mi.Buffers)
			kb("total_bytes", mi.MemTotal)
			kb("shmem_bytes", mi.Shmem)
			if mi.SwapTotal != nil && mi.SwapFree != nil {
				s.Gauge("os.mem.swap_used_bytes", "bytes", float64(*mi.SwapTotal-*mi.SwapFree)*1024)
			}
			return nil
		},
	}
}

// readVMStat parses /proc/vmstat (name value per line).
func readVMStat(path string) (map[string]float64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	out := make(map[string]float64, 200)
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), " ")
		if !ok {
			continue
		}
		if f, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err == nil {
			out[k] = f
		}
	}
	return out, sc.Err()
}

func newOSVMStat() Collector {
	scrapes := 0
	return &fn{
		name: "os_vmstat",
		help: "/proc/vmstat: dirty and writeback pages against the kernel's dirty thresholds, pages dirtied and written, paging, reclaim stalls; vm.dirty_* settings",
		collect: func(ctx context.Context, s *Scrape) error {
			vm, err := readVMStat("/proc/vmstat")
			if err != nil {
				return err
			}
			pagesGauge := func(key, name string) {
				if v, ok := vm[key]; ok {
					s.Gauge("os.vm."+name, "bytes", v*pageSize)
				}
			}
			pagesGauge("nr_dirty", "dirty_bytes")
			pagesGauge("nr_writeback", "writeback_bytes")
			pagesGauge("nr_dirty_threshold", "dirty_threshold_bytes")
			pagesGauge("nr_dirty_background_threshold", "dirty_background_threshold_bytes")
			if th := vm["nr_dirty_background_threshold"]; th > 0 {
				s.Gauge("os.vm.dirty_background_threshold_pct", "%", (vm["nr_dirty"]+vm["nr_writeback"])/th*100)
			}
			if th := vm["nr_dirty_threshold"]; th > 0 {
				s.Gauge("os.vm.dirty_threshold_pct", "%", (vm["nr_dirty"]+vm["nr_writeback"])/th*100)
			}
			counter := func(key, name, unit string, scale float64) {
				if v, ok := vm[key]; ok {
					s.Counter("os.vm."+name, unit, v*scale)
				}
			}
			counter("nr_dirtied", "dirtied_bytes", "bytes", pageSize)
			counter("nr_written", "written_bytes", "bytes", pageSize)
			counter("pgpgin", "pgpgin_bytes", "bytes", 1024)
			counter("pgpgout", "pgpgout_bytes", "bytes", 1024)
			counter("pswpin", "swap_in_pages", "pages", 1)
			counter("pswpout", "swap_out_pages", "pages", 1)
			counter("pgmajfault", "major_faults", "faults", 1)
			var stalls, scanned, stolen float64
			var haveStall bool
			for k, v := range vm {
				switch {
				case strings.HasPrefix(k, "allocstall"):
					stalls += v
					haveStall = true
				case strings.HasPrefix(k, "pgscan_"):
					scanned += v
				case strings.HasPrefix(k, "pgsteal_"):
					stolen += v
				}
			}
			if haveStall {
				s.Counter("os.vm.alloc_stalls", "stalls", stalls)
			}
			s.Counter("os.vm.pages_scanned", "pages", scanned)
			s.Counter("os.vm.pages_reclaimed", "pages", stolen)
			// The writeback settings, so that a change during a run shows: six files
			// (procfs's VM() would read all of /proc/sys/vm), every tenth scrape.
			scrapes++
			if scrapes%10 != 1 {
				return nil
			}
			for _, set := range [][2]string{{"dirty_ratio", "dirty_ratio"}, {"dirty_background_ratio", "dirty_background_ratio"},
				{"dirty_bytes", "dirty_bytes_setting"}, {"dirty_background_bytes", "dirty_background_bytes_setting"},
				{"dirty_expire_centisecs", "dirty_expire_centisecs"}, {"dirty_writeback_centisecs", "dirty_writeback_centisecs"}} {
				if v, err := s.FS.SysctlInts("vm." + set[0]); err == nil && len(v) == 1 {
					s.Gauge("os.vm."+set[1], "", float64(v[0]))
				}
			}
			return nil
		},
	}
}

func newOSCPU() Collector {
	return &fn{
		name: "os_cpu",
		help: "/proc/stat: CPU user, system, iowait, steal, idle as % of all CPUs; runnable and blocked tasks; context switches",
		collect: func(ctx context.Context, s *Scrape) error {
			st, err := s.FS.Stat()
			if err != nil {
				return err
			}
			n := float64(len(st.CPU))
			if n == 0 {
				n = float64(runtime.NumCPU())
			}
			// CPU seconds ×100/CPUs: the rate is the percentage of all CPUs.
			pct := func(name string, sec float64) { s.Counter("os.cpu."+name+"_pct", "%", sec*100/n) }
			c := st.CPUTotal
			pct("user", c.User+c.Nice)
			pct("system", c.System)
			pct("iowait", c.Iowait)
			pct("irq", c.IRQ+c.SoftIRQ)
			pct("steal", c.Steal)
			pct("idle", c.Idle)
			s.Gauge("os.cpus", "cpus", n)
			s.Gauge("os.procs_running", "tasks", float64(st.ProcessesRunning))
			s.Gauge("os.procs_blocked", "tasks", float64(st.ProcessesBlocked))
			s.Counter("os.context_switches", "switches", float64(st.ContextSwitches))
			s.Counter("os.interrupts", "interrupts", float64(st.IRQTotal))
			if la, err := s.FS.LoadAvg(); err == nil {
				s.Gauge("os.load1", "tasks", la.Load1)
			}
			return nil
		},
	}
}

// diskCollector sums /proc/diskstats over the server's devices and derives await,
// queue depth and request sizes from the rates.
type diskCollector struct {
	fn
	bfs blockdevice.FS
	ok  bool
}

func newOSDisk() Collector {
	d := &diskCollector{}
	d.name = "os_disk"
	d.help = "/proc/diskstats for the device holding the data directory: IOPS, throughput, await, utilisation, queue, flushes"
	d.collect = d.scrape
	return d
}

func (d *diskCollector) scrape(ctx context.Context, s *Scrape) error {
	if !d.ok {
		bfs, err := blockdevice.NewDefaultFS()
		if err != nil {
			return err
		}
		d.bfs, d.ok = bfs, true
	}
	if s.Server == nil || len(s.Server.Devices) == 0 {
		return fmt.Errorf("no block device found (no /sys/block?)")
	}
	stats, err := d.bfs.ProcDiskstats()
	if err != nil {
		return err
	}
	want := map[string]bool{}
	for _, dev := range s.Server.Devices {
		want[dev] = true
	}
	var sum blockdevice.IOStats
	found := 0
	for _, ds := range stats {
		if !want[ds.DeviceName] {
			continue
		}
		found++
		io := ds.IOStats
		sum.ReadIOs += io.ReadIOs
		sum.WriteIOs += io.WriteIOs
		sum.ReadSectors += io.ReadSectors
		sum.WriteSectors += io.WriteSectors
		sum.ReadTicks += io.ReadTicks
		sum.WriteTicks += io.WriteTicks
		sum.ReadMerges += io.ReadMerges
		sum.WriteMerges += io.WriteMerges
		sum.IOsInProgress += io.IOsInProgress
		sum.IOsTotalTicks += io.IOsTotalTicks
		sum.WeightedIOTicks += io.WeightedIOTicks
		sum.FlushRequestsCompleted += io.FlushRequestsCompleted
		sum.TimeSpentFlushing += io.TimeSpentFlushing
		sum.DiscardIOs += io.DiscardIOs
	}
	if found == 0 {
		return fmt.Errorf("devices %s not in /proc/diskstats", strings.Join(s.Server.Devices, ", "))
	}
	s.Counter("os.disk.reads", "ops", float64(sum.ReadIOs))
	s.Counter("os.disk.writes", "ops", float64(sum.WriteIOs))
	s.Counter("os.disk.read_bytes", "bytes", float64(sum.ReadSectors)*512)
	s.Counter("os.disk.write_bytes", "bytes", float64(sum.WriteSectors)*512)
	s.Counter("os.disk.read_time_ms", "ms", float64(sum.ReadTicks))
	s.Counter("os.disk.write_time_ms", "ms", float64(sum.WriteTicks))
	s.Counter("os.disk.merged", "ops", float64(sum.ReadMerges+sum.WriteMerges))
	// Busy milliseconds /10: the rate is the utilisation in percent (of one device).
	s.Counter("os.disk.util_pct", "%", float64(sum.IOsTotalTicks)/10/float64(found))
	s.Counter("os.disk.weighted_time_ms", "ms", float64(sum.WeightedIOTicks))
	s.Counter("os.disk.flushes", "ops", float64(sum.FlushRequestsCompleted))
	s.Counter("os.disk.flush_time_ms", "ms", float64(sum.TimeSpentFlushing))
	s.Counter("os.disk.discards", "ops", float64(sum.DiscardIOs))
	s.Gauge("os.disk.in_flight", "ops", float64(sum.IOsInProgress))
	return nil
}

// Derive computes iostat's await (ms per completed I/O, reads and writes), the
// average queue depth and the average write size.
func (d *diskCollector) Derive(rate func(string) (float64, bool), add func(name, unit string, v float64)) {
	r, okR := rate("os.disk.reads")
	w, okW := rate("os.disk.writes")
	rt, okRT := rate("os.disk.read_time_ms")
	wt, okWT := rate("os.disk.write_time_ms")
	if okR && okW && okRT && okWT {
		await := 0.0
		if r+w > 0 {
			await = (rt + wt) / (r + w)
		}
		add("os.disk.await_ms", "ms", await)
		rAwait, wAwait := 0.0, 0.0
		if r > 0 {
			rAwait = rt / r
		}
		if w > 0 {
			wAwait = wt / w
		}
		add("os.disk.r_await_ms", "ms", rAwait)
		add("os.disk.w_await_ms", "ms", wAwait)
	}
	if q, ok := rate("os.disk.weighted_time_ms"); ok {
		add("os.disk.queue_depth", "requests", q/1000)
	}
	if wb, ok := rate("os.disk.write_bytes"); ok && okW {
		size := 0.0
		if w > 0 {
			size = wb / w
		}
		add("os.disk.write_size_bytes", "bytes", size)
	}
}

func newOSPressure() Collector {
	return &fn{
		name: "os_pressure",
		help: "/proc/pressure (PSI): share of time tasks stalled on I/O, memory and CPU",
		collect: func(ctx context.Context, s *Scrape) error {
			var errs []string
			for _, res := range []string{"io", "memory", "cpu"} {
				p, err := s.FS.PSIStatsForResource(res)
				if err != nil {
					errs = append(errs, err.Error())
					continue
				}
				// Stall microseconds /10⁴: the rate is the percentage of time stalled.
				if p.Some != nil {
					s.Counter("os.pressure."+res+"_some_pct", "%", float64(p.Some.Total)/1e4)
				}
				if p.Full != nil && res != "cpu" {
					s.Counter("os.pressure."+res+"_full_pct", "%", float64(p.Full.Total)/1e4)
				}
			}
			if len(errs) == 3 {
				return fmt.Errorf("no pressure stall information (kernel without PSI?): %s", errs[0])
			}
			return nil
		},
	}
}

// processCollector reads the server's processes (the postmaster and its children, or
// mysqld) and fathom's own: CPU as % of one core, like top, memory and I/O.
type processCollector struct{ fn }

func newOSProcess() Collector {
	p := &processCollector{}
	p.name = "os_process"
	p.help = "the server's processes (CPU % of one core, resident memory, disk I/O) when they run on this host, and fathom's own CPU"
	p.collect = p.scrape
	return p
}

var clockTicks = 100.0 // USER_HZ: 100 on every Linux platform Go supports

func (p *processCollector) scrape(ctx context.Context, s *Scrape) error {
	if self, err := s.FS.Self(); err == nil {
		if st, err := self.Stat(); err == nil {
			s.Counter("os.fathom.cpu_pct", "%", float64(st.UTime+st.STime)/clockTicks*100)
		}
	}
	if s.Server == nil || !s.Server.Local || s.Server.PID <= 0 {
		return nil
	}
	procs, err := serverProcs(s.FS, s.Server.PID, s.Server.Children)
	if err != nil {
		return fmt.Errorf("server process %d: %w", s.Server.PID, err)
	}
	var ticks, private, shared, threads, rd, wr float64
	ioOK := true
	for _, pr := range procs {
		st, err := pr.Stat()
		if err != nil {
			continue // exited meanwhile
		}
		ticks += float64(st.UTime + st.STime)
		threads += float64(st.NumThreads)
		// statm is far cheaper for the kernel to produce than status.
		if sm, err := pr.Statm(); err == nil {
			private += float64(sm.Resident-min(sm.Shared, sm.Resident)) * pageSize
			if sh := float64(sm.Shared) * pageSize; sh > shared {
				shared = sh
			}
		}
		if io, err := pr.IO(); err == nil {
			rd += float64(io.ReadBytes)
			wr += float64(io.WriteBytes)
		} else {
			ioOK = false
		}
	}
	s.Counter("os.server.cpu_pct", "%", ticks/clockTicks*100)
	s.Gauge("os.server.processes", "processes", float64(len(procs)))
	s.Gauge("os.server.threads", "threads", threads)
	// Private memory summed, shared memory (shared_buffers, code) counted once.
	s.Gauge("os.server.memory_bytes", "bytes", private+shared)
	s.Gauge("os.server.private_memory_bytes", "bytes", private)
	if ioOK {
		s.Counter("os.server.read_bytes", "bytes", rd)
		s.Counter("os.server.write_bytes", "bytes", wr)
	}
	return nil
}

// serverProcs returns the main process and, when the server works in child
// processes (PostgreSQL), its children.
func serverProcs(fs procfs.FS, pid int, children bool) ([]procfs.Proc, error) {
	main, err := fs.Proc(pid)
	if err != nil {
		return nil, err
	}
	out := []procfs.Proc{main}
	if !children {
		return out, nil
	}
	// /proc/PID/task/PID/children is cheap where the kernel has it.
	if b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "task", strconv.Itoa(pid), "children")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				if pr, err := fs.Proc(c); err == nil {
					out = append(out, pr)
				}
			}
		}
		return out, nil
	}
	all, err := fs.AllProcs()
	if err != nil {
		return out, nil
	}
	for _, pr := range all {
		if st, err := pr.Stat(); err == nil && st.PPID == pid {
			out = append(out, pr)
		}
	}
	return out, nil
}
