package store

import (
	"os/exec"
	"strings"
	"testing"
)

// The store sits after collect in the flow: it keeps samples, it never reads a
// server, so neither it nor its implementations may depend on collect (directly or
// through another package). "./..." lists store, store/sqlite and store/stores.
func TestStoreDoesNotImportCollect(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 3 {
		t.Fatalf("go list -deps listed too little: %q", deps)
	}
	for _, d := range deps {
		if strings.HasSuffix(d, "/internal/collect") {
			t.Errorf("the store depends on %s", d)
		}
	}
}
