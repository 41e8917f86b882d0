package cli

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/report"
	"github.com/fathom-lab/fathom/internal/secret"
)

// historyOpts are what history and regressions share: the store, which series, and
// how changes are looked for.
type historyOpts struct {
	store        secret.DSN
	metrics      []string
	alpha        float64
	minChange    percentValue
	permutations int
	minSize      int
	keyLabels    []string
	asJSON       bool
	format       string
}

func (o *historyOpts) register(fs *pflag.FlagSet, env *Env) {
	storeFlag(fs, env, &o.store)
	fs.StringSliceVar(&o.metrics, "metric", report.DefaultHistoryMetrics, "figures to look for changes in: tps, p50, p95, p99, p999, mean, errors (comma-separated)")
	fs.Float64Var(&o.alpha, "alpha", 0.01, "false-positive level of each change's permutation test (0 < alpha < 1)")
	fs.Var(&o.minChange, "min-change", "smallest move of the median reported as a change, in percent (default 5; 0: any)")
	fs.IntVar(&o.permutations, "permutations", 199, "shuffles per permutation test (at least 1/alpha − 1)")
	fs.IntVar(&o.minSize, "min-runs", 3, "fewest runs on either side of a change (at least 2)")
	fs.StringArrayVar(&o.keyLabels, "key-label", nil, "a label that is part of the series key (repeatable): runs differing in it are different series")
	fs.BoolVar(&o.asJSON, "json", false, "print JSON (-f json)")
}

func (o *historyOpts) detection() (analyze.ChangeOptions, error) {
	if !(o.alpha > 0 && o.alpha < 1) {
		return analyze.ChangeOptions{}, usagef("--alpha %g: use a level between 0 and 1, e.g. 0.01", o.alpha)
	}
	if o.minSize < 2 {
		return analyze.ChangeOptions{}, usagef("--min-runs %d: use 2 or more", o.minSize)
	}
	if need := int(1/o.alpha+0.5) - 1; o.permutations < need {
		return analyze.ChangeOptions{}, usagef("--permutations %d: at --alpha %g use at least %d (a p-value is never below 1/(permutations+1))", o.permutations, o.alpha, need)
	}
	if err := report.CheckHistoryMetrics(o.metrics); err != nil {
		return analyze.ChangeOptions{}, err
	}
	co := analyze.ChangeOptions{Alpha: o.alpha, Permutations: o.permutations, MinSize: o.minSize, MinMagnitude: 0.05}
	if o.minChange.set {
		co.MinMagnitude = o.minChange.v / 100
		if co.MinMagnitude == 0 {
			co.MinMagnitude = -1 // any
		}
	}
	return co, nil
}

func newHistoryCmd(env *Env) *cobra.Command {
	o := &historyOpts{}
	cmd := &cobra.Command{
		Use:   "history [SERIES|RUN]",
		Short: "A series' runs over time with the changes found in them (no argument: list the series)",
		Long: `history follows one benchmark over time. Runs that measure the same thing form a series:
same workload and options, target, clients, rate and duration (an experiment's runs: the same
cell), or the same --series NAME. Changes in tps, p99 and errors (--metric) are found by
E-Divisive Means with a permutation test, each with the figures either side and what else
changed in the stored provenance (settings, server version, host, fathom version, options).

SERIES is a name given with run --series, or an id from the list (s and 10 hex digits);
RUN (an id or last) means that run's series.`,
		Example: `  fathom history
  fathom history last
  fathom history nightly-pgbench --metric tps,p95 --min-change 10
  fathom history s1a2b3c4d5e -f csv > series.csv`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			kinds := []report.Kind{report.KindHistory}
			if len(args) == 0 {
				kinds = []report.Kind{report.KindSeriesList}
			}
			out, err := chooseFormat(cmd.CommandPath(), o.format, o.asJSON, kinds...)
			if err != nil {
				return err
			}
			co, err := o.detection()
			if err != nil {
				return err
			}
			st, err := openStore(o.store)
			if err != nil {
				return storeError(err)
			}
			defer st.Close()
			ctx := cmd.Context()
			if len(args) == 0 {
				l, err := report.ListSeries(ctx, st, o.keyLabels)
				if err != nil {
					return err
				}
				return out.Write(ctx, env.Stdout, l)
			}
			id, key, runs, err := report.LoadSeries(ctx, st, args[0], o.keyLabels)
			if err != nil {
				return err
			}
			h, err := report.BuildHistory(id, key, runs, o.metrics, co)
			if err != nil {
				return err
			}
			h.Store = o.store.String()
			return out.Write(ctx, env.Stdout, h)
		},
	}
	o.register(cmd.Flags(), env)
	formatFlag(cmd.Flags(), &o.format, "text", report.KindHistory, report.KindSeriesList)
	return cmd
}

