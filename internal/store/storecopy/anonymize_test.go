package storecopy

import (
	"strings"
	"testing"
)

// What free text keeps and loses: identifiers go, the rest (flags, numbers, units,
// metric names, file names) stays, and a value gets one pseudonym wherever it stands.
func TestScrubText(t *testing.T) {
	a := newAnonymizer([]byte("0123456789abcdef"), false)
	a.pseudo("host", "db-prod-7.corp.example")
	cases := []struct {
		in         string
		gone, kept []string
	}{
		{"fathom run --target postgres://alice:xxxxx@10.20.30.40:6543/evc_pg?sslmode=require -c 8 -T 60s -P 5s", []string{"alice", "10.20.30.40", "6543", "evc_pg"}, []string{"-c 8 -T 60s -P 5s", "sslmode=require", "postgres://"}},
		{"host=db-prod-7 port=5433 dbname=orders user=svc_app password=hunter2", []string{"db-prod-7", "5433", "orders", "svc_app", "hunter2"}, []string{"host=", "dbname="}},
		{"psql -h db-prod-7.corp.example -U carol -d ledger -c 'checkpoint'", []string{"db-prod-7", "carol", "ledger"}, []string{"-c 'checkpoint'"}},
		{"pg_ctl -D /var/lib/postgresql/15/main restart; ssh ops@10.1.2.3 uptime", []string{"/var/lib/postgresql", "ops@", "10.1.2.3"}, []string{"pg_ctl -D ", "restart; ssh", "uptime"}},
		{"curl -u admin:s3cret https://grafana.corp.example/api/x", []string{"s3cret", "grafana.corp.example", "admin:"}, []string{"curl -u"}},
		{"server fe80::1ff:fe23:4567:890a and mac 00:1a:2b:3c:4d:5e, uuid 6f1c2b4e-9d1a-4c4b-8f3e-2a1b3c4d5e6f", []string{"fe80::1ff", "00:1a:2b", "6f1c2b4e"}, []string{"server", "and mac"}},
		{"process 48213 is gone; db-prod-7 answered; 12:30:45; 2.5 MB/s; os.disk.writes; plan.yaml", []string{"48213", "db-prod-7"}, []string{"12:30:45", "2.5 MB/s", "os.disk.writes", "plan.yaml"}},
		{"write to sqlite:/home/dave/results.db failed", []string{"dave", "results.db"}, []string{"write to sqlite:", "failed"}},
	}
	for _, c := range cases {
		got := a.text(c.in)
		for _, g := range c.gone {
			if strings.Contains(got, g) {
				t.Errorf("%q\n -> %q keeps %q", c.in, got, g)
			}
		}
		for _, k := range c.kept {
			if !strings.Contains(got, k) {
				t.Errorf("%q\n -> %q lost %q", c.in, got, k)
			}
		}
		if again := a.text(got); again != got {
			t.Errorf("scrubbing twice changes %q to %q", got, again)
		}
		t.Logf("%s\n    %s", c.in, got)
	}
	if x, y := a.text("db-prod-7"), a.text("DB-PROD-7"); x != y || x == "db-prod-7" {
		t.Errorf("one host, two pseudonyms: %q %q", x, y)
	}
}
