package collect

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// Note adds a note about what could not be learnt to s.
func Note(s *sample.Server, format string, args ...any) {
	s.Notes = append(s.Notes, fmt.Sprintf(format, args...))
}

// vmSettings are the writeback settings read from /proc/sys/vm.
var vmSettings = []string{"dirty_ratio", "dirty_background_ratio", "dirty_bytes", "dirty_background_bytes",
	"dirty_expire_centisecs", "dirty_writeback_centisecs", "swappiness"}

// Discover learns about the server over conn (which may be nil when the server cannot
// be reached: then only the OS side is filled in). It never fails: what cannot be
// learnt is left empty and noted.
func Discover(ctx context.Context, k Database, conn target.Conn, dsn string) *sample.Server {
	return discover(ctx, k, conn, dsn, true)
}

// discover is Discover, on the portable path without /proc when useProcfs is false.
func discover(ctx context.Context, k Database, conn target.Conn, dsn string, useProcfs bool) *sample.Server {
	s := &sample.Server{Kind: kindName(k), Settings: map[string]string{}}
	fs, fsErr := openProcfs(useProcfs)
	if k != nil {
		k.Discover(ctx, s, conn, dsn, fs, fsErr == nil)
	}
	if conn == nil && k != nil && !embedded(k) {
		Note(s, "server not reached: server collectors will fail until it is")
	}
	if errors.Is(fsErr, errors.ErrUnsupported) {
		s.OSMetrics = OSMetricsUnsupported
		Note(s, "OS metrics %v", fsErr)
		return s
	}
	if fsErr != nil {
		Note(s, "no /proc: OS collectors are off (%v)", fsErr)
		return s
	}
	s.OSMetrics = OSMetricsProcfs
	for _, k := range vmSettings {
		if b, err := os.ReadFile("/proc/sys/vm/" + k); err == nil {
			s.Settings["vm."+k] = strings.TrimSpace(string(b))
		}
	}
	findDevices(s)
	return s
}

// ErrOr is err's text, or s when err is nil.
func ErrOr(err error, s string) string {
	if err != nil {
		return err.Error()
	}
	return s
}

// findDevices picks the block devices for the disk collector: the device holding the
// data directory when it is known and visible, every disk otherwise.
func findDevices(s *sample.Server) {
	if s.Local && s.DataDir != "" {
		if maj, min, err := deviceOf(s.DataDir); err == nil {
			if name := deviceName(maj, min); name != "" {
				s.Devices, s.DiskScope = []string{name}, "data directory"
				return
			}
			Note(s, "data directory %s is on device %d:%d, which has no disk statistics (tmpfs, overlay or a network filesystem?): summing all disks", s.DataDir, maj, min)
		} else {
			Note(s, "data directory %s: %v: summing all disks", s.DataDir, err)
		}
	}
	s.Devices, s.DiskScope = wholeDisks(), "all disks"
}

func devMajor(dev uint64) uint32 { return uint32((dev>>8)&0xfff) | uint32((dev>>32)&^0xfff) }
func devMinor(dev uint64) uint32 { return uint32(dev&0xff) | uint32((dev>>12)&^0xff) }

// deviceName finds the /proc/diskstats name of a major:minor device.
func deviceName(maj, min uint32) string {
	b, err := os.ReadFile("/proc/diskstats")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		if f[0] == strconv.Itoa(int(maj)) && f[1] == strconv.Itoa(int(min)) {
			return f[2]
		}
	}
	return ""
}

// wholeDisks lists the disks in /sys/block, leaving out loop, ram, zram, device
// mapper and md devices (which would count the same I/O twice).
func wholeDisks() []string {
	ents, err := os.ReadDir("/sys/block")
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasPrefix(n, "loop") || strings.HasPrefix(n, "ram") || strings.HasPrefix(n, "zram") ||
			strings.HasPrefix(n, "dm-") || strings.HasPrefix(n, "md") || strings.HasPrefix(n, "sr") || strings.HasPrefix(n, "fd") {
			continue
		}
		out = append(out, n)
	}
	return out
}
