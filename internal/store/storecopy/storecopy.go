// Package storecopy copies runs and experiments, with everything they carry, from one
// results store to another of any kind (`fathom store copy`). A run is known by its
// UUID in every store, so a copy made twice gives the same result: runs already in the
// destination are left as they are, experiments are brought up to date.
package storecopy

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// ErrSelect is wrapped by errors about a selection that names nothing usable.
var ErrSelect = errors.New("bad selection")

// selectError is a one-line message about the selection that wraps ErrSelect.
type selectError struct{ msg string }

func (e *selectError) Error() string        { return e.msg }
func (e *selectError) Is(target error) bool { return target == ErrSelect }

func selectf(format string, args ...any) error { return &selectError{fmt.Sprintf(format, args...)} }

// anonymized stood for what --anonymize dropped in copies made before pseudonyms;
// such text is left as it is.
const anonymized = "(anonymized)"

// Options say what to copy and what to leave out.
type Options struct {
	// Select names runs by id (12) or id range (3-7) in the source, and experiments
	// by name (exp:NAME, the newest of that name, with all its runs). None: every run
	// and every experiment.
	Select []string
	// Anonymize replaces what identifies hosts, networks and people (host names,
	// targets' hosts, ports, users and databases, IP addresses, paths and data
	// directories, devices, pids, UUIDs, kernel and CPU strings) with stable
	// pseudonyms, wherever they stand, for publishing results.
	Anonymize bool
	// KeepHardware keeps the kernel and CPU model strings when anonymizing.
	KeepHardware bool
	// Key is the secret the pseudonyms are made with (HMAC-SHA256); nil: a random
	// key for this copy. The same key gives the same pseudonyms in another copy.
	Key []byte
	// DropLabels are labels to leave out (with Anonymize or alone).
	DropLabels []string
}

// result says what a copy did.
type result struct {
	Copied, Existing int // runs copied, runs already in the destination
	Experiments      int
	// Skipped are runs still running in the source, one line each.
	Skipped []string
}

