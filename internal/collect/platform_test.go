package collect_test

import (
	"context"
	"errors"
	"github.com/fathom-lab/fathom/internal/collect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/db/sqlite/target"
	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/target"
)

// TestPortableHostFacts: without /proc (every system but Linux, or forced) the host
// facts are what Go's runtime knows, and nothing is made up for the rest.
func TestPortableHostFacts(t *testing.T) {
	h := collect.HostFactsOf(false)
	if h.OS != runtime.GOOS+"/"+runtime.GOARCH || h.CPUs != runtime.NumCPU() || h.GoVersion != runtime.Version() || h.Hostname == "" {
		t.Errorf("portable host facts: %+v", h)
	}
	if h.CPUModel != "" || h.MemoryBytes != 0 || h.Kernel != "" {
		t.Errorf("portable host facts read /proc: %+v", h)
	}
	if collect.OSMetrics(true) != collect.OSMetricsUnsupported {
		t.Errorf("OSMetrics(forced portable) = %q", collect.OSMetrics(true))
	}
	if runtime.GOOS != "linux" {
		return
	}
	if h := collect.HostFacts(); h.MemoryBytes == 0 || h.Kernel == "" {
		t.Errorf("host facts on Linux lack /proc's: %+v", h)
	}
	if collect.OSMetrics(false) != collect.OSMetricsProcfs {
		t.Errorf("OSMetrics on Linux = %q", collect.OSMetrics(false))
	}
}

// TestPortableSampler: on the portable path every OS collector reports itself skipped
// as unsupported (not failed), no OS reading is made up, the server side goes on,
// and what the sampler learnt says why. On Linux the same sampler reads /proc.
func TestPortableSampler(t *testing.T) {
	dsn := "sqlite:" + t.TempDir() + "/p.db"
	tg, err := sqlite.Open(dsn, target.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer tg.Close()
	for _, noProcfs := range []bool{true, false} {
		if !noProcfs && runtime.GOOS != "linux" {
			continue
		}
		smp := collect.NewSampler(tg, collect.Options{Kind: dbOf(tg), DSN: dsn, NoProcfs: noProcfs, Timeout: 10 * time.Second})
		srv := smp.Start(context.Background())
		s := smp.Sample(context.Background(), 0, time.Now())
		smp.Close()
		hosts := 0
		for _, r := range s.Results {
			if r.Source != "os" {
				continue
			}
			hosts++
			switch {
			case noProcfs && (r.Status != sample.StatusSkipped || !strings.HasPrefix(r.Error, "unsupported")):
				t.Errorf("portable: %s: %s %q, want skipped as unsupported", r.Collector, r.Status, r.Error)
			case !noProcfs && r.Collector == "os_meminfo" && r.Status != sample.StatusOK:
				t.Errorf("procfs: os_meminfo: %s %q", r.Status, r.Error)
			}
		}
		if hosts != len(collect.HostCollectors()) {
			t.Errorf("noProcfs %v: %d OS results, want one per OS collector (%d)", noProcfs, hosts, len(collect.HostCollectors()))
		}
		osReadings := 0
		for _, r := range s.Readings {
			if strings.HasPrefix(r.Name, "os.") {
				osReadings++
			}
		}
		noted := strings.Contains(strings.Join(srv.Notes, "\n"), "OS metrics unsupported")
		if want := collect.OSMetrics(noProcfs); srv.OSMetrics != want {
			t.Errorf("noProcfs %v: Server.OSMetrics %q, want %q", noProcfs, srv.OSMetrics, want)
		}
		if noProcfs && (osReadings != 0 || !noted || len(srv.Devices) != 0) {
			t.Errorf("portable: %d OS readings, devices %v, notes %q", osReadings, srv.Devices, srv.Notes)
		}
		if !noProcfs && (osReadings == 0 || noted) {
			t.Errorf("procfs: %d OS readings, notes %q", osReadings, srv.Notes)
		}
	}
	if _, err := collect.OpenProcfs(false); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("collect.OpenProcfs(false) = %v, want errors.ErrUnsupported", err)
	}
}