func newRegressionsCmd(env *Env) *cobra.Command {
	o := &historyOpts{}
	var newest int
	var hook webhookOpts
	cmd := &cobra.Command{
		Use:   "regressions SERIES|RUN",
		Short: "For CI: did the newest runs of a series regress? (exit 6 when they did)",
		Long: fmt.Sprintf(`regressions looks for changes in a series (as history does) and answers for its newest
runs (--newest): a change for the worse (tps down, latency or errors up) whose first run is one
of them is a regression. Exit codes: %d no regression, %d regression, %d bad input, %d the store
could not be read. A change is seen once --min-runs runs follow it.`, exitOK, exitRegression, exitUsage, exitFailure),
		Example: `  fathom regressions nightly-pgbench --newest 3
  fathom regressions last -f junit > regressions.xml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			out, err := chooseFormat(cmd.CommandPath(), o.format, o.asJSON, report.KindRegressions)
			if err != nil {
				return err
			}
			if newest < 1 {
				return usagef("--newest %d: check at least the newest run (1)", newest)
			}
			if err := hook.check(); err != nil {
				return err
			}
			co, err := o.detection()
			if err != nil {
				return err
			}
			st, err := openStore(o.store)
			if err != nil {
				return storeError(err)
			}
			defer st.Close()
			ctx := cmd.Context()
			id, key, runs, err := report.LoadSeries(ctx, st, args[0], o.keyLabels)
			if err != nil {
				return err
			}
			h, err := report.BuildHistory(id, key, runs, o.metrics, co)
			if err != nil {
				return err
			}
			h.Store = o.store.String()
			r := report.CheckRegressions(h, newest)
			if err := out.Write(ctx, env.Stdout, r); err != nil {
				return withCode(exitFailure, err)
			}
			if err := hook.send(ctx, r); err != nil {
				return err
			}
			if r.Regressed() {
				var ms []string
				for _, f := range r.Found {
					ms = append(ms, fmt.Sprintf("%s at run %d", f.Metric, f.RunID))
				}
				return withCode(exitRegression, fmt.Errorf("series %s regressed: %s", h.ID, strings.Join(ms, ", ")))
			}
			return nil
		},
	}
	o.register(cmd.Flags(), env)
	cmd.Flags().IntVar(&newest, "newest", 1, "how many of the series' newest complete runs to check")
	hook.register(cmd.Flags())
	formatFlag(cmd.Flags(), &o.format, "text", report.KindRegressions)
	return cmd
}

// webhookOpts post the changes a regression check found to a webhook.
type webhookOpts struct {
	url, format, link string
	always            bool
}

func (w *webhookOpts) register(fs *pflag.FlagSet) {
	fs.StringVar(&w.url, "webhook", "", "post the changes found in the newest runs to this URL (http or https)")
	fs.StringVar(&w.format, "webhook-format", "json", "the webhook's payload: json (generic) or slack (Slack-compatible {\"text\": …})")
	fs.StringVar(&w.link, "link", "", "the fathom serve address the message links the series' history page on, e.g. https://bench.example.com")
	fs.BoolVar(&w.always, "webhook-always", false, "post also when nothing changed (default: only when a change is found)")
}

func (w *webhookOpts) check() error {
	if w.url == "" {
		return nil
	}
	if !slices.Contains(report.WebhookFormats, w.format) {
		return usagef("--webhook-format %q: use json or slack", w.format)
	}
	u, err := url.Parse(w.url)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--webhook: give an http:// or https:// URL")
	}
	if w.link != "" {
		if l, err := url.Parse(w.link); err != nil || (l.Scheme != "http" && l.Scheme != "https") || l.Host == "" {
			return usagef("--link %q: give the http:// or https:// address of fathom serve", w.link)
		}
	}
	return nil
}

// send posts r's changes; an unreachable or refusing webhook is exit 1 with one line
// (the URL is not printed: webhook URLs carry their secret in the path).
func (w *webhookOpts) send(ctx context.Context, r *report.Regressions) error {
	if w.url == "" || (!w.always && len(r.Found)+len(r.Better) == 0) {
		return nil
	}
	body, err := report.WebhookPayload(r, w.format, report.HistoryLink(w.link, r.History.ID))
	if err != nil {
		return usagef("%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.url, bytes.NewReader(body))
	if err != nil {
		return usagef("--webhook: give an http:// or https:// URL")
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		host := req.URL.Host
		return withCode(exitFailure, fmt.Errorf("posting to the webhook on %s failed: %s", host, strings.ReplaceAll(err.Error(), w.url, host)))
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return withCode(exitFailure, fmt.Errorf("the webhook on %s answered %s", req.URL.Host, resp.Status))
	}
	return nil
}
