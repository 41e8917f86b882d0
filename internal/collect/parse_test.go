package collect

import (
	"strings"
	"testing"
)

const innodbStatus = `
=====================================
2026-11-23 05:25:22 0x7f3c INNODB MONITOR OUTPUT
=====================================
------------
TRANSACTIONS
------------
Trx id counter 1234
Purge done for trx's n:o < 1200 undo n:o < 0 state: running
History list length 42
---TRANSACTION 1233, ACTIVE 3 sec starting index read
mysql tables in use 1, locked 1
LOCK WAIT 2 lock struct(s), heap size 1128, 1 row lock(s)
--------
FILE I/O
--------
Pending flushes (fsync) log: 1; buffer pool: 3
---
LOG
---
Log sequence number 1000000
Log flushed up to   999000
Pages flushed up to 900000
Last checkpoint at  800000
----------------------
BUFFER POOL AND MEMORY
----------------------
Modified db pages  517
Pending writes: LRU 0, flush list 12
`

func TestParseInnoDBStatus(t *testing.T) {
	st := ParseInnoDBStatus(innodbStatus)
	want := InnoDBStatus{LSN: 1000000, Flushed: 999000, Checkpoint: 800000, HistoryListLength: 42, PendingLogFlushes: 1,
		PendingPoolFlushes: 3, PendingFsyncs: 4, PendingFlush: 12, ModifiedPages: 517, LockWaits: 1, HasLSN: true, HasHistory: true, HasPW: true,
		HasFsyncs: true, HasFsyncSplit: true}
	if st != want {
		t.Errorf("got %+v\nwant %+v", st, want)
	}
	if st := ParseInnoDBStatus("nothing here"); st.HasLSN || st.HasHistory {
		t.Errorf("empty text: %+v", st)
	}
	// MySQL 8 prints pending AIO per I/O thread and single-page writes; MariaDB 10.5+
	// prints one total of pending fsyncs.
	mysql8 := "Pending normal aio reads: [0, 1, 2, 0] , aio writes: [2, 0, 0, 0] ,\n" +
		"Pending flushes (fsync) log: 1; buffer pool: 4\nPending reads      7\nPending writes: LRU 1, flush list 2, single page 3\n"
	if st := ParseInnoDBStatus(mysql8); st.PendingAIOReads != 3 || st.PendingAIOWrites != 2 || !st.HasAIO ||
		st.PendingFsyncs != 5 || st.PendingReads != 7 || !st.HasReads || st.PendingSinglePage != 3 {
		t.Errorf("MySQL 8 pending I/O: %+v", st)
	}
	if st := ParseInnoDBStatus("Pending flushes (fsync): 2\nPending normal aio reads: 5, aio writes: 6\n"); st.PendingFsyncs != 2 || !st.HasFsyncs || st.HasFsyncSplit ||
		st.PendingAIOReads != 5 || st.PendingAIOWrites != 6 {
		t.Errorf("MariaDB pending fsyncs, single AIO counts: %+v", st)
	}
	// Without a checkpoint line there is no age.
	if st := ParseInnoDBStatus("Log sequence number 5\n"); st.HasLSN {
		t.Errorf("LSN without checkpoint: %+v", st)
	}
}

func FuzzParseInnoDBStatus(f *testing.F) {
	f.Add(innodbStatus)
	f.Add("Log sequence number 99999999999999999999999\nLast checkpoint at -1\n")
	f.Fuzz(func(t *testing.T, s string) {
		ParseInnoDBStatus(s)
	})
}

func TestRedactText(t *testing.T) {
	cases := map[string]string{
		"postgres://app:hunter22@db/x":                                     "hunter22",
		"host=db password=hunter22 dbname=x":                               "hunter22",
		"CREATE USER 'a'@'%' IDENTIFIED BY 'hunter22'":                     "hunter22",
		"ALTER USER a IDENTIFIED WITH mysql_native_password BY 'hunter22'": "hunter22",
		"ALTER ROLE app PASSWORD 'hunter22'":                               "hunter22",
		"CHANGE MASTER TO MASTER_PASSWORD='hunter22', MASTER_HOST='h'":     "hunter22",
		"primary_conninfo\tuser=rep password=hunter22 host=p":              "hunter22",
		"a line with the secret hunter22 in it":                            "hunter22",
	}
	for in, secret := range cases {
		out := RedactText(in, []string{"hunter22"})
		if strings.Contains(out, secret) {
			t.Errorf("RedactText(%q) = %q: the password is still there", in, out)
		}
		if !strings.Contains(out, "xxxxx") {
			t.Errorf("RedactText(%q) = %q: nothing masked", in, out)
		}
	}
	// Without the secret given, the patterns alone still mask.
	for in := range cases {
		if strings.HasPrefix(in, "a line") {
			continue
		}
		if out := RedactText(in, nil); strings.Contains(out, "hunter22") {
			t.Errorf("RedactText(%q, no secrets) = %q", in, out)
		}
	}
}

func FuzzRedactText(f *testing.F) {
	f.Add("IDENTIFIED BY 'x'", "x")
	f.Add("postgres://u:p@h/d", "p")
	f.Fuzz(func(t *testing.T, s, secret string) {
		out := RedactText(s, []string{secret})
		if len(secret) >= 3 && !strings.Contains(secret, "x") && strings.Contains(out, secret) && !strings.Contains("xxxxx", secret) {
			t.Errorf("secret %q survives in %q", secret, out)
		}
	})
}
