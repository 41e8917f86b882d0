package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/promexp"
	"github.com/fathom-lab/fathom/internal/report"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/store"
)

// Listen is where and how `fathom serve` listens.
type Listen struct {
	Addr             string
	TLSCert, TLSKey  string
	Insecure         bool // plain HTTP on a non-loopback address, on purpose
	Token, TokenFile string
	EnvToken         string // $FATHOM_SERVE_TOKEN, used when neither flag is given
	// ReadTokenFile holds a token with the read role; EnvReadToken is
	// $FATHOM_SERVE_READ_TOKEN, used without the flag.
	ReadTokenFile, EnvReadToken string
	// UsersFile lists users for basic authentication (and tokens), one a line:
	// NAME:ROLE:SECRET, ROLE read or write.
	UsersFile string
	// HostNames are the names the server is reached by, besides loopback ones and the
	// listen address (the Host header is checked against them).
	HostNames []string
	// RequireAuth: reads need credentials on loopback too.
	RequireAuth bool
	// AccessLog is where the access log goes: "" or "-" the given writer (stderr),
	// "none" nowhere, else a file it is appended to.
	AccessLog string
	// Figures are the database kinds' default charts and key metrics (Options.Figures).
	Figures report.KindFigures
	// Watch configures the change watcher (Server.WatchChanges): a webhook for the
	// changes runs make visible as they arrive. Its Link defaults to the listen URL.
	Watch watch
}

// beyond reports whether the address listens beyond this machine.
func (l *Listen) beyond() bool {
	host, _, err := net.SplitHostPort(l.Addr)
	return err != nil || !loopback(host)
}

// check refuses, before anything is opened, a setup that cannot work or would expose
// the store: the errors are usage mistakes (one line naming the fix).
func (l *Listen) check() error {
	if (l.TLSCert == "") != (l.TLSKey == "") {
		return errkind.Usagef("--tls-cert and --tls-key go together: give both files, or neither")
	}
	if l.Token != "" && l.TokenFile != "" {
		return errkind.Usagef("--token and --token-file: give one of them")
	}
	for _, n := range l.HostNames {
		if n == "" || strings.ContainsAny(n, ":/ []") {
			return errkind.Usagef("--host-name %q: give a host name without port or scheme, e.g. fathom.example.com", n)
		}
	}
	if err := checkListen(l.Addr, l.TLSCert != "", l.Insecure); err != nil {
		return errkind.Usagef("%v", err)
	}
	for _, f := range []string{l.TLSCert, l.TLSKey} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return errkind.Usagef("TLS file %s: %v: give a readable PEM file", f, pathReason(err))
		}
	}
	return l.Watch.check()
}

// check refuses a webhook setup that cannot work.
func (w *watch) check() error {
	if w.Webhook == "" {
		return nil
	}
	if !slices.Contains(report.WebhookFormats, w.Format) {
		return errkind.Usagef("--webhook-format %q: use json or slack", w.Format)
	}
	if u, err := url.Parse(w.Webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errkind.Usagef("--webhook: give an http:// or https:// URL")
	}
	if w.Link != "" {
		if u, err := url.Parse(w.Link); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errkind.Usagef("--link %q: give the http:// or https:// address people reach this server on", w.Link)
		}
	}
	if w.State == "" {
		return errkind.Usagef("--webhook needs --webhook-state FILE: where serve remembers the changes it sent")
	}
	return nil
}

func pathReason(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such file"
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}

// readToken reads the write token from --token-file: the first line, which must not be
// empty; on Unix the file must not be readable by others.
func (l *Listen) readToken() (string, error) {
	if l.TokenFile == "" {
		if l.Token == "" {
			return strings.TrimSpace(l.EnvToken), nil
		}
		return strings.TrimSpace(l.Token), nil
	}
	return readToken("--token-file", l.TokenFile)
}

