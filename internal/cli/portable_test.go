package cli

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/target"
)

// TestPortablePaths: FATHOM_PORTABLE=1 takes, on Linux, the paths every other system
// takes (sockets through Go's poller, no /proc), the run still measures, and the run
// records which paths it used; without it a Linux run records the blocking sockets and
// procfs. A bad value is refused before anything is measured.
func TestPortablePaths(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the default paths checked here are Linux's")
	}
	for _, tc := range cliTargets {
		t.Run(tc.name, func(t *testing.T) {
			env := storeEnv(t)
			dsn := tc.dsn(t)
			if r := fathom(t, env, nil, "prepare", "--target", dsn, "--workload", "oltp_point_select", "--table-size", "500"); r.code != 0 {
				t.Fatalf("prepare: %s", r.stderr)
			}
			for _, portable := range []string{"", "1"} {
				env["FATHOM_PORTABLE"] = portable
				r := fathom(t, env, nil, "run", "--target", dsn, "--workload", "oltp_point_select", "-c", "2", "-T", "1s", "-P", "250ms", "--json")
				if r.code != 0 {
					t.Fatalf("FATHOM_PORTABLE=%q: exit %d: %s", portable, r.code, r.stderr)
				}
				s := summary(t, r)
				if s.Transactions == 0 {
					t.Errorf("FATHOM_PORTABLE=%q: no transactions", portable)
				}
				st, err := stores.Open(env["FATHOM_STORE"])
				if err != nil {
					t.Fatal(err)
				}
				run, err := st.Run(context.Background(), s.RunID)
				if err != nil {
					t.Fatal(err)
				}
				crs, err := st.Collectors(context.Background(), s.RunID)
				st.Close()
				if err != nil {
					t.Fatal(err)
				}
				wantSock, wantOS := target.SocketsBlocking, collect.OSMetricsProcfs
				if portable == "1" {
					wantSock, wantOS = target.SocketsPoller, collect.OSMetricsUnsupported
				}
				if tc.name == "sqlite" {
					wantSock = ""
				}
				if run.Host.Sockets != wantSock || run.Host.OSMetrics != wantOS {
					t.Errorf("FATHOM_PORTABLE=%q: recorded sockets %q, OS metrics %q; want %q, %q", portable, run.Host.Sockets, run.Host.OSMetrics, wantSock, wantOS)
				}
				hostOK, hostSkipped := 0, 0
				for _, c := range crs {
					if c.Source != "os" {
						continue
					}
					hostOK += c.OK
					if c.Skipped > 0 && strings.HasPrefix(c.LastError, "unsupported") {
						hostSkipped++
					}
					if c.Failed+c.Timeouts > 0 && portable == "1" {
						t.Errorf("portable: %s failed: %s", c.Collector, c.LastError)
					}
				}
				if portable == "1" && (hostOK != 0 || hostSkipped != len(collect.HostCollectors())) {
					t.Errorf("portable: OS collectors ok %d times, %d skipped as unsupported: %+v", hostOK, hostSkipped, crs)
				}
				if portable == "" && hostOK == 0 {
					t.Errorf("procfs: no OS collector succeeded: %+v", crs)
				}
			}
		})
	}
}

func TestPortableBadValue(t *testing.T) {
	env := storeEnv(t)
	env["FATHOM_PORTABLE"] = "maybe"
	r := fathom(t, env, nil, "run", "--target", "sqlite:"+t.TempDir()+"/x.db", "--workload", "oltp_point_select", "-T", "1s")
	oneLine(t, r, exitUsage, `FATHOM_PORTABLE="maybe": use 1`)
}
