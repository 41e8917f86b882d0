package redis

import (
	"os/exec"
	"testing"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/instance"
)

func TestParseRedisCatalog(t *testing.T) {
	resp3 := parseCatalog([][]string{{"appendfsync", "everysec"}, {"save", ""}})
	resp2 := parseCatalog([][]string{{"appendfsync"}, {"everysec"}, {"save"}, {""}})
	for _, c := range []map[string]instance.SettingInfo{resp3, resp2} {
		if len(c) != 2 || c["appendfsync"].Name != "appendfsync" || c["save"].Name != "save" {
			t.Errorf("%v", c)
		}
	}
}

// The installed redis-server lists its settings (it runs for a moment on a private
// socket): the ones plans use are there, a made-up one is not.
func TestRedisCatalog(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		if dbtest.Required() {
			t.Fatal("redis-server not installed but FATHOM_TEST_REQUIRE=1")
		}
		t.Skip("redis-server not installed")
	}
	c, err := instance.Catalog(instance.Redis, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"appendonly", "appendfsync", "save", "maxmemory", "aof-use-rdb-preamble", "bgsave_cpulist"} {
		if _, ok := c[n]; !ok {
			t.Errorf("%s missing from %d settings", n, len(c))
		}
	}
	if _, ok := c["appendfsinc"]; ok {
		t.Error("a setting Redis does not have is listed")
	}
}
