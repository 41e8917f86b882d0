package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/fathom-lab/fathom/internal/safefile"
)

// Dir holds check state: one file per server and check with the samples earlier runs
// need for deltas, and one sample cache per server. Files are written atomically
// (temporary file and rename) under an advisory lock (flock), so concurrent
// invocations of the same check, as Nagios may start, are safe.
type Dir struct {
	Path string
}

const stateVersion = 1

// stateFile is what one check keeps between runs: the newest two samples, distinct in
// time, of only the variables its expression needs.
type stateFile struct {
	Version    int           `json:"version"`
	Check      string        `json:"check"`
	Server     string        `json:"server"`
	Expression string        `json:"expression,omitempty"`
	Samples    []stateSample `json:"samples"`
}

type stateSample struct {
	Time       time.Time `json:"time"`
	Started    float64   `json:"started"`
	StatsReset float64   `json:"stats_reset,omitempty"`
	Vars       vars      `json:"vars"`
}

// fileName makes a safe file name component from anything.
func fileName(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	out := strings.Trim(b.String(), ".")
	if len(out) > 100 {
		out = out[:100]
	}
	if out == "" {
		out = "_"
	}
	return out
}

func (d Dir) ensure() error {
	if d.Path == "" {
		return errors.New("no state directory: give --state-dir")
	}
	// State decides check results: a directory another user can write to (a shared
	// /tmp path) would let them change those results, or plant links.
	if err := safefile.Dir(d.Path, 0o700); err != nil {
		if errors.Is(err, safefile.ErrUnsafe) {
			return fmt.Errorf("state directory: %v (or give --state-dir)", err)
		}
		return fmt.Errorf("state directory %s: %v", d.Path, pathError(err))
	}
	return nil
}

func pathError(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// lock takes the advisory lock of path, waiting until ctx is done.
func lock(ctx context.Context, path string) (*flock.Flock, error) {
	if err := safefile.Check(path + ".lock"); err != nil {
		return nil, err
	}
	fl := flock.New(path+".lock", flock.SetFlag(os.O_CREATE|os.O_RDWR|safefile.NoFollow), flock.SetPermissions(0o600))
	ok, err := fl.TryLockContext(ctx, 20*time.Millisecond)
	if err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("waiting for the lock on %s: %v", path, ctx.Err())
		}
		return nil, fmt.Errorf("locking %s: %v", path, pathError(err))
	}
	if !ok {
		return nil, fmt.Errorf("could not lock %s", path)
	}
	return fl, nil
}

// writeAtomic replaces path with data: a reader sees the old file or the new one,
// never a part.
func writeAtomic(path string, data []byte) error {
	if err := safefile.WriteFile(path, data); err != nil {
		return fmt.Errorf("writing %s: %v", path, pathError(err))
	}
	return nil
}

func (d Dir) statePath(kind, server, check string) string {
	return filepath.Join(d.Path, fileName(kind+"_"+server+"_"+check)+".state.json")
}

// samplePath names a server's sample cache by everything that changes what a check
// reads: kind, host and port, and the digest of user, credentials and database.
func (d Dir) samplePath(kind, server, identity string) string {
	return filepath.Join(d.Path, fileName(kind+"_"+server)+"_"+fileName(identity)+".sample.json")
}

// update runs fn on a check's stored samples under the check's lock and stores what
// it returns. A missing or unreadable state file gives no samples (a new baseline).
func (d Dir) update(ctx context.Context, kind, server, check, expression string, fn func(prev []stateSample) []stateSample) error {
	if err := d.ensure(); err != nil {
		return err
	}
	path := d.statePath(kind, server, check)
	fl, err := lock(ctx, path)
	if err != nil {
		return err
	}
	defer fl.Unlock()
	var st stateFile
	if b, err := os.ReadFile(path); err == nil {
		if json.Unmarshal(b, &st) != nil || st.Version != stateVersion || st.Expression != expression {
			st = stateFile{}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("reading %s: %v", path, pathError(err))
	}
	samples := fn(st.Samples)
	out, err := json.MarshalIndent(stateFile{Version: stateVersion, Check: check, Server: server, Expression: expression, Samples: samples}, "", "  ")
	if err != nil {
		return err
	}
	return writeAtomic(path, out)
}

// cachedSample returns a sample of the server no older than maxAge, reading it with
// fetch when the cache has none. Concurrent callers wait for one fetch instead of
// each querying the server. fresh reports whether fetch was called.
func (d Dir) cachedSample(ctx context.Context, kind, server, identity string, maxAge time.Duration, now func() time.Time, fetch func() (*Sample, error)) (s *Sample, fresh bool, err error) {
	if maxAge <= 0 || d.Path == "" {
		s, err = fetch()
		return s, true, err
	}
	if err := d.ensure(); err != nil {
		return nil, false, err
	}
	path := d.samplePath(kind, server, identity)
	fl, err := lock(ctx, path)
	if err != nil {
		return nil, false, err
	}
	defer fl.Unlock()
	if b, err := os.ReadFile(path); err == nil {
		var c Sample
		if json.Unmarshal(b, &c) == nil && c.Kind == kind && c.Server == server {
			age := now().Sub(c.Time)
			if age >= 0 && age <= maxAge {
				return &c, false, nil
			}
		}
	}
	s, err = fetch()
	if err != nil {
		return nil, true, err
	}
	b, err := json.Marshal(s)
	if err != nil {
		return nil, true, err
	}
	return s, true, writeAtomic(path, b)
}

// serverKey is host:port of a DSN as fathom prints it (password already removed),
// used to name state and cache files. A missing port is defaultPort (the kind's).
func serverKey(defaultPort, redacted string) string {
	port := defaultPort
	host := "localhost"
	if u, err := url.Parse(redacted); err == nil && u.Scheme != "" && u.Opaque == "" {
		if h := u.Hostname(); h != "" {
			host = h
		}
		if p := u.Port(); p != "" {
			port = p
		}
		if sock := u.Query().Get("socket"); sock != "" {
			host = sock
		}
		if h := u.Query().Get("host"); h != "" {
			host = h
		}
		return net.JoinHostPort(host, port)
	}
	for _, f := range strings.Fields(redacted) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch strings.ToLower(k) {
		case "host":
			host = strings.Trim(v, "'")
		case "port":
			port = strings.Trim(v, "'")
		}
	}
	return net.JoinHostPort(host, port)
}
