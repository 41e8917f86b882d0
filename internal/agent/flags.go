package agent

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/runner"
	"github.com/fathom-lab/fathom/internal/secret"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/postgres"
)

// RunFlags are `fathom run`'s flags for a run made by agents.
type RunFlags struct {
	Agents      int
	Name        string
	Wait        time.Duration
	LossTimeout time.Duration
}

// Register adds the flags to fs.
func (f *RunFlags) Register(fs *pflag.FlagSet) {
	fs.IntVar(&f.Agents, "agents", 0, "run the clients on `N` agents (fathom agent) on other machines, coordinated through a postgres:// --store")
	fs.StringVar(&f.Name, "name", "", "with --agents: the name agents started with --run join (default run-DATE-TIME)")
	fs.DurationVar(&f.Wait, "agents-wait", 2*time.Minute, "with --agents: how long to wait for every agent to join")
	fs.DurationVar(&f.LossTimeout, "agents-lost-after", 10*time.Second, "with --agents: an agent silent this long is lost (the run becomes partial)")
}

// Apply makes o a run by agents when --agents was given, after every other change
// to o; st is the run's --store (agents coordinate through it), events hears the
// coordinator's progress.
func (f *RunFlags) Apply(o *run.Options, st secret.DSN, events Listener) error {
	switch {
	case f.Agents == 0:
		if f.Name != "" {
			return errkind.Usagef("--name names a run made by agents: add --agents N")
		}
		return nil
	case f.Agents < 0:
		return errkind.Usagef("--agents %d: give a number of agents of 1 or more", f.Agents)
	case !postgres.IsDSN(st.Reveal()):
		return errkind.Usagef("--agents: agents coordinate through a PostgreSQL results store that every machine reaches; give --store postgres://user@host/fathom (%q is a file on this machine)", st)
	case o.Scripts != nil:
		return errkind.Usagef("--agents: pgbench scripts (-f, -b) are not run by agents yet; use a workload (--workload)")
	case f.Wait <= 0 || f.LossTimeout <= 0:
		return errkind.Usagef("--agents-wait and --agents-lost-after must be above zero")
	}
	name := f.Name
	if name == "" {
		name = "run-" + time.Now().UTC().Format("20060102-150405")
	}
	p := Plan{Agents: f.Agents, Name: name, Wait: f.Wait, LossTimeout: f.LossTimeout, StoreShown: st.Masked(), Events: events}
	o.Remote = p.Remote(*o)
	return nil
}

// Flags are `fathom agent`'s flags.
type Flags struct {
	Run         string
	Index       int
	Wait        time.Duration
	Target      string
	LossTimeout time.Duration
	Recover     string
}

// Register adds the flags to fs.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Run, "run", "", "join the run of this --name once, then exit (a Kubernetes Job's pod); default: serve runs until stopped")
	fs.IntVar(&f.Index, "index", -1, "with --run: this agent's index, 0 to N-1; -1 takes $JOB_COMPLETION_INDEX")
	fs.DurationVar(&f.Wait, "wait", 10*time.Minute, "with --run: how long to wait for the coordinator to open the run")
	fs.StringVar(&f.Target, "target", "", "reach the target with this DSN instead of the run's (the run's carries no password: it comes from PGPASSWORD, .pgpass, MYSQL_PWD …)")
	fs.DurationVar(&f.LossTimeout, "lost-after", 10*time.Second, "stop when the store or the coordinator is unreachable this long")
	fs.StringVar(&f.Recover, "recover", "", "close the run `NAME` whose coordinator is gone (silent for --lost-after): its agents are stopped, the intervals they stored after it died are merged into the run, which ends interrupted, and the name is free again")
}

// Host is what an agent process needs of its environment.
type Host struct {
	Getenv        func(string) string
	Events        Listener // the agent's progress
	Version       string
	Tuner         runner.Tuner
	PollerSockets bool
	// OpenStore opens the store (nil: run.OpenStore); the front end may wrap it to ride
	// out outages (store/durable).
	OpenStore func(path string) (store.Store, error)
	// StoreOutage is how long that store rides out an outage (0: it does not).
	StoreOutage time.Duration
}

// Execute runs `fathom agent` against the store at storeURL until its run ends
// (--run) or ctx ends.
func (f *Flags) Execute(ctx context.Context, storeURL secret.DSN, h Host) error {
	index := f.Index
	if f.Run != "" && index < 0 {
		v := strings.TrimSpace(h.Getenv("JOB_COMPLETION_INDEX"))
		if v == "" {
			return errkind.Usagef("--run %s needs this agent's index: --index I (0 to N-1) or JOB_COMPLETION_INDEX", f.Run)
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return errkind.Usagef("JOB_COMPLETION_INDEX=%q: want a whole number of 0 or more", v)
		}
		index = n
	} else if f.Run == "" && index >= 0 && f.Recover == "" {
		return errkind.Usagef("--index goes with --run NAME; without --run an agent takes the lowest free index of any run")
	}
	if f.Wait <= 0 || f.LossTimeout <= 0 {
		return errkind.Usagef("--wait and --lost-after must be above zero")
	}
	if !postgres.IsDSN(storeURL.Reveal()) {
		return errkind.Usagef("agents coordinate through a PostgreSQL results store that every machine reaches: give --store postgres://user@host/fathom (%q is a file on this machine)", storeURL)
	}
	open := h.OpenStore
	if open == nil {
		open = run.OpenStore
	}
	st, err := open(storeURL.Reveal())
	if err != nil {
		return err
	}
	defer st.Close()
	if f.Recover != "" {
		if f.Run != "" {
			return errkind.Usagef("--recover closes a run; --run joins one: give one of them")
		}
		rec, err := recoverRun(ctx, st, f.Recover, f.LossTimeout)
		if err != nil {
			return err
		}
		if h.Events != nil {
			h.Events.Event(Closed{Recovered: rec})
		}
		return nil
	}
	as, err := agentStore(st)
	if err != nil {
		return err
	}
	a := &agent{Store: as, Target: f.Target, Getenv: h.Getenv, PollerSockets: h.PollerSockets, Host: collect.HostFacts().Hostname,
		Version: h.Version, PID: store.ThisProcess().PID, Tuner: h.Tuner, LossTimeout: f.LossTimeout, StoreOutage: h.StoreOutage, Events: h.Events}
	if f.Run != "" {
		_, err := a.once(ctx, f.Run, index, f.Wait)
		return err
	}
	err = a.serve(ctx, func(o *Outcome, err error) {
		if err != nil {
			a.Events.Event(JobFailed{Err: err})
		}
	})
	if err == nil && ctx.Err() != nil {
		return errkind.WithKind(errkind.Interrupted, fmt.Errorf("agent stopped"))
	}
	return err
}
