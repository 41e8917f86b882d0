package serve

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// role is what a credential allows: reading the store, or reading and changing it.
type role int

// The roles, weakest first.
const (
	roleNone role = iota
	roleRead
	roleWrite
)

func (r role) String() string {
	switch r {
	case roleRead:
		return "read"
	case roleWrite:
		return "write"
	}
	return "-"
}

// parseRole reads "read" or "write".
func parseRole(s string) (role, bool) {
	switch s {
	case "read":
		return roleRead, true
	case "write":
		return roleWrite, true
	}
	return roleNone, false
}

// user is one credential: a bearer token, or a user name and password for HTTP basic
// authentication. A token's Name is what the access log shows; with basic
// authentication a token is accepted as the password under any user name.
type user struct {
	Name   string
	Role   role
	Secret string
	Token  bool // a token: Bearer, or basic with any user name
}

// credential is a User with its secret kept only as a digest, so that comparisons
// take the same time whatever the lengths.
type credential struct {
	name  string
	role  role
	sum   [32]byte
	token bool
}

type identity struct {
	name  string
	role  role
	basic bool // by basic authentication, which a browser sends by itself
}

type ctxKey struct{}

func who(r *http.Request) identity {
	id, _ := r.Context().Value(ctxKey{}).(identity)
	return id
}

// match finds the credential for a secret (and a basic user name, "" for a bearer
// token). Every credential is compared, in constant time, whatever matches.
func match(creds []credential, name, secret string, basic bool) (identity, bool) {
	sum := sha256.Sum256([]byte(secret))
	var found identity
	ok := 0
	for i := range creds {
		c := &creds[i]
		eq := subtle.ConstantTimeCompare(sum[:], c.sum[:])
		nameOK := 1
		switch {
		case !basic && !c.token: // a user's password is no bearer token
			nameOK = 0
		case basic && !c.token:
			nameOK = subtle.ConstantTimeCompare([]byte(name), []byte(c.name))
		}
		if eq&nameOK == 1 && ok == 0 {
			found, ok = identity{name: c.name, role: c.role, basic: basic}, 1
		}
	}
	return found, ok == 1
}

// authenticate reads the request's credentials: the identity (role none without
// any), or a refusal already answered.
func (s *server) authenticate(w http.ResponseWriter, r *http.Request) (identity, bool) {
	h := r.Header.Get("Authorization")
	if h == "" || len(s.creds) == 0 { // no credentials: reads open, changes refused as read-only
		return identity{}, true
	}
	scheme, rest, _ := strings.Cut(h, " ")
	var id identity
	var ok bool
	switch strings.ToLower(scheme) {
	case "bearer":
		id, ok = match(s.creds, "", strings.TrimSpace(rest), false)
	case "basic":
		if s.o.NoBasic {
			s.challenge(w, http.StatusUnauthorized, "basic authentication over plain HTTP beyond loopback is refused (the password would cross the network in clear): serve with --tls-cert and --tls-key, or send Authorization: Bearer TOKEN")
			return id, false
		}
		user, pass, good := r.BasicAuth()
		if good {
			id, ok = match(s.creds, user, pass, true)
		}
	default:
		s.challenge(w, http.StatusUnauthorized, fmt.Sprintf("Authorization %q is not understood: send Bearer TOKEN or Basic (user and password, over TLS)", scheme))
		return id, false
	}
	if !ok {
		s.challenge(w, http.StatusUnauthorized, "wrong credentials: give the token of --token-file/--read-token-file or a user and password of --users")
		return id, false
	}
	return id, true
}

// challenge answers 401 (or code) asking for credentials the browser can give:
// basic authentication where it is allowed, a bearer token always.
func (s *server) challenge(w http.ResponseWriter, code int, msg string) {
	if code == http.StatusUnauthorized {
		if !s.o.NoBasic {
			w.Header().Add("WWW-Authenticate", `Basic realm="fathom", charset="UTF-8"`)
		}
		w.Header().Add("WWW-Authenticate", `Bearer realm="fathom"`)
	}
	apiError(w, code, msg)
}

// hostAllowed checks the Host header against the names this server answers to, so
// that a page of another site cannot reach it by DNS rebinding: loopback names and
// addresses, the names given with --host-name, and (beyond loopback) any IP address.
func (s *server) hostAllowed(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	if host == "" {
		return false
	}
	if loopback(host) {
		return true
	}
	if ip := net.ParseIP(host); ip != nil {
		return s.o.AnyIP
	}
	for _, n := range s.o.HostNames {
		if strings.EqualFold(strings.TrimSuffix(n, "."), host) {
			return true
		}
	}
	return false
}

// logger writes one access log line per request.
type logger struct {
	mu sync.Mutex
	w  io.Writer
}

type recorder struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += int64(n)
	return n, err
}

func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// line is one request: time, remote address, user and role, method, path (escaped,
// without the query), status, bytes and duration. Never a header: no secret.
func (l *logger) line(start time.Time, r *http.Request, id identity, status int, n int64) {
	user := id.name
	if user == "" {
		user = "-"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, "%s %s %s %s %s %s %d %d %s\n", start.UTC().Format("2006-01-02T15:04:05.000Z"),
		r.RemoteAddr, user, id.role, r.Method, r.URL.EscapedPath(), status, n, time.Since(start).Round(time.Microsecond))
}

// guard runs every request through the Host check, authentication, the read rule
// and the access log.
func (s *server) guard(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	rec := &recorder{ResponseWriter: w}
	var id identity
	defer func() {
		if s.log != nil {
			st := rec.status
			if st == 0 {
				st = http.StatusOK
			}
			s.log.line(start, r, id, st, rec.bytes)
		}
	}()
	if !s.hostAllowed(r.Host) {
		apiError(rec, http.StatusMisdirectedRequest, fmt.Sprintf("Host %q is not a name this server answers to: open it by its address (or a loopback name), or start serve with --host-name NAME", r.Host))
		return
	}
	var ok bool
	if id, ok = s.authenticate(rec, r); !ok {
		return
	}
	if id.role == roleNone && s.o.ReadAuth {
		s.challenge(rec, http.StatusUnauthorized, "this server needs credentials to read: a bearer token (--read-token-file, --token-file) or a user of --users")
		return
	}
	s.mux.ServeHTTP(rec, r.WithContext(context.WithValue(r.Context(), ctxKey{}, id)))
}
