package serve

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/dbtest"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// selfSigned writes a certificate for 127.0.0.1 and localhost and its key.
func selfSigned(t *testing.T, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fathom test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, DNSNames: []string{"localhost", "fathom.test"},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tpl, tpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	writeFile(t, cert, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeFile(t, key, string(pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kb})))
	return cert, key
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// startServe runs Run (what `fathom serve` runs) with l over a store of two runs, on a
// spare port, and returns its base URL ("https://127.0.0.1:PORT") and its stderr.
func startServe(t *testing.T, l Listen) (string, *lockedBuffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fathom.db")
	st, err := stores.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	writeRun(t, st, 0, fixture{intervals: 3})
	writeRun(t, st, 1, fixture{intervals: 3})
	st.Close()
	out := &lockedBuffer{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, l, func() (store.Store, error) { return stores.Open(path) }, "test", out)
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	re := regexp.MustCompile(`fathom serve: (https?)://[^ ]*:(\d+)/`)
	dbtest.WaitFor(t, time.Minute, 10*time.Millisecond, "serve's URL on stderr", func() bool {
		select {
		case err := <-done:
			t.Fatalf("serve ended: %v (stderr %q)", err, out.String())
		default:
		}
		return re.MatchString(out.String())
	})
	m := re.FindStringSubmatch(out.String())
	return m[1] + "://127.0.0.1:" + m[2], out
}

var tlsClient = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}

type req struct {
	method, path string
	bearer       string
	user, pass   string
	host         string
	body         string
	header       map[string]string
}

