package collect

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/procfs"
)

// OS and hardware sources of a snapshot, and the SQLite "server".

func (s *Snap) ExistsText(path string) string {
	if !s.srv.Local || path == "" {
		return ""
	}
	if strings.HasPrefix(path, "~/") {
		if h, err := os.UserHomeDir(); err == nil {
			path = filepath.Join(h, path[2:])
		}
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return "  (directory here)"
	case err == nil:
		return fmt.Sprintf("  (here, %s)", SizeText(st.Size()))
	case os.IsPermission(err):
		return "  (here, not readable by fathom)"
	}
	return "  (not here)"
}

func (s *Snap) DiskText() string {
	if !s.srv.Local || len(s.srv.Devices) == 0 {
		return ""
	}
	return fmt.Sprintf(" on %s (%s)", strings.Join(s.srv.Devices, "+"), s.srv.DiskScope)
}

func readCmdline(pid int) (string, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(strings.ReplaceAll(string(b), "\x00", " ")), nil
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// host writes the OS and hardware facts of this machine.
// hostMemory writes the memory row and returns the total, available, dirty and
// writeback bytes (0 when /proc/meminfo cannot be read).
func hostMemory(fs procfs.FS, row func(k, format string, args ...any)) (total, avail, dirty, wb uint64) {
	mi, err := fs.Meminfo()
	if err != nil {
		return 0, 0, 0, 0
	}
	get := func(p *uint64) uint64 {
		if p == nil {
			return 0
		}
		return *p * 1024
	}
	total, avail, dirty, wb = get(mi.MemTotal), get(mi.MemAvailable), get(mi.Dirty), get(mi.Writeback)
	row("memory", "%s total, %s available, %s dirty, %s under writeback, swap %s of %s used", SizeText(int64(total)), SizeText(int64(avail)),
		SizeText(int64(dirty)), SizeText(int64(wb)), SizeText(int64(get(mi.SwapTotal)-get(mi.SwapFree))), SizeText(int64(get(mi.SwapTotal))))
	return total, avail, dirty, wb
}

// dataDirMount writes the row and the fact for the filesystem the data directory is on
// (the longest mount point that holds it), when the mounts can be read.
func (s *Snap) dataDirMount(fs procfs.FS, row func(k, format string, args ...any)) {
	mounts, err := fs.GetMounts()
	if err != nil {
		return
	}
	best := (*procfs.MountInfo)(nil)
	for _, m := range mounts {
		if strings.HasPrefix(s.srv.DataDir+"/", strings.TrimSuffix(m.MountPoint, "/")+"/") && (best == nil || len(m.MountPoint) > len(best.MountPoint)) {
			best = m
		}
	}
	if best == nil {
		return
	}
	var opts []string
	for k, v := range best.Options {
		if v != "" {
			k += "=" + v
		}
		opts = append(opts, k)
	}
	sort.Strings(opts)
	row("data directory filesystem", "%s on %s (%s, %s)", best.MountPoint, best.Source, best.FSType, strings.Join(opts, ","))
	s.Fact("Host", "Filesystem", "%s %s on %s", best.FSType, best.MountPoint, best.Source)
}

func (s *Snap) host() {
	s.Source("os", func() error {
		fs, err := openProcfs(true)
		if err != nil {
			return err
		}
		h := HostFacts()
		var b bytes.Buffer
		row := func(k, format string, args ...any) {
			fmt.Fprintf(&b, "%-28s %s\n", k+":", fmt.Sprintf(format, args...))
		}
		row("hostname", "%s", h.Hostname)
		row("os", "%s, kernel %s", h.OS, h.Kernel)
		row("cpu", "%d × %s", h.CPUs, h.CPUModel)
		if la, err := fs.LoadAvg(); err == nil {
			row("load average", "%.2f %.2f %.2f", la.Load1, la.Load5, la.Load15)
		}
		if up := readTrim("/proc/uptime"); up != "" {
			if sec, err := strconv.ParseFloat(strings.Fields(up)[0], 64); err == nil {
				row("up", "%s", (time.Duration(sec) * time.Second).String())
			}
		}
		total, avail, dirty, wb := hostMemory(fs, row)
		vmKeys := []string{"dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes", "dirty_expire_centisecs",
			"dirty_writeback_centisecs", "swappiness", "overcommit_memory", "overcommit_ratio", "zone_reclaim_mode", "min_free_kbytes"}
		for _, k := range vmKeys {
			row("vm."+k, "%s", readTrim("/proc/sys/vm/"+k))
		}
		row("transparent hugepages", "enabled %s, defrag %s", readTrim("/sys/kernel/mm/transparent_hugepage/enabled"), readTrim("/sys/kernel/mm/transparent_hugepage/defrag"))
		row("numa nodes", "%d", countGlob("/sys/devices/system/node/node*"))
		row("cpu governor", "%s", OrUnknown(readTrim("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")))
		if s.srv.DataDir != "" && s.srv.Local {
			s.dataDirMount(fs, row)
		}
		for _, d := range s.srv.Devices {
			q := "/sys/block/" + d + "/queue/"
			row("disk "+d, "rotational %s, scheduler %s, read-ahead %s kB, size %s", readTrim(q+"rotational"), readTrim(q+"scheduler"),
				readTrim(q+"read_ahead_kb"), sectorsText(readTrim("/sys/block/"+d+"/size")))
		}
		s.Add("os.txt", "OS and hardware: CPU, memory, vm.* writeback settings, transparent hugepages, filesystem and disk of the data directory", b.Bytes())
		s.Fact("Host", "Machine", "%s, %d × %s, %s RAM (%s available)", h.Hostname, h.CPUs, h.CPUModel, SizeText(int64(total)), SizeText(int64(avail)))
		s.Fact("Host", "Kernel", "%s", h.Kernel)
		s.Fact("Host", "Writeback", "vm.dirty_background_ratio %s (bytes %s), vm.dirty_ratio %s (bytes %s), now %s dirty, %s writeback",
			readTrim("/proc/sys/vm/dirty_background_ratio"), readTrim("/proc/sys/vm/dirty_background_bytes"),
			readTrim("/proc/sys/vm/dirty_ratio"), readTrim("/proc/sys/vm/dirty_bytes"), SizeText(int64(dirty)), SizeText(int64(wb)))
		s.Fact("Host", "THP", "%s", readTrim("/sys/kernel/mm/transparent_hugepage/enabled"))
		if b, err := os.ReadFile("/proc/meminfo"); err == nil {
			s.Add("meminfo.txt", "/proc/meminfo", b)
		}
		if b, err := os.ReadFile("/proc/diskstats"); err == nil {
			s.Add("diskstats.txt", "/proc/diskstats at the end", b)
		}
		return nil
	})
	s.Source("processes", func() error {
		fs, err := openProcfs(true)
		if err != nil {
			return err
		}
		procs, err := fs.AllProcs()
		if err != nil {
			return err
		}
		type pinfo struct {
			pid      int
			comm, st string
			cpu      float64
			rss      int
			threads  int
			server   bool
			cmdline  string
		}
		server := map[int]bool{}
		if s.srv.Local && s.srv.PID > 0 {
			server[s.srv.PID] = true
		}
		var list []pinfo
		for _, p := range procs {
			st, err := p.Stat()
			if err != nil {
				continue
			}
			pi := pinfo{pid: p.PID, comm: st.Comm, st: st.State, cpu: st.CPUTime(), rss: st.ResidentMemory(), threads: st.NumThreads,
				server: server[p.PID] || server[st.PPID]}
			if pi.server {
				pi.cmdline, _ = readCmdline(p.PID)
			}
			list = append(list, pi)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].cpu > list[j].cpu })
		var rows [][]string
		for i, p := range list {
			if i >= 20 && !p.server {
				continue
			}
			mark := ""
			if p.server {
				mark = "server"
			}
			rows = append(rows, []string{strconv.Itoa(p.pid), p.comm, p.st, fmt.Sprintf("%.1f", p.cpu), SizeText(int64(p.rss)), strconv.Itoa(p.threads), mark, p.cmdline})
		}
		s.Add("processes.txt", "the 20 processes with the most CPU time, and every server process", Aligned([]string{"pid", "command", "state", "cpu_s", "rss", "threads", "", "cmdline"}, rows))
		return nil
	})
}

