package run

import (
	"strings"
	"testing"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/target"
)

// A refused login says where the password comes from for the target's kind: Redis's
// bundle has its own hint, the others the usual one.
func TestConnectErrorAuthHint(t *testing.T) {
	for _, c := range []struct{ dsn, want string }{
		{"redis://127.0.0.1:1/0", "REDISCLI_AUTH"},
		{"postgres://u@127.0.0.1:1/d", "PG*/.pgpass or ~/.my.cnf"},
		{"mysql://u@127.0.0.1:1/d", "PG*/.pgpass or ~/.my.cnf"},
	} {
		tgt, err := db.Open(c.dsn, target.Config{})
		if err != nil {
			t.Fatal(err)
		}
		msg := ConnectError(tgt, target.Errorf(target.ClassAuth, "", "password authentication failed")).Error()
		if !strings.Contains(msg, c.want) {
			t.Errorf("%s: %q lacks %q", c.dsn, msg, c.want)
		}
		tgt.Close()
	}
}
