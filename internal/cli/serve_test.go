package cli

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// fathom serve refuses a setup that would expose the store, with one line and exit 2,
// before it opens the store.
func TestServeBadInput(t *testing.T) {
	dir := t.TempDir()
	open := filepath.Join(dir, "token")
	if err := os.WriteFile(open, []byte("hunter2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"all interfaces", []string{"serve", "--addr", ":8080"}, "--insecure-listen"},
		{"network address", []string{"serve", "--addr", "0.0.0.0:8080"}, "--tls-cert and --tls-key"},
		{"no port", []string{"serve", "--addr", "localhost"}, "host:port"},
		{"cert without key", []string{"serve", "--tls-cert", "c.pem"}, "go together"},
		{"missing cert", []string{"serve", "--tls-cert", "nope.pem", "--tls-key", "nope.key"}, "no such file"},
		{"both tokens", []string{"serve", "--token", "a", "--token-file", open}, "give one of them"},
		{"token file others read", []string{"serve", "--token-file", open}, "chmod 600"},
		{"missing token file", []string{"serve", "--token-file", filepath.Join(dir, "none")}, "no such file"},
		{"network without credentials", []string{"serve", "--addr", "0.0.0.0:8080", "--insecure-listen"}, "reads need credentials"},
		{"read token file others read", []string{"serve", "--read-token-file", open}, "chmod 600"},
		{"users file others read", []string{"serve", "--users", open}, "chmod 600"},
		{"host name with port", []string{"serve", "--host-name", "fathom.example:8080"}, "--host-name"},
		{"require auth without credentials", []string{"serve", "--require-auth"}, "--require-auth needs credentials"},
		{"webhook not http", []string{"serve", "--webhook", "ftp://hooks.example/T0/secret"}, "--webhook: give an http:// or https:// URL"},
		{"webhook format", []string{"serve", "--webhook", "https://hooks.example/T0/secret", "--webhook-format", "xml"}, `--webhook-format "xml": use json or slack`},
		{"webhook link", []string{"serve", "--webhook", "https://hooks.example/T0/secret", "--link", "bench.example"}, "--link"},
		{"webhook without state", []string{"serve", "--webhook", "https://hooks.example/T0/secret", "--webhook-state", ""}, "--webhook needs --webhook-state FILE"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := storeEnv(t)
			r := fathom(t, env, nil, c.args...)
			oneLine(t, r, exitUsage, c.want)
			if strings.Contains(r.stderr, "hunter2") {
				t.Errorf("the token shows: %s", r.stderr)
			}
			if _, err := os.Stat(env["FATHOM_STORE"]); err == nil {
				t.Error("the store was created before the refusal")
			}
		})
	}
}

// fathom serve answers on a free loopback port, read-only, and stops on an
// interrupt with exit 0.
func TestServeStartsAndStops(t *testing.T) {
	env := storeEnv(t)
	var out, errb syncBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e := &Env{Args: []string{"serve", "--addr", "127.0.0.1:0"}, Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] }, Now: time.Now,
		Interrupts: func(c context.Context) (context.Context, context.CancelFunc) {
			c, stop := context.WithCancel(c)
			go func() {
				select {
				case <-ctx.Done():
					stop()
				case <-c.Done():
				}
			}()
			return c, stop
		}}
	done := make(chan int)
	go func() { done <- Run(context.Background(), e) }()
	url := regexp.MustCompile(`http://127\.0\.0\.1:\d+/`)
	waitFor(t, "the URL on stderr", func() bool { return url.MatchString(errb.String()) })
	if !strings.Contains(errb.String(), "read-only") {
		t.Errorf("stderr %q does not say read-only", errb.String())
	}
	base := url.FindString(errb.String())
	for path, want := range map[string]int{"": 200, "api/runs": 200, "ui/vendor/uPlot.LICENSE": 200, "api/runs/1": 404} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /%s: %d, want %d", path, resp.StatusCode, want)
		}
	}
	// /metrics is mounted: the Prometheus exposition of the runs in progress (none here).
	resp, err := http.Get(base + "metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), "fathom_store_up 1") || !strings.Contains(string(body), "fathom_runs_in_progress 0") {
		t.Errorf("GET /metrics: %d\n%s", resp.StatusCode, body)
	}
	req, _ := http.NewRequest("DELETE", base+"api/runs/1", nil)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 403 {
		t.Errorf("DELETE on a read-only server: %v %v", resp, err)
	}
	cancel()
	select {
	case code := <-done:
		if code != exitOK {
			t.Errorf("exit %d after the interrupt (stderr %q)", code, errb.String())
		}
	case <-time.After(time.Minute):
		t.Fatal("serve did not stop within a minute of the interrupt")
	}
}
