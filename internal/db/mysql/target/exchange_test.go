package mysql

import (
	"context"
	"runtime/debug"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

// moduleVersion is the version of module path linked into the test binary.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil {
					return m.Replace.Path + " " + m.Replace.Version
				}
				return m.Path + " " + m.Version
			}
		}
	}
	return path + " (version unknown)"
}

// TestDriverInternals guards the reflection of exchange.go: without it a driver
// upgrade that renames a field would quietly turn the exchange path off (prepared
// statements fall back to the driver) and only the speed would show it. The driver's
// statement must keep the server's statement id in "id" (distinct per statement), and
// its connection the negotiated capabilities in "capabilities" (CLIENT_PROTOCOL_41 set,
// as every server since 4.1 negotiates) and "extCapabilities" (MariaDB's).
func TestDriverInternals(t *testing.T) {
	written := "exchange.go was written for " + mysqlDriverWrittenFor + "; linked: " + moduleVersion("github.com/go-sql-driver/mysql")
	_, c := testConn(t, target.Config{})
	ctx := context.Background()
	ids := map[uint64]bool{}
	for _, sql := range []string{"SELECT 1", "SELECT 2"} {
		s, err := c.Prepare(ctx, sql)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		st := s.(*stmt)
		if st.ds == nil {
			t.Fatalf("%q was not prepared on the server", sql)
		}
		id, ok := unexportedUint(st.ds, "id")
		if !ok || id == 0 {
			t.Fatalf("the driver's statement %T has no unsigned field \"id\" holding the statement id (%d, %v): %s", st.ds, id, ok, written)
		}
		ids[id] = true
	}
	if len(ids) != 2 {
		t.Fatalf("two prepared statements share the id read from field \"id\" (%v): it holds something else; %s", ids, written)
	}
	const clientProtocol41 = 1 << 9
	caps, ok := unexportedUint(c.dc, "capabilities")
	if !ok || caps&clientProtocol41 == 0 {
		t.Fatalf("the driver's connection %T has no unsigned field \"capabilities\" with CLIENT_PROTOCOL_41 set (%#x, %v): %s", c.dc, caps, ok, written)
	}
	if _, ok := unexportedUint(c.dc, "extCapabilities"); !ok {
		t.Fatalf("the driver's connection %T has no unsigned field \"extCapabilities\": %s", c.dc, written)
	}
}