func countGlob(pattern string) int {
	m, _ := filepath.Glob(pattern)
	return len(m)
}

func sectorsText(s string) string {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return "?"
	}
	return SizeText(n * 512)
}

// vmstatSampler prints vmstat-like lines from /proc/stat, /proc/vmstat and
// /proc/meminfo: rates over the time since the previous line.
type vmstatSampler struct {
	fs    procfs.FS
	fsErr error // no /proc here: every snap fails with it
	prev  *vmSnap
}

type vmSnap struct {
	at                         time.Time
	cpu                        procfs.CPUStat
	intr, ctxt                 uint64
	pgin, pgout, swin, swout   float64
	run, blocked               uint64
	free, buff, cache, swpUsed uint64
}

func newVMStatSampler() *vmstatSampler {
	fs, err := openProcfs(true)
	return &vmstatSampler{fs: fs, fsErr: err}
}

func (v *vmstatSampler) header() string {
	return fmt.Sprintf("%-8s %3s %3s %9s %9s %9s %9s %6s %6s %8s %8s %7s %7s %3s %3s %3s %3s %3s",
		"time", "r", "b", "swpd", "free", "buff", "cache", "si", "so", "bi", "bo", "in", "cs", "us", "sy", "id", "wa", "st")
}

func (v *vmstatSampler) snap() (*vmSnap, error) {
	if v.fsErr != nil {
		return nil, v.fsErr
	}
	st, err := v.fs.Stat()
	if err != nil {
		return nil, err
	}
	vm, err := readVMStat("/proc/vmstat")
	if err != nil {
		return nil, err
	}
	mi, err := v.fs.Meminfo()
	if err != nil {
		return nil, err
	}
	kb := func(p *uint64) uint64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return &vmSnap{at: time.Now(), cpu: st.CPUTotal, intr: st.IRQTotal, ctxt: st.ContextSwitches,
		pgin: vm["pgpgin"], pgout: vm["pgpgout"], swin: vm["pswpin"], swout: vm["pswpout"],
		run: st.ProcessesRunning, blocked: st.ProcessesBlocked,
		free: kb(mi.MemFree), buff: kb(mi.Buffers), cache: kb(mi.Cached), swpUsed: kb(mi.SwapTotal) - kb(mi.SwapFree)}, nil
}