// credentials are every credential the flags give: the write token, the read token
// and the users file.
func (l *Listen) credentials() (write string, users []user, err error) {
	if write, err = l.readToken(); err != nil {
		return "", nil, err
	}
	read := strings.TrimSpace(l.EnvReadToken)
	if l.ReadTokenFile != "" {
		if read, err = readToken("--read-token-file", l.ReadTokenFile); err != nil {
			return "", nil, err
		}
	}
	if read != "" {
		if read == write {
			return "", nil, errkind.Usagef("the read token is the write token: give the read role a token of its own")
		}
		users = append(users, user{Name: "read-token", Role: roleRead, Secret: read, Token: true})
	}
	if l.UsersFile != "" {
		us, err := readUsers(l.UsersFile)
		if err != nil {
			return "", nil, err
		}
		users = append(users, us...)
	}
	return write, users, nil
}

// readPrivate reads a file that holds secrets: on Unix it must not be readable by
// others.
func readPrivate(flag, path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, errkind.Usagef("%s %s: %v", flag, path, pathReason(err))
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, errkind.Usagef("%s %s is readable by others (mode %04o): chmod 600 it", flag, path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errkind.Usagef("%s %s: %v", flag, path, pathReason(err))
	}
	return b, nil
}

func readToken(flag, path string) (string, error) {
	b, err := readPrivate(flag, path)
	if err != nil {
		return "", err
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", errkind.Usagef("%s %s is empty: put the token on its first line", flag, path)
	}
	return tok, nil
}

// readUsers reads --users: NAME:ROLE:SECRET a line; blank lines and # comments skipped.
func readUsers(path string) ([]user, error) {
	b, err := readPrivate("--users", path)
	if err != nil {
		return nil, err
	}
	var users []user
	seen := map[string]bool{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		name, rest, ok1 := strings.Cut(line, ":")
		role, secret, ok2 := strings.Cut(rest, ":")
		r, okRole := parseRole(role)
		switch {
		case !ok1 || !ok2 || !okRole || secret == "":
			return nil, errkind.Usagef("--users %s line %d: write NAME:ROLE:PASSWORD, ROLE read or write", path, i+1)
		case name == "" || strings.IndexFunc(name, func(c rune) bool { return c <= ' ' || c == 0x7f }) >= 0:
			return nil, errkind.Usagef("--users %s line %d: the user name must not be empty or hold spaces or control characters", path, i+1)
		case seen[name]:
			return nil, errkind.Usagef("--users %s line %d: user %q is listed twice", path, i+1, name)
		}
		seen[name] = true
		users = append(users, user{Name: name, Role: r, Secret: secret})
	}
	if len(users) == 0 {
		return nil, errkind.Usagef("--users %s lists no user: write NAME:ROLE:PASSWORD lines", path)
	}
	return users, nil
}

// Help texts of `fathom serve`.
const (
	Short = "Serve a web UI and JSON API over the results store: runs, charts, experiments, compare, live runs"
	Long  = `serve answers on --addr (loopback by default) with the runs of the store: filter and
sort them, open one with every chart of its report (hover, zoom a time range, hide a
series, stalls shaded and listed), experiments, compare any two selections, and runs in
progress updating as their intervals finish. Everything is in the binary: the browser
needs no network. It is read-only unless a write credential is given (--token-file, or
$FATHOM_SERVE_TOKEN; --token shows it to other users of this machine in ps, or a write
user of --users): then labels, notes (the label "note") and deleting runs need it.
Another address than loopback needs --tls-cert and --tls-key, or --insecure-listen, and
credentials for reading too (--read-token-file, --token-file or --users). The Host
header must be a loopback name, an address, or a --host-name; every request is logged
(--access-log).`
	Example = `  fathom serve
  fathom serve --store /srv/fathom/results.db --addr 0.0.0.0:8443 --tls-cert c.pem --tls-key k.pem --users /etc/fathom/users --host-name fathom.example.com`
)

