package cli

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/workload/builtin"
)

// Shell completion: cobra's `fathom completion bash|zsh|fish|powershell` (its scripts
// call back into `fathom __complete`), with what fathom knows beyond flag names: the
// built-in workloads for -w, the newest run ids of the store for the commands that take
// a run, plan files for experiment, instance names for the instance commands, results
// stores by extension. Completion never creates a store, never connects to a server
// (a postgres:// store is not listed at TAB) and never prints an error.
func addCompletions(root *cobra.Command, env *Env) {
	root.CompletionOptions.DisableDefaultCmd = false
	root.CompletionOptions.HiddenDefaultCmd = false
	var walk func(*cobra.Command)
	walk = func(c *cobra.Command) {
		if f := c.Flags().Lookup("workload"); f != nil && c.Name() != "runs" {
			_ = c.RegisterFlagCompletionFunc("workload", completeWorkloads)
		}
		if c.Flags().Lookup("store") != nil {
			_ = c.RegisterFlagCompletionFunc("store", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return []string{"db", "sqlite", "sqlite3"}, cobra.ShellCompDirectiveFilterFileExt
			})
		}
		switch c.CommandPath() {
		case "fathom show", "fathom report", "fathom export", "fathom compare", "fathom stalls":
			c.ValidArgsFunction = completeRuns(env)
		case "fathom experiment":
			c.ValidArgsFunction = func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return []string{"yaml", "yml"}, cobra.ShellCompDirectiveFilterFileExt
			}
		case "fathom instance stop", "fathom instance dsn", "fathom instance restart":
			c.ValidArgsFunction = completeInstances
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// completeWorkloads offers the built-in workloads; a workload file is a path, so the
// shell's own file completion stays on.
func completeWorkloads(_ *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	var out []string
	for _, n := range builtin.Names() {
		if strings.HasPrefix(n, prefix) {
			out = append(out, n)
		}
	}
	return out, cobra.ShellCompDirectiveDefault
}

// completeRuns offers "last" and the store's newest runs (id, then workload and start
// time as the description shells show), from a SQLite store that exists.
func completeRuns(env *Env) func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
	return func(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
		out := []string{"last\tthe newest run"}
		path := defaultStore(env)
		if v := env.Getenv("FATHOM_STORE"); v != "" {
			path = v
		}
		if f := cmd.Flags().Lookup("store"); f != nil && f.Changed {
			path = f.Value.(storeValue).p.Reveal()
		}
		if stores.IsPostgres(path) {
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		st, err := stores.Open(path)
		if err != nil {
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		defer st.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		runs, err := st.Runs(ctx, store.RunFilter{Limit: 30})
		if err != nil {
			return out, cobra.ShellCompDirectiveNoFileComp
		}
		for _, r := range runs {
			id := fmt.Sprint(r.ID)
			if strings.HasPrefix(id, prefix) {
				out = append(out, fmt.Sprintf("%s\t%s %s %s", id, r.Workload, r.Status, r.StartedAt.Local().Format("2006-01-02 15:04")))
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder
	}
}

// completeInstances offers the names of the instances in --instance-dir.
func completeInstances(cmd *cobra.Command, _ []string, prefix string) ([]string, cobra.ShellCompDirective) {
	dir, _ := cmd.Flags().GetString("instance-dir")
	list, err := instance.List(dir)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []string
	for _, in := range list {
		if strings.HasPrefix(in.Name, prefix) {
			out = append(out, in.Name+"\t"+string(in.Kind))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}