func do(t *testing.T, base string, r req) (int, string, http.Header) {
	t.Helper()
	if r.method == "" {
		r.method = "GET"
	}
	q, err := http.NewRequest(r.method, base+r.path, strings.NewReader(r.body))
	if err != nil {
		t.Fatal(err)
	}
	if r.bearer != "" {
		q.Header.Set("Authorization", "Bearer "+r.bearer)
	}
	if r.user != "" {
		q.SetBasicAuth(r.user, r.pass)
	}
	if r.host != "" {
		q.Host = r.host
	}
	for k, v := range r.header {
		q.Header.Set(k, v)
	}
	resp, err := tlsClient.Do(q)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

const (
	writeTok = "wr1te-T0ken-5b2f"
	readTok  = "re4d-T0ken-91ce"
	alicePw  = "al1ce-Pw-77aa"
	bobPw    = "b0b-Pw-c3d1"
)

// Beyond loopback (0.0.0.0 over TLS) reads need credentials as well as changes: the
// read role reads, the write role writes, wrong credentials and other Host names are
// refused, oversize id lists and bodies are refused before any work, and the access
// log has a line per request and no secret.
func TestServeClosedBeyondLoopback(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	writeFile(t, filepath.Join(dir, "token"), writeTok+"\n")
	writeFile(t, filepath.Join(dir, "read"), readTok+"\n")
	writeFile(t, filepath.Join(dir, "users"), "# users\nalice:read:"+alicePw+"\nbob:write:"+bobPw+"\n")
	logPath := filepath.Join(dir, "access.log")
	base, out := startServe(t, Listen{Addr: "0.0.0.0:0", TLSCert: cert, TLSKey: key,
		TokenFile: filepath.Join(dir, "token"), ReadTokenFile: filepath.Join(dir, "read"), UsersFile: filepath.Join(dir, "users"),
		HostNames: []string{"fathom.test"}, AccessLog: logPath})

	// Unauthenticated: nothing to read, not the UI, not the API, not /metrics.
	for _, p := range []string{"/api/runs/1", "/api/runs", "/", "/ui/app.js", "/metrics", "/api/info"} {
		code, body, h := do(t, base, req{path: p})
		if code != 401 || strings.Contains(body, "db1") || strings.Contains(body, "bench1") {
			t.Errorf("GET %s without credentials: %d %.200s", p, code, body)
		}
		if !strings.Contains(strings.Join(h.Values("WWW-Authenticate"), ","), "Basic") {
			t.Errorf("GET %s: no basic-auth challenge for the browser: %v", p, h)
		}
	}
	// Wrong credentials are refused, also where reads would be open.
	for _, r := range []req{{path: "/api/runs/1", bearer: "wr1te-T0ken-5b2e"}, {path: "/api/runs/1", user: "alice", pass: bobPw},
		{path: "/api/runs/1", user: "bob", pass: ""}, {path: "/api/runs/1", header: map[string]string{"Authorization": "Digest x"}}} {
		if code, body, _ := do(t, base, r); code != 401 || strings.Contains(body, "db1") {
			t.Errorf("%+v: %d %.200s", r, code, body)
		}
	}
	// The read role reads (token or user) but cannot change anything.
	for _, r := range []req{{bearer: readTok}, {user: "alice", pass: alicePw}, {user: "anyone", pass: readTok}} {
		r.path = "/api/runs/1"
		if code, body, _ := do(t, base, r); code != 200 || !strings.Contains(body, "db1") {
			t.Errorf("read %+v: %d %.200s", r, code, body)
		}
		r.path = "/metrics"
		if code, body, _ := do(t, base, r); code != 200 || !strings.Contains(body, "fathom_store_up 1") {
			t.Errorf("/metrics %+v: %d %.200s", r, code, body)
		}
		r.method, r.path, r.body, r.header = "POST", "/api/runs/1/labels", `{"set":{"a":"b"}}`, map[string]string{"X-Fathom-Request": "1"}
		if code, body, _ := do(t, base, r); code != 403 || !strings.Contains(body, "read role") {
			t.Errorf("write with %+v: %d %s", r, code, body)
		}
	}
	// The write role writes: the token, or bob from the page (with X-Fathom-Request;
	// a form another site posts cannot set it).
	if code, body, _ := do(t, base, req{method: "POST", path: "/api/runs/1/labels", bearer: writeTok, body: `{"set":{"by":"token"}}`}); code != 200 {
		t.Errorf("write token: %d %s", code, body)
	}
	if code, body, _ := do(t, base, req{method: "POST", path: "/api/runs/1/labels", user: "bob", pass: bobPw, body: `{"set":{"by":"bob"}}`}); code != 403 || !strings.Contains(body, "X-Fathom-Request") {
		t.Errorf("basic write without X-Fathom-Request: %d %s", code, body)
	}
	if code, body, _ := do(t, base, req{method: "POST", path: "/api/runs/1/labels", user: "bob", pass: bobPw, body: `{"set":{"by":"bob"}}`, header: map[string]string{"X-Fathom-Request": "1"}}); code != 200 || !strings.Contains(body, `"by":"bob"`) {
		t.Errorf("bob writes: %d %s", code, body)
	}
	if code, body, _ := do(t, base, req{path: "/api/info", user: "bob", pass: bobPw}); code != 200 || !strings.Contains(body, `"role":"write"`) || !strings.Contains(body, `"user":"bob"`) {
		t.Errorf("info for bob: %d %s", code, body)
	}
	// The Host header: a name it was not given is refused, one it was is served.
	if code, body, _ := do(t, base, req{path: "/api/runs", bearer: readTok, host: "attacker.example:443"}); code != 421 || strings.Contains(body, "db1") {
		t.Errorf("Host attacker.example: %d %.200s", code, body)
	}
	if code, _, _ := do(t, base, req{path: "/api/runs", bearer: readTok, host: "fathom.test:8443"}); code != 200 {
		t.Errorf("Host fathom.test (--host-name): %d", code)
	}
	// Bounds: an id list over the limit and an oversize body, refused before any work.
	ids := strings.TrimSuffix(strings.Repeat("1,", maxCompareRuns+1), ",")
	cpu := processCPU()
	if code, body, _ := do(t, base, req{path: "/api/compare?a=" + ids + "&b=2", bearer: readTok}); code != 400 || !strings.Contains(body, fmt.Sprint(maxCompareRuns)) {
		t.Errorf("%d ids: %d %s", maxCompareRuns+1, code, body)
	}
	if code, body, _ := do(t, base, req{path: "/api/compare?a=1-150000&b=2", bearer: readTok}); code != 400 {
		t.Errorf("range of 150000: %d %s", code, body)
	}
	huge := strings.TrimSuffix(strings.Repeat("1,", 150000), ",")
	if code, _, _ := do(t, base, req{path: "/api/compare?a=" + huge + "&b=2", bearer: readTok}); code != 431 {
		t.Errorf("150000 ids (300 KB of URL): %d, want 431", code)
	}
	if code, body, _ := do(t, base, req{method: "POST", path: "/api/runs/1/labels", bearer: writeTok, body: `{"set":{"a":"` + strings.Repeat("x", 200<<10) + `"}}`}); code != 413 {
		t.Errorf("200 KB body: %d %.200s", code, body)
	}
	if used := processCPU() - cpu; used > 5 {
		t.Errorf("the refusals took %.1f s of CPU", used)
	}
	// The access log: one line per request with the user and role, never a secret.
	b, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	for _, want := range []string{" alice read GET /api/runs/1 200 ", " bob write POST /api/runs/1/labels 200 ", " - - GET /api/runs/1 401 ",
		" read-token read GET /metrics 200 ", " token write POST /api/runs/1/labels 413 ", " - - GET /api/runs 421 "} {
		if !strings.Contains(log, want) {
			t.Errorf("the access log has no line with %q:\n%s", want, log)
		}
	}
	for _, secret := range []string{writeTok, readTok, alicePw, bobPw, "Bearer", "Basic"} {
		if strings.Contains(log, secret) || strings.Contains(out.String(), secret) {
			t.Errorf("%q in the access log or on stderr", secret)
		}
	}
	if fi, err := os.Stat(logPath); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("access log mode: %v %v", fi.Mode(), err)
	}
}

