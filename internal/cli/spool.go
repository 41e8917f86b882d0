package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	fathomrun "github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/durable"
	"github.com/fathom-lab/fathom/internal/store/postgres"
	"github.com/fathom-lab/fathom/internal/store/stores"
)

// outageOpts is --store-outage: how long a run, an experiment or an agent rides out
// an outage of a PostgreSQL store (store/durable) before it stops.
type outageOpts struct{ bound time.Duration }

func (o *outageOpts) register(fs *pflag.FlagSet) {
	positiveDurationVarP(fs, &o.bound, "store-outage", "", durable.DefaultBound,
		"with a postgres:// --store: keep measuring through a store outage this long, keeping what could not be written (in memory, then in a private spool file) and writing it when the store returns")
}

// opener opens a writer's store: a PostgreSQL store rides out outages; a SQLite file
// is as it was (a lock is waited for by SQLite itself).
func (o *outageOpts) opener(env *Env) func(string) (store.Store, error) {
	return func(path string) (store.Store, error) {
		st, err := fathomrun.OpenStore(path)
		if err != nil || !stores.IsPostgres(path) {
			return st, err
		}
		return durable.Wrap(st, durable.Options{Bound: o.bound, Dir: spoolDir(env), Unreachable: postgres.Unreachable,
			Warn: func(msg string) { fmt.Fprintf(env.Stderr, "fathom: warning: %s\n", msg) }}), nil
	}
}

func (o *outageOpts) open(env *Env, path secret.DSN) (store.Store, error) {
	return o.opener(env)(path.Reveal())
}

// spoolDir is where spool files are made: $FATHOM_SPOOL_DIR, else
// $XDG_STATE_HOME/fathom/spool, else ~/.local/state/fathom/spool, else
// fathom-spool-UID in the temporary directory (made private, refused when another
// user owns it).
func spoolDir(env *Env) string {
	if d := env.Getenv("FATHOM_SPOOL_DIR"); d != "" {
		return d
	}
	if d := env.Getenv("XDG_STATE_HOME"); d != "" {
		return filepath.Join(d, "fathom", "spool")
	}
	if h := env.Getenv("HOME"); h != "" && h != "/" {
		return filepath.Join(h, ".local", "state", "fathom", "spool")
	}
	tmp := env.Getenv("TMPDIR")
	if tmp == "" {
		tmp = "/tmp"
	}
	return filepath.Join(tmp, "fathom-spool-"+strconv.Itoa(os.Geteuid()))
}

// newStoreUploadCmd is `fathom store upload FILE`: what a run kept in its spool file,
// past its --store-outage bound, written to the store it belongs to.
func newStoreUploadCmd(env *Env) *cobra.Command {
	var path secret.DSN
	cmd := &cobra.Command{
		Use:   "upload FILE",
		Short: "Write what a run kept in its spool file during a store outage to the store (idempotent: run it again after an interruption)",
		Args:  cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("store upload takes one spool file (the one the run named when it stopped)")
			}
			file := args[0]
			if err := safefile.Check(file); err != nil {
				return usagef("%v", err)
			}
			belongs, err := durable.ReadHeader(file)
			if err != nil {
				if errors.Is(err, durable.ErrSpool) || errors.Is(err, os.ErrNotExist) {
					return usagef("%v", err)
				}
				return withCode(exitFailure, err)
			}
			if !cmd.Flags().Changed("store") && env.Getenv("FATHOM_STORE") == "" {
				path = stores.DSN(belongs)
			}
			if got := stores.Display(path.Reveal()); got != belongs {
				return usagef("%s holds writes for %s, not %s: give --store %s (the password from PGPASSWORD or ~/.pgpass)", file, belongs, got, belongs)
			}
			st, err := openStore(path)
			if err != nil {
				return err
			}
			defer st.Close()
			up, err := durable.Upload(cmd.Context(), st, file)
			if err != nil {
				if errors.Is(err, durable.ErrSpool) {
					return usagef("%v", err)
				}
				return withCode(exitFailure, fmt.Errorf("%v (what was written stays written: run the upload again)", err))
			}
			fmt.Fprintln(env.Stdout, up.Line(file))
			return nil
		},
	}
	storeFlag(cmd.Flags(), env, &path)
	return cmd
}
