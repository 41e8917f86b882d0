package redis

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	redis "github.com/fathom-lab/fathom/internal/db/redis/target"
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// catalog lists the settings the installed redis-server knows. redis-server has
// no option that prints them, so it runs for a moment with no TCP port and no
// persistence, on a socket in a private temporary directory, and answers CONFIG GET *.
func catalog(server string) (map[string]instance.SettingInfo, error) {
	dir, err := os.MkdirTemp("", "fathom-redis-catalog-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "redis.sock")
	cmd := exec.Command(server, "--port", "0", "--unixsocket", sock, "--unixsocketperm", "700", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", filepath.Join(dir, "log"))
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C", "LC_ALL=C"}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("listing Redis's settings: starting redis-server: %v", err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	defer func() {
		_ = cmd.Process.Kill()
		<-done
	}()
	t, err := redis.Open("unix://"+sock, target.Config{ConnectTimeout: 2 * time.Second, AppName: "fathom"})
	if err != nil {
		return nil, err
	}
	defer t.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		select {
		case <-done:
			log, _ := os.ReadFile(filepath.Join(dir, "log"))
			return nil, fmt.Errorf("listing Redis's settings: redis-server exited: %s", instance.Relevant(string(log), 3))
		default:
		}
		if c, err := t.Connect(ctx); err == nil {
			rows, err := c.Query(ctx, "CONFIG GET *")
			c.Close()
			if err == nil {
				return parseCatalog(rows), nil
			}
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("listing Redis's settings: redis-server did not answer within 20s")
		case <-done:
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// parseCatalog reads CONFIG GET's reply: rows of name and value (RESP3), or one
// row per word, names and values alternating (RESP2).
func parseCatalog(rows [][]string) map[string]instance.SettingInfo {
	c := map[string]instance.SettingInfo{}
	if len(rows) > 0 && len(rows[0]) == 2 {
		for _, r := range rows {
			c[r[0]] = instance.SettingInfo{Name: r[0]}
		}
		return c
	}
	for i := 0; i+1 < len(rows); i += 2 {
		if len(rows[i]) == 1 {
			c[rows[i][0]] = instance.SettingInfo{Name: rows[i][0]}
		}
	}
	return c
}