// Run is `fathom serve`: it checks the setup, opens the store (with open, only once
// the flags are known to be right), and serves until ctx ends, saying where on w.
func Run(ctx context.Context, l Listen, open func() (store.Store, error), version string, w io.Writer) error {
	if err := l.check(); err != nil {
		return err
	}
	tok, users, err := l.credentials()
	if err != nil {
		return err
	}
	beyond := l.beyond()
	readAuth := beyond || l.RequireAuth
	if readAuth && tok == "" && len(users) == 0 {
		if beyond {
			return errkind.Usagef("--addr %s serves beyond this machine, where reads need credentials: give --read-token-file FILE (or $FATHOM_SERVE_READ_TOKEN), --token-file FILE or --users FILE", l.Addr)
		}
		return errkind.Usagef("--require-auth needs credentials: give --read-token-file FILE (or $FATHOM_SERVE_READ_TOKEN), --token-file FILE or --users FILE")
	}
	if l.Token != "" {
		fmt.Fprintln(w, "fathom serve: --token shows the token to every user of this machine (ps): use --token-file FILE or $FATHOM_SERVE_TOKEN")
	}
	var accessLog io.Writer = w
	switch l.AccessLog {
	case "", "-":
	case "none":
		accessLog = nil
	default:
		f, err := os.OpenFile(l.AccessLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
		if err != nil {
			return errkind.Usagef("--access-log %s: %v: give a file this user can write, - for stderr or none", l.AccessLog, pathReason(err))
		}
		defer f.Close()
		accessLog = f
	}
	hostNames := l.HostNames
	if host, _, err := net.SplitHostPort(l.Addr); err == nil && host != "" && net.ParseIP(host) == nil {
		hostNames = append(hostNames, host)
	}
	st, err := open()
	if err != nil {
		return err
	}
	defer st.Close()
	// /metrics: the runs in progress in the Prometheus text format (internal/promexp).
	metrics := promexp.NewHandler(st, promexp.Options{Warn: func(msg string) { fmt.Fprintf(w, "fathom serve: /metrics: %s\n", msg) }})
	srv, err := New(Options{Store: st, Figures: l.Figures, Token: tok, Users: users, ReadAuth: readAuth, NoBasic: beyond && l.TLSCert == "",
		HostNames: hostNames, AnyIP: beyond, AccessLog: accessLog,
		Version: version, Extra: map[string]http.Handler{"GET /metrics": metrics}})
	if err != nil {
		return err
	}
	mode := "read-only"
	if srv.write {
		mode = "changes need the write role"
	}
	if readAuth {
		mode = "reads need credentials, " + mode
	}
	watch := l.Watch
	watch.Warn = func(msg string) { fmt.Fprintf(w, "fathom serve: changes: %s\n", msg) }
	x, err := srv.newWatcher(ctx, watch)
	if err != nil {
		return err
	}
	return serve(ctx, srv, l, func(url string) {
		fmt.Fprintf(w, "fathom serve: %s (store %s, %s); Ctrl-C stops\n", url, st.Path(), mode)
		if x.w.Link == "" {
			x.w.Link = url
		}
		if x.w.Webhook != "" {
			fmt.Fprintf(w, "fathom serve: changes found as runs arrive are posted to the webhook on %s (%s), each once (%s)\n", webhookHost(x.w.Webhook), x.w.Format, x.w.State)
		}
		go x.run(ctx)
	})
}

// webhookHost is the host of a webhook URL: its path is its secret.
func webhookHost(u string) string {
	if p, err := url.Parse(u); err == nil {
		return p.Host
	}
	return "?"
}

// serve listens and serves s until ctx ends, then shuts down (live streams first).
// ready is called with the server's URL once it listens.
func serve(ctx context.Context, s *server, l Listen, ready func(url string)) error {
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return errkind.Usagef("--addr %s: %v: pick a free port or another address", l.Addr, errors.Unwrap(err))
	}
	scheme := "http"
	// MaxHeaderBytes: a request line or headers over 64 KiB are answered 431 before
	// any handler runs.
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	if l.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(l.TLSCert, l.TLSKey)
		if err != nil {
			ln.Close()
			return errkind.Usagef("--tls-cert/--tls-key: %v: give a PEM certificate and its key", err)
		}
		hs.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		ln = tls.NewListener(ln, hs.TLSConfig)
		scheme = "https"
	}
	if ready != nil {
		ready(fmt.Sprintf("%s://%s/", scheme, ln.Addr()))
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		s.Close()
		return err
	case <-ctx.Done():
	}
	s.Close()
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return hs.Close()
	}
	return nil
}
