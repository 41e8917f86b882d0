// Package serve is `fathom serve`: a web UI and a JSON API over a results store. The
// UI's assets (HTML, JavaScript, CSS and the vendored uPlot chart library) are
// embedded, so the browser needs no network. It reads through the store's interfaces
// and draws the charts package report builds for the static report (the chart model
// in package chart), so the two never disagree. Writes (labels, notes, deleting a run)
// need a credential with the write role; without one the server is read-only. Reads
// need a credential too when Options.ReadAuth is set (beyond loopback); every request
// has its Host header checked (DNS rebinding) and is logged to Options.AccessLog.
package serve

import (
	"crypto/sha256"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"time"

	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/store"
)

//go:embed ui
var uiFS embed.FS

// Options configure a Server.
type Options struct {
	Store store.Store
	// Figures are the database kinds' default charts and key metrics (db.Figures), by
	// kind name; a kind missing from it is shown with the host's only.
	Figures report.KindFigures
	// Token authorises writes (Authorization: Bearer TOKEN): a User with the write
	// role. Without a write credential the server is read-only.
	Token string
	// Users are further credentials: tokens and basic-auth users with their roles.
	Users []user
	// ReadAuth: reads need a credential too (serve beyond loopback, or asked).
	ReadAuth bool
	// NoBasic refuses basic authentication (plain HTTP beyond loopback).
	NoBasic bool
	// HostNames are the names besides loopback ones the Host header may carry;
	// AnyIP accepts any IP address there (a server listening beyond loopback).
	HostNames []string
	AnyIP     bool
	// AccessLog gets one line per request; nil: none.
	AccessLog io.Writer
	// Extra handlers mounted on the server's mux by pattern, e.g. "GET /metrics"
	// for a Prometheus exposition.
	Extra map[string]http.Handler
	// Poll is how often a live page's run is re-read from the store (default 250ms).
	Poll time.Duration
	// Version is shown in the page footer.
	Version string
}

// server is the web UI and API; it is an http.Handler.
type server struct {
	o     Options
	mux   *http.ServeMux
	creds []credential
	log   *logger
	write bool // some credential has the write role
	live  *hub
	sums  summaryCache
	list  runList
	hist  historyCache
}

// New builds a server over the store.
func New(o Options) (*server, error) {
	if o.Store == nil {
		return nil, errors.New("serve: no store")
	}
	if o.Poll <= 0 {
		o.Poll = 250 * time.Millisecond
	}
	s := &server{o: o, mux: http.NewServeMux()}
	users := o.Users
	if o.Token != "" {
		users = append([]user{{Name: "token", Role: roleWrite, Secret: o.Token, Token: true}}, users...)
	}
	for _, u := range users {
		if u.Secret == "" || u.Role == roleNone {
			return nil, fmt.Errorf("serve: credential %q has no secret or no role", u.Name)
		}
		s.creds = append(s.creds, credential{name: u.Name, role: u.Role, sum: sha256.Sum256([]byte(u.Secret)), token: u.Token})
		s.write = s.write || u.Role == roleWrite
	}
	if o.AccessLog != nil {
		s.log = &logger{w: o.AccessLog}
	}
	s.live = newHub(s)
	sub, err := fs.Sub(uiFS, "ui")
	if err != nil {
		return nil, err
	}
	static := http.FileServerFS(sub)
	s.mux.Handle("GET /ui/", http.StripPrefix("/ui/", cacheStatic(static)))
	s.mux.HandleFunc("GET /{$}", s.index)
	s.mux.HandleFunc("GET /api/runs", s.apiRuns)
	s.mux.HandleFunc("GET /api/runs/{id}", s.apiRun)
	s.mux.HandleFunc("GET /api/runs/{id}/live", s.apiLive)
	s.mux.HandleFunc("GET /api/runs/{id}/window", s.apiWindow)
	s.mux.HandleFunc("GET /api/runs/{id}/export", s.apiRunExport)
	s.mux.HandleFunc("POST /api/runs/{id}/labels", s.writer(s.apiLabels))
	s.mux.HandleFunc("DELETE /api/runs/{id}", s.writer(s.apiDelete))
	s.mux.HandleFunc("GET /api/experiments", s.apiExperiments)
	s.mux.HandleFunc("GET /api/experiments/{id}", s.apiExperiment)
	s.mux.HandleFunc("GET /api/experiments/{id}/figures", s.apiExperimentFigures)
	s.mux.HandleFunc("GET /experiments/{id}/report/{file}", s.experimentReport)
	s.mux.HandleFunc("GET /api/compare", s.apiCompare)
	s.mux.HandleFunc("GET /api/info", s.apiInfo)
	s.historyRoutes()
	for pattern, h := range o.Extra {
		s.mux.Handle(pattern, h)
	}
	return s, nil
}

// ServeHTTP serves the UI and the API.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.guard(w, r)
}

// Close stops the live feeds.
func (s *server) Close() { s.live.close() }

func cacheStatic(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		h.ServeHTTP(w, r)
	})
}

func (s *server) index(w http.ResponseWriter, r *http.Request) {
	b, err := uiFS.ReadFile("ui/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'self'")
	_, _ = w.Write(b)
}

// write wraps a handler that changes the store: it needs the write role. A browser
// sends basic credentials by itself, also with a form another site posts: a change
// made with them must carry the header X-Fathom-Request, which no cross-site form
// can set.
func (s *server) writer(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.write {
			apiError(w, http.StatusForbidden, "this server is read-only: start `fathom serve` with --token-file (or a write user in --users) to allow changes")
			return
		}
		switch id := who(r); {
		case id.role == roleNone:
			s.challenge(w, http.StatusUnauthorized, "a change needs a credential with the write role (Authorization: Bearer TOKEN)")
			return
		case id.role < roleWrite:
			apiError(w, http.StatusForbidden, fmt.Sprintf("%s has the read role: a change needs the write role", id.name))
			return
		case id.basic && r.Header.Get("X-Fathom-Request") == "":
			apiError(w, http.StatusForbidden, "a change made with basic authentication needs the header X-Fathom-Request: 1 (against cross-site requests)")
			return
		}
		if _, ok := s.o.Store.(store.RunEditor); !ok {
			apiError(w, http.StatusNotImplemented, "this store cannot change runs")
			return
		}
		h(w, r)
	}
}

// checkListen refuses to bind anywhere but loopback unless the connection is
// encrypted (TLS files given) or the user said it may be plain (insecure).
func checkListen(addr string, tls, insecure bool) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil || port == "" {
		return fmt.Errorf("--addr %q: give host:port, e.g. 127.0.0.1:8080", addr)
	}
	if loopback(host) || tls || insecure {
		return nil
	}
	shown := host
	if shown == "" {
		shown = "every interface"
	}
	return fmt.Errorf("--addr %s listens on %s, not only this machine: give --tls-cert and --tls-key, or --insecure-listen to serve plain HTTP to the network", addr, shown)
}

// loopback reports whether host names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