func (v *vmstatSampler) sample() (string, error) {
	cur, err := v.snap()
	if err != nil {
		return "", err
	}
	prev := v.prev
	v.prev = cur
	if prev == nil {
		// The first line, like vmstat's, averages since boot: here it shows levels only.
		return fmt.Sprintf("%-8s %3d %3d %9d %9d %9d %9d %6s %6s %8s %8s %7s %7s %3s %3s %3s %3s %3s", cur.at.UTC().Format("15:04:05"),
			cur.run, cur.blocked, cur.swpUsed, cur.free, cur.buff, cur.cache, "-", "-", "-", "-", "-", "-", "-", "-", "-", "-", "-"), nil
	}
	dt := cur.at.Sub(prev.at).Seconds()
	c, p := cur.cpu, prev.cpu
	tot := (c.User + c.Nice + c.System + c.Idle + c.Iowait + c.IRQ + c.SoftIRQ + c.Steal) - (p.User + p.Nice + p.System + p.Idle + p.Iowait + p.IRQ + p.SoftIRQ + p.Steal)
	pct := func(a, b float64) int {
		if tot <= 0 {
			return 0
		}
		return int((a - b) / tot * 100)
	}
	return fmt.Sprintf("%-8s %3d %3d %9d %9d %9d %9d %6.0f %6.0f %8.0f %8.0f %7.0f %7.0f %3d %3d %3d %3d %3d", cur.at.UTC().Format("15:04:05"),
		cur.run, cur.blocked, cur.swpUsed, cur.free, cur.buff, cur.cache,
		(cur.swin-prev.swin)/dt, (cur.swout-prev.swout)/dt, (cur.pgin-prev.pgin)/dt, (cur.pgout-prev.pgout)/dt,
		float64(cur.intr-prev.intr)/dt, float64(cur.ctxt-prev.ctxt)/dt,
		pct(c.User+c.Nice, p.User+p.Nice), pct(c.System+c.IRQ+c.SoftIRQ, p.System+p.IRQ+p.SoftIRQ), pct(c.Idle, p.Idle),
		pct(c.Iowait, p.Iowait), pct(c.Steal, p.Steal)), nil
}
