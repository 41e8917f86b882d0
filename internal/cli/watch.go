package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/cli/view"
	"github.com/fathom-lab/fathom/internal/collect"
	"github.com/fathom-lab/fathom/internal/db"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/secret"
)

type watchOpts struct {
	target         string
	store          secret.DSN
	duration       time.Duration
	interval       time.Duration
	connectTimeout time.Duration
	labels         []string
	quiet          bool
	asJSON         bool
	sampling       samplingOpts
	outage         outageOpts
}

func newWatchCmd(env *Env) *cobra.Command {
	o := &watchOpts{}
	cmd := &cobra.Command{
		Use:   "watch",
		Short: "Sample server and OS metrics without a benchmark, live, and store them as a watch session",
		Long: `watch runs the same collectors as a benchmark run, without a workload: while real
load runs, it shows the key rates every interval and stores everything in the results
database as a watch session (workload "watch"), so that it can be shown, reported and
compared like a run. Stalls are found in the server's own throughput (PostgreSQL's
commits, MySQL's statements). Without -T it runs until Ctrl-C.`,
		Example: `  fathom watch --target postgres://postgres@db1/app -P 5s
  fathom watch --target mysql://root@127.0.0.1/test -T 10m -P 10 --label change=before`,
		RunE: func(cmd *cobra.Command, args []string) error { return o.run(cmd.Context(), env) },
	}
	fs := cmd.Flags()
	def := env.Getenv("FATHOM_TARGET")
	if def == "" {
		def = defaultTarget
	}
	fs.StringVar(&o.target, "target", def, "database: postgres://…, mysql://…, sqlite:PATH (also $FATHOM_TARGET)")
	storeFlag(fs, env, &o.store)
	o.outage.register(fs)
	positiveDurationVarP(fs, &o.duration, "time", "T", 0, "how long to watch (default: until Ctrl-C)")
	positiveDurationVarP(fs, &o.interval, "report-interval", "P", time.Second, "sampling interval, e.g. 1, 10s")
	positiveDurationVarP(fs, &o.connectTimeout, "connect-timeout", "", 10*time.Second, "time allowed for each connection attempt")
	fs.StringArrayVar(&o.labels, "label", nil, "label key=value stored with the session (repeatable)")
	fs.BoolVarP(&o.quiet, "quiet", "q", false, "no live view")
	fs.BoolVar(&o.asJSON, "json", false, "print the final summary as JSON")
	fs.StringSliceVar(&o.sampling.Only, "collect", nil, "sample only these `collectors` or sources (see: fathom collectors)")
	fs.StringSliceVar(&o.sampling.Skip, "no-collector", nil, "leave out these collectors or sources")
	positiveDurationVarP(fs, &o.sampling.Timeout, "collect-timeout", "", 0, "time allowed for each collector per sample (default 2s, at most the interval)")
	fractionVar(fs, &o.sampling.Threshold, "stall-threshold", 0, "a stall is throughput below this fraction of the baseline (default 0.5)")
	positiveIntVarP(fs, &o.sampling.Window, "stall-window", "", 0, "stall baseline: the median of this many healthy intervals nearby (default 31)")
	return cmd
}

func (o *watchOpts) run(ctx context.Context, env *Env) error {
	labels := map[string]string{}
	for _, l := range o.labels {
		k, v, err := parseKV(l, "--label")
		if err != nil {
			return usagef("%v", err)
		}
		labels[k] = v
	}
	portable, err := portablePaths(env)
	if err != nil {
		return err
	}
	wo := run.WatchOptions{
		Getenv: env.Getenv,
		DSN:    o.target, ConnectTimeout: o.connectTimeout, PollerSockets: portable,
		Duration: o.duration, Interval: o.interval, Labels: labels, Sampling: o.sampling.Sampling,
		ToolVersion: version(), Command: redactArgs(env.Args), Now: env.Now,
	}
	wo.Sampling.NoProcfs = portable
	// Mistakes in the options are refused before the store is opened (or created).
	if err := wo.Check(); err != nil {
		return err
	}
	st, err := o.outage.open(env, o.store) // a PostgreSQL store rides out outages (store/durable)
	if err != nil {
		return err
	}
	defer st.Close()
	lines := view.NewWatchLines(db.KindOf(o.target), env.Stdout, env.Stderr, o.quiet)
	if env.Terminal {
		lines.Panel = env.Stderr
	}
	lines.Header = func(id int64, tgt string) {
		if !o.quiet {
			fmt.Fprintf(lines.Out, "watch %d: %s every %s%s; stored in %s\n", id, tgt, o.interval, untilText(o.duration), o.store)
		}
	}
	if o.asJSON {
		lines.Out = env.Stderr // stdout is for the JSON summary
	}
	runCtx, stop := env.Interrupts(ctx)
	defer stop()
	sum, err := run.Watch(runCtx, st, wo, lines)
	if sum == nil {
		return err
	}
	id := sum.RunID
	if o.asJSON {
		enc := json.NewEncoder(env.Stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(sum)
		return err
	}
	fmt.Fprintf(env.Stdout, "watch %d %s: %d samples over %s", id, sum.Status, sum.Samples, sum.Duration.Round(time.Millisecond))
	if sum.Skipped > 0 {
		fmt.Fprintf(env.Stdout, ", %d intervals skipped (sampling slower than -P)", sum.Skipped)
	}
	fmt.Fprintln(env.Stdout)
	names := make([]string, 0, len(sum.Failures))
	for n := range sum.Failures {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(env.Stdout, "  ! collector %s failed: %s\n", n, sum.Failures[n])
	}
	if sum.HostWarning != "" {
		fmt.Fprintf(env.Stdout, "! %s\n", sum.HostWarning)
	}
	if sum.Samples-1 < analyze.MinStallIntervals {
		fmt.Fprintf(env.Stdout, "stalls: too few intervals to look for them (%d; at least %d)\n", max(sum.Samples-1, 0), analyze.MinStallIntervals)
	} else {
		report.WriteStallList(env.Stdout, sum.Stalls, id)
	}
	fmt.Fprintf(env.Stdout, "see it again: fathom show %d --store %s\n", id, o.store)
	return err
}

func untilText(d time.Duration) string {
	if d <= 0 {
		return " until Ctrl-C"
	}
	return " for " + d.String()
}

// newCollectorsCmd lists the collectors.
func newCollectorsCmd(env *Env) *cobra.Command {
	var asJSON, metrics bool
	cmd := &cobra.Command{
		Use:   "collectors",
		Short: "List the server and OS collectors that run, watch and snapshot sample",
		RunE: func(cmd *cobra.Command, args []string) error {
			list := collect.List(db.CollectAll()...)
			if asJSON {
				enc := json.NewEncoder(env.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(list)
			}
			tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
			if metrics {
				fmt.Fprintln(tw, "METRIC\tKIND\tUNIT\tCOLLECTOR\tMEANING")
				for _, c := range list {
					for _, m := range c.Metrics {
						name := m.Name
						if m.Family {
							name += "*"
						}
						fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", name, m.Kind, m.Unit, c.Name, m.Help)
					}
				}
				return tw.Flush()
			}
			fmt.Fprintln(tw, "SOURCE\tCOLLECTOR\tSINCE\tREADS")
			for _, c := range list {
				since := c.MinVersion
				if since == "" {
					since = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Source, c.Name, since, c.Help)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as JSON")
	cmd.Flags().BoolVar(&metrics, "metrics", false, "list the metrics each collector declares (name, kind, unit, meaning)")
	return cmd
}