// On loopback serve stays as easy as before (reads need nothing) but checks the Host
// header; beyond loopback over plain HTTP, basic authentication is refused.
func TestServeLoopbackHostCheck(t *testing.T) {
	base, out := startServe(t, Listen{Addr: "127.0.0.1:0"})
	port := base[strings.LastIndex(base, ":")+1:]
	for host, want := range map[string]int{"": 200, "localhost:" + port: 200, "[::1]:" + port: 200, "attacker.example:" + port: 421,
		"attacker.example": 421, "127.0.0.1.nip.io:" + port: 421, "LOCALHOST.:" + port: 200} {
		code, body, _ := do(t, base, req{path: "/api/runs", host: host})
		if code != want || (want == 421 && strings.Contains(body, "db1")) {
			t.Errorf("Host %q: %d, want %d", host, code, want)
		}
	}
	if !strings.Contains(out.String(), " - - GET /api/runs 421 ") {
		t.Errorf("no access log line on stderr:\n%s", out.String())
	}

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "users"), "alice:read:"+alicePw+"\n")
	base, _ = startServe(t, Listen{Addr: "0.0.0.0:0", Insecure: true, UsersFile: filepath.Join(dir, "users"), ReadTokenFile: writeTokenFile(t, dir, readTok), AccessLog: "none"})
	if code, body, h := do(t, base, req{path: "/api/runs", user: "alice", pass: alicePw}); code != 401 || !strings.Contains(body, "plain HTTP") || strings.Contains(strings.Join(h.Values("WWW-Authenticate"), ","), "Basic") {
		t.Errorf("basic auth over plain HTTP beyond loopback: %d %s %v", code, body, h)
	}
	if code, _, _ := do(t, base, req{path: "/api/runs", bearer: readTok}); code != 200 {
		t.Errorf("bearer over plain HTTP (--insecure-listen): %d", code)
	}
	// --require-auth closes loopback too.
	base, _ = startServe(t, Listen{Addr: "127.0.0.1:0", RequireAuth: true, ReadTokenFile: writeTokenFile(t, dir, readTok), AccessLog: "none"})
	if code, _, _ := do(t, base, req{path: "/api/runs"}); code != 401 {
		t.Errorf("--require-auth without credentials: %d", code)
	}
	if code, _, _ := do(t, base, req{path: "/api/runs", user: "x", pass: readTok}); code != 200 {
		t.Errorf("--require-auth with the token as the basic password: %d", code)
	}
}

func writeTokenFile(t *testing.T, dir, tok string) string {
	p := filepath.Join(dir, "tok-"+tok)
	writeFile(t, p, tok+"\n")
	return p
}

// Serving beyond loopback without any credential is refused before the store opens.
func TestServeBeyondNeedsCredentials(t *testing.T) {
	opened := false
	err := Run(context.Background(), Listen{Addr: "0.0.0.0:0", Insecure: true}, func() (store.Store, error) { opened = true; return nil, fmt.Errorf("opened") }, "test", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "reads need credentials") || opened {
		t.Errorf("no credentials beyond loopback: %v (store opened: %v)", err, opened)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "users"), "alice:admin:pw\n")
	err = Run(context.Background(), Listen{Addr: "127.0.0.1:0", UsersFile: filepath.Join(dir, "users")}, func() (store.Store, error) { opened = true; return nil, fmt.Errorf("opened") }, "test", io.Discard)
	if err == nil || !strings.Contains(err.Error(), "line 1") || strings.Contains(err.Error(), "pw") || opened {
		t.Errorf("bad role: %v", err)
	}
}
