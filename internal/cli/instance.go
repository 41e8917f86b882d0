package cli

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/instance"
)

func newInstanceCmd(env *Env) *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "instance",
		Short: "Start, list and stop throwaway local PostgreSQL, MariaDB and Redis servers",
		Long: `fathom can start its own servers for experiments: a PostgreSQL cluster (initdb + pg_ctl)
or a MariaDB data directory (mariadb-install-db + mariadbd) in a work directory, on a
free port and its own socket, never touching the machine's default servers. As root the
server runs as the postgres or mysql user. Plans start and remove them by themselves
(instance: in a plan); these commands are for using one by hand.`,
		Example: `  fathom instance start --kind postgres --name pg1 --set shared_buffers=256MB
  fathom instance start --kind mariadb --name my1 --port-range 40000-40099
  fathom prepare --target "$(fathom instance dsn pg1)" --workload tpcb
  fathom instance list
  fathom instance stop pg1`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown instance command %q: use start, stop, restart, list or dsn", args[0])
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return cmd.Help() },
	}
	def := env.Getenv("FATHOM_INSTANCE_DIR")
	// --instance-dir, as on `fathom experiment`; --dir is the old name, kept working.
	cmd.PersistentFlags().StringVar(&dir, "instance-dir", def, "base directory of instances (also $FATHOM_INSTANCE_DIR; default "+instance.DefaultDir()+")")
	cmd.PersistentFlags().StringVar(&dir, "dir", def, "old name of --instance-dir")
	_ = cmd.PersistentFlags().MarkDeprecated("dir", "use --instance-dir (the same option as on fathom experiment)")
	cmd.AddCommand(newInstanceStartCmd(env, &dir), newInstanceStopCmd(env, &dir), newInstanceListCmd(env, &dir), newInstanceDSNCmd(env, &dir), newInstanceRestartCmd(env, &dir))
	return cmd
}

func newInstanceStartCmd(env *Env, dir *string) *cobra.Command {
	var kind, name, ver, bin, portRange string
	var sets []string
	var port int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "start [--kind postgres|mariadb|redis] [--name NAME] [--port N | --port-range A-B]",
		Short: "Create and start an instance (or start a stopped one by its name)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			var settings []instance.Setting
			for _, s := range sets {
				k, v, err := parseKV(s, "--set")
				if err != nil {
					return usagef("%v", err)
				}
				settings = append(settings, instance.Setting{Name: k, Value: v})
			}
			var ports *instance.Ports
			var err error
			switch fl := cmd.Flags(); {
			case fl.Changed("port") && fl.Changed("port-range"):
				return usagef("give --port or --port-range, not both")
			case fl.Changed("port"):
				if ports, err = instance.PortOf(port); err != nil {
					return usagef("--port: %v", err)
				}
			case fl.Changed("port-range"):
				if ports, err = instance.ParsePorts(portRange); err != nil {
					return usagef("--port-range: %v", err)
				}
			}
			if name != "" {
				if inst, err := instance.Find(*dir, name); err == nil {
					inst.Env = env.Environ
					if ports != nil {
						if err := inst.SetPorts(ports); err != nil {
							return withCode(exitFailure, err)
						}
					}
					return startExisting(ctx, env, inst, settings, cmd.Flags().Changed("set"), timeout)
				}
			}
			k, err := instance.ParseKind(kind)
			if err != nil {
				return usagef("--kind: %v", err)
			}
			if err := instance.CheckSettings(k, settings); err != nil {
				return usagef("--set: %v", err)
			}
			if name == "" {
				name = fmt.Sprintf("%s-%s", k, env.Now().Format("20060102-150405"))
			}
			if !instance.ValidName(name) {
				return usagef("--name %q: use letters, digits, '.', '_' and '-'", name)
			}
			ctx, stop := env.Interrupts(ctx)
			defer stop()
			inst, err := instance.Create(ctx, instance.Options{Kind: k, Name: name, Dir: *dir, Version: ver, Bin: bin, Settings: settings, StartTimeout: timeout,
				Owner: "fathom instance start", Env: env.Environ, Ports: ports})
			if err != nil {
				return withCode(exitFailure, err)
			}
			if err := inst.Start(ctx); err != nil {
				_ = inst.Remove(context.WithoutCancel(ctx))
				return withCode(exitFailure, err)
			}
			printInstance(env, inst, "started")
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&kind, "kind", "postgres", "postgres, mariadb or redis")
	fs.StringVar(&name, "name", "", "instance name (default: kind and time); an existing stopped instance of that name is started")
	fs.StringVar(&ver, "version", "", "PostgreSQL major version (default: the newest installed)")
	fs.StringVar(&bin, "bin", "", "directory of the server's programs (e.g. an unpacked PostgreSQL build's bin/), instead of the installed ones")
	fs.StringArrayVar(&sets, "set", nil, "server setting name=value (repeatable)")
	fs.IntVar(&port, "port", 0, "listen on this port (the start fails if it is taken); default: any free port")
	fs.StringVar(&portRange, "port-range", "", "take a free port in FIRST-LAST (e.g. what a firewall lets through)")
	positiveDurationVarP(fs, &timeout, "start-timeout", "", 60*time.Second, "how long to wait for the server to accept connections")
	return cmd
}