// Between opens the stores from and to (--store values) and copies what sel names
// (Options.Select) between them, saying what it did on stdout and what it skipped on
// stderr.
func Between(ctx context.Context, from, to string, sel []string, o Options, stdout, stderr io.Writer) error {
	o.Select = sel
	if _, err := os.Stat(from); !postgres.IsDSN(from) && errors.Is(err, fs.ErrNotExist) {
		return selectf("store %s does not exist: give FROM as an existing SQLite file or a postgres:// URL", stores.Display(from))
	}
	src, err := stores.Open(from)
	if err != nil {
		return err
	}
	defer src.Close()
	dst, err := stores.Open(to)
	if err != nil {
		return err
	}
	defer dst.Close()
	res, err := copyRuns(ctx, src, dst, o)
	if res != nil {
		for _, s := range res.Skipped {
			fmt.Fprintln(stderr, "fathom: "+s)
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "copied %d runs (%d already there) and %d experiments from %s to %s\n", res.Copied, res.Existing, res.Experiments, src.Path(), dst.Path())
	return nil
}

// copyRuns copies the selected runs and experiments from src to dst.
func copyRuns(ctx context.Context, src, dst store.Store, o Options) (*result, error) {
	runIDs, expIDs, err := selection(ctx, src, o.Select)
	if err != nil {
		return nil, err
	}
	res := &result{}
	var anon *anonymizer
	if o.Anonymize {
		key := o.Key
		if len(key) == 0 {
			key = make([]byte, 32)
			if _, err := rand.Read(key); err != nil {
				return nil, err
			}
		}
		anon = newAnonymizer(key, o.KeepHardware)
		// A first pass learns every name the records give in their structured fields
		// (hosts, users, databases, devices), so that a name is replaced wherever it
		// stands, also in the records copied before the one that names it.
		for _, id := range runIDs {
			rec, err := src.ExportRun(ctx, id)
			if err != nil {
				return res, err
			}
			anon.learnPIDs(rec.Run.PID)
			if rec.Source != nil {
				anon.learnPIDs(rec.Source.Server.PID)
			}
			anon.run(rec)
		}
		for _, id := range expIDs {
			rec, err := src.ExportExperiment(ctx, id)
			if err != nil {
				return res, err
			}
			anon.learnPIDs(rec.Experiment.PID)
			anon.experiment(rec)
		}
	}
	for _, id := range runIDs {
		rec, err := src.ExportRun(ctx, id)
		if err != nil {
			return res, err
		}
		if rec.Run.Status == "running" && !rec.Run.Gone {
			res.Skipped = append(res.Skipped, fmt.Sprintf("run %d is still running: copy it when it has ended", id))
			continue
		}
		dropLabels(rec, o.DropLabels)
		if anon != nil {
			anon.run(rec)
		}
		if _, existed, err := dst.ImportRun(ctx, rec); err != nil {
			return res, fmt.Errorf("run %d: %w", id, err)
		} else if existed {
			res.Existing++
		} else {
			res.Copied++
		}
	}
	for _, id := range expIDs {
		rec, err := src.ExportExperiment(ctx, id)
		if err != nil {
			return res, err
		}
		if anon != nil {
			anon.experiment(rec)
		}
		if _, err := dst.ImportExperiment(ctx, rec); err != nil {
			return res, fmt.Errorf("experiment %d: %w", id, err)
		}
		res.Experiments++
	}
	return res, nil
}

// selection resolves Select to run ids (oldest first, each once) and experiment ids.
func selection(ctx context.Context, src store.Store, sel []string) (runs, exps []int64, err error) {
	if len(sel) == 0 {
		all, err := src.Runs(ctx, store.RunFilter{})
		if err != nil {
			return nil, nil, err
		}
		for _, r := range all {
			runs = append(runs, r.ID)
		}
		es, err := src.Experiments(ctx, 0)
		if err != nil {
			return nil, nil, err
		}
		for _, e := range es {
			exps = append(exps, e.ID)
		}
	}
	for _, s := range sel {
		if name, ok := strings.CutPrefix(s, "exp:"); ok {
			e, err := src.ExperimentByName(ctx, name)
			if errors.Is(err, store.ErrNotFound) {
				return nil, nil, selectf("no experiment named %q in %s: see `fathom experiments --store %s`", name, src.Path(), src.Path())
			}
			if err != nil {
				return nil, nil, err
			}
			ers, err := src.ExperimentRuns(ctx, e.ID)
			if err != nil {
				return nil, nil, err
			}
			for _, r := range ers {
				runs = append(runs, r.RunID)
			}
			exps = append(exps, e.ID)
			continue
		}
		lo, hi, ok := strings.Cut(s, "-")
		if !ok {
			hi = lo
		}
		a, err1 := strconv.ParseInt(lo, 10, 64)
		b, err2 := strconv.ParseInt(hi, 10, 64)
		if err1 != nil || err2 != nil || a < 1 || b < a {
			return nil, nil, selectf("%q is not a run id, an id range (3-7) or exp:NAME", s)
		}
		for id := a; id <= b; id++ {
			if _, err := src.Run(ctx, id); err != nil {
				if errors.Is(err, store.ErrNotFound) && a != b {
					continue // a range may have holes
				}
				if errors.Is(err, store.ErrNotFound) {
					return nil, nil, selectf("no run %d in %s: see `fathom runs --store %s`", id, src.Path(), src.Path())
				}
				return nil, nil, err
			}
			runs = append(runs, id)
		}
	}
	slices.Sort(runs)
	slices.Sort(exps)
	return slices.Compact(runs), slices.Compact(exps), nil
}

func dropLabels(rec *store.RunRecord, keys []string) {
	for _, k := range keys {
		delete(rec.Run.Labels, k)
	}
}

// ReadKey reads a pseudonym key file (--pseudonym-key): at least 16 bytes, not
// readable by others.
func ReadKey(path string) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, selectf("--pseudonym-key %s: %v: create one with: head -c 32 /dev/urandom > %s; chmod 600 %s", path, reason(err), path, path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, selectf("--pseudonym-key %s is readable by others (mode %04o): chmod 600 it", path, fi.Mode().Perm())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, selectf("--pseudonym-key %s: %v", path, reason(err))
	}
	if len(b) < 16 {
		return nil, selectf("--pseudonym-key %s holds %d bytes, fewer than 16: create one with: head -c 32 /dev/urandom > %s", path, len(b), path)
	}
	return b, nil
}

func reason(err error) string {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "no such file"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	}
	return err.Error()
}
