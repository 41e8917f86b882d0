package instance

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteList writes instances as `fathom instance list` shows them: a table (name, kind,
// version, port, state, owner, target DSN, which names no secret), or JSON with running
// and dsn added to each instance's fields. dir names the directory when there are none.
func WriteList(w io.Writer, list []*Instance, asJSON bool, dir string) error {
	if asJSON {
		type row struct {
			*Instance
			Running bool   `json:"running"`
			DSN     string `json:"dsn"`
		}
		rows := []row{}
		for _, i := range list {
			rows = append(rows, row{i, i.Running(), i.DSN()})
		}
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	if len(list) == 0 {
		if dir == "" {
			dir = DefaultDir()
		}
		_, err := fmt.Fprintf(w, "no instances in %s\n", dir)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tKIND\tVERSION\tPORT\tSTATE\tOWNER\tTARGET")
	for _, i := range list {
		state := "stopped"
		if i.Running() {
			state = "running"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", i.Name, i.Kind, i.Version, i.Port, state, i.Owner, i.DSN())
	}
	return tw.Flush()
}

// StopAll stops each instance (keep) or stops and removes it with its data, saying so
// on out, one line each; an instance that cannot be stopped is said on errw and named
// in failed, and the others are still stopped.
func StopAll(ctx context.Context, insts []*Instance, keep bool, out, errw io.Writer) (failed []string) {
	for _, inst := range insts {
		var err error
		what := "stopped and removed"
		if keep {
			err, what = inst.Stop(ctx), "stopped (kept in "+inst.Path+")"
		} else {
			err = inst.Remove(ctx)
		}
		if err != nil {
			fmt.Fprintf(errw, "fathom: %v\n", err)
			failed = append(failed, inst.Name)
			continue
		}
		fmt.Fprintf(out, "instance %s %s\n", inst.Name, what)
	}
	if len(insts) == 0 {
		fmt.Fprintln(out, "no instances")
	}
	return failed
}
