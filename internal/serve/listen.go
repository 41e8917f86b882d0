package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/fathom-lab/fathom/internal/promexp"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"strings"
	"time"

	"github.com/fathom-lab/fathom/internal/fault"
	"github.com/fathom-lab/fathom/internal/store"
)

// Listen is where and how `fathom serve` listens.
type Listen struct {
	Addr             string
	TLSCert, TLSKey  string
	Insecure         bool // plain HTTP on a non-loopback address, on purpose
	Token, TokenFile string
	EnvToken         string // $FATHOM_SERVE_TOKEN, used when neither flag is given
}

// Check refuses, before anything is opened, a setup that cannot work or would expose
// the store: the errors are usage mistakes (one line naming the fix).
func (l *Listen) Check() error {
	if (l.TLSCert == "") != (l.TLSKey == "") {
		return fault.Usagef("--tls-cert and --tls-key go together: give both files, or neither")
	}
	if l.Token != "" && l.TokenFile != "" {
		return fault.Usagef("--token and --token-file: give one of them")
	}
	if err := CheckListen(l.Addr, l.TLSCert != "", l.Insecure); err != nil {
		return fault.Usagef("%v", err)
	}
	for _, f := range []string{l.TLSCert, l.TLSKey} {
		if f == "" {
			continue
		}
		if _, err := os.Stat(f); err != nil {
			return fault.Usagef("TLS file %s: %v: give a readable PEM file", f, pathReason(err))
		}
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

// ReadToken reads the write token from --token-file: the first line, which must not be
// empty; on Unix the file must not be readable by others.
func (l *Listen) ReadToken() (string, error) {
	if l.TokenFile == "" {
		if l.Token == "" {
			return strings.TrimSpace(l.EnvToken), nil
		}
		return strings.TrimSpace(l.Token), nil
	}
	fi, err := os.Stat(l.TokenFile)
	if err != nil {
		return "", fault.Usagef("--token-file %s: %v", l.TokenFile, pathReason(err))
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return "", fault.Usagef("--token-file %s is readable by others (mode %04o): chmod 600 it", l.TokenFile, fi.Mode().Perm())
	}
	b, err := os.ReadFile(l.TokenFile)
	if err != nil {
		return "", fault.Usagef("--token-file %s: %v", l.TokenFile, pathReason(err))
	}
	tok, _, _ := strings.Cut(string(b), "\n")
	if tok = strings.TrimSpace(tok); tok == "" {
		return "", fault.Usagef("--token-file %s is empty: put the token on its first line", l.TokenFile)
	}
	return tok, nil
}

// Help texts of `fathom serve`.
const (
	Short = "Serve a web UI and JSON API over the results store: runs, charts, experiments, compare, live runs"
	Long  = `serve answers on --addr (loopback by default) with the runs of the store: filter and
sort them, open one with every chart of its report (hover, zoom a time range, hide a
series, stalls shaded and listed), experiments, compare any two selections, and runs in
progress updating as their intervals finish. Everything is in the binary: the browser
needs no network. It is read-only unless a token is given (--token-file, or
$FATHOM_SERVE_TOKEN; --token shows it to other users of this machine in ps): then
labels, notes (the label "note") and deleting runs need it. Another address than
loopback needs --tls-cert and --tls-key, or --insecure-listen.`
	Example = `  fathom serve
  fathom serve --store /srv/fathom/results.db --addr 0.0.0.0:8443 --tls-cert c.pem --tls-key k.pem --token-file /etc/fathom/token`
)

// Run is `fathom serve`: it checks the setup, opens the store (with open, only once
// the flags are known to be right), and serves until ctx ends, saying where on w.
func Run(ctx context.Context, l Listen, open func() (store.Store, error), version string, w io.Writer) error {
	if err := l.Check(); err != nil {
		return err
	}
	tok, err := l.ReadToken()
	if err != nil {
		return err
	}
	st, err := open()
	if err != nil {
		return err
	}
	defer st.Close()
	// /metrics: the runs in progress in the Prometheus text format (internal/promexp).
	metrics := promexp.NewHandler(st, promexp.Options{Warn: func(msg string) { fmt.Fprintf(w, "fathom serve: /metrics: %s\n", msg) }})
	srv, err := New(Options{Store: st, Token: tok, Version: version, Extra: map[string]http.Handler{"GET /metrics": metrics}})
	if err != nil {
		return err
	}
	mode := "read-only"
	if tok != "" {
		mode = "changes need the token"
	}
	return Serve(ctx, srv, l, func(url string) {
		fmt.Fprintf(w, "fathom serve: %s (store %s, %s); Ctrl-C stops\n", url, st.Path(), mode)
	})
}

// Serve listens and serves s until ctx ends, then shuts down (live streams first).
// ready is called with the server's URL once it listens.
func Serve(ctx context.Context, s *Server, l Listen, ready func(url string)) error {
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return fault.Usagef("--addr %s: %v: pick a free port or another address", l.Addr, errors.Unwrap(err))
	}
	scheme := "http"
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	if l.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(l.TLSCert, l.TLSKey)
		if err != nil {
			ln.Close()
			return fault.Usagef("--tls-cert/--tls-key: %v: give a PEM certificate and its key", err)
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