func startExisting(ctx context.Context, env *Env, inst *instance.Instance, settings []instance.Setting, reconfigure bool, timeout time.Duration) error {
	if reconfigure {
		if err := inst.Configure(settings); err != nil {
			return usagef("%v", err)
		}
	}
	inst.SetStartTimeout(timeout)
	if inst.Running() {
		if reconfigure {
			if err := inst.Restart(ctx); err != nil {
				return withCode(exitFailure, err)
			}
			printInstance(env, inst, "restarted")
			return nil
		}
		printInstance(env, inst, "already running")
		return nil
	}
	if err := inst.Start(ctx); err != nil {
		return withCode(exitFailure, err)
	}
	printInstance(env, inst, "started")
	return nil
}

func printInstance(env *Env, inst *instance.Instance, what string) {
	fmt.Fprintf(env.Stdout, "instance %s %s: %s %s on port %d\n", inst.Name, what, inst.Kind, inst.Version, inst.Port)
	fmt.Fprintf(env.Stdout, "  target:  %s\n", inst.DSN())
	if c := inst.Driver().Clients(inst).Command; c != "" {
		fmt.Fprintf(env.Stdout, "  client:  %s\n", c)
	}
	fmt.Fprintf(env.Stdout, "  socket:  %s\n", inst.Socket)
	fmt.Fprintf(env.Stdout, "  data:    %s\n", inst.DataDir())
	fmt.Fprintf(env.Stdout, "  log:     %s\n", inst.LogFile())
	for _, s := range inst.Settings {
		fmt.Fprintf(env.Stdout, "  setting: %s = %s\n", s.Name, s.Value)
	}
	fmt.Fprintf(env.Stdout, "stop and remove it with `fathom instance stop %s`\n", inst.Name)
}

func newInstanceStopCmd(env *Env, dir *string) *cobra.Command {
	var all, keep bool
	cmd := &cobra.Command{
		Use:   "stop NAME... | --all",
		Short: "Stop instances and remove them with their data (--keep: only stop)",
		Args: func(cmd *cobra.Command, args []string) error {
			if all == (len(args) > 0) {
				return usagef("%s needs instance names (see `fathom instance list`) or --all", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := context.WithoutCancel(cmd.Context())
			var insts []*instance.Instance
			if all {
				list, err := instance.List(*dir)
				if err != nil {
					return withCode(exitFailure, err)
				}
				insts = list
			} else {
				for _, n := range args {
					inst, err := instance.Find(*dir, n)
					if err != nil {
						return usagef("%v", err)
					}
					insts = append(insts, inst)
				}
			}
			for _, inst := range insts {
				inst.Env = env.Environ
			}
			failed := instance.StopAll(ctx, insts, keep, env.Stdout, env.Stderr)
			if len(failed) > 0 {
				return withCode(exitFailure, fmt.Errorf("could not stop %s", strings.Join(failed, ", ")))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "every instance in the directory")
	cmd.Flags().BoolVar(&keep, "keep", false, "only stop: keep the data directory to start it again later")
	return cmd
}

func newInstanceListCmd(env *Env, dir *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List instances: name, kind, port, running or stopped, owner",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := instance.List(*dir)
			if err != nil {
				return withCode(exitFailure, err)
			}
			return instance.WriteList(env.Stdout, list, asJSON, *dir)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print as JSON")
	return cmd
}

func newInstanceDSNCmd(env *Env, dir *string) *cobra.Command {
	return &cobra.Command{
		Use:   "dsn NAME",
		Short: "Print an instance's target DSN (for --target \"$(fathom instance dsn NAME)\")",
		Args:  exactArgs(1, "an instance name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			inst, err := instance.Find(*dir, args[0])
			if err != nil {
				return usagef("%v", err)
			}
			fmt.Fprintln(env.Stdout, inst.DSN())
			return nil
		},
	}
}

func newInstanceRestartCmd(env *Env, dir *string) *cobra.Command {
	var measure bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "restart NAME [--measure]",
		Short: "Stop and start an instance; --measure (Redis) reports the seconds until it answers again",
		Long: `restart stops an instance and starts it again. With --measure (Redis instances) it
reports how long the server took from its start until it answered a PING: the time to
load the data set from the append-only file (appendonly yes) or the RDB snapshot, with
the data set's size, as one line.`,
		Args: exactArgs(1, "an instance name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			inst, err := instance.Find(*dir, args[0])
			if err != nil {
				return usagef("%v", err)
			}
			inst.SetStartTimeout(timeout)
			ctx := cmd.Context()
			if !measure {
				if err := inst.Restart(ctx); err != nil {
					return withCode(exitFailure, err)
				}
				printInstance(env, inst, "restarted")
				return nil
			}
			rm, ok := db.ForInstance(inst.Kind).(db.RestartMeasurer)
			if !ok {
				return usagef("--measure is for %s instances; %s is %s", strings.Join(db.RestartMeasurers(), " or "), inst.Name, inst.Kind)
			}
			if !inst.Running() {
				return usagef("instance %s is not running: start it (fathom instance start --name %s) and load data first", inst.Name, inst.Name)
			}
			secs, loaded, err := rm.MeasureRestart(ctx, inst)
			if err != nil {
				return withCode(exitFailure, err)
			}
			fmt.Fprintf(env.Stdout, "instance %s restarted: answering after %.3f s, %s\n", inst.Name, secs, loaded)
			return nil
		},
	}
	cmd.Flags().BoolVar(&measure, "measure", false, "time the start until the server answers (Redis)")
	positiveDurationVarP(cmd.Flags(), &timeout, "start-timeout", "", 10*time.Minute, "how long to wait for the server to answer")
	return cmd
}
