package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/compat"
	"github.com/fathom-lab/fathom/internal/run"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
)

// luaFlags are, when the command line names a sysbench Lua script with -w, the
// options the script declares (--point-selects, --skip-trx …) and sysbench's own
// that scripts read (--rand-spec-pct …), as flags of the command, spelt with '-'
// or '_' as sysbench takes them. fathom's own flags of the same name (--tables,
// --threads, --time, --rate …) stay fathom's and reach the script too.
type luaFlags struct {
	path string
	err  error // the script could not be read: the command says so
	vals map[string]string
	fs   *pflag.FlagSet
}

// register reads the script named in args, if any, and adds its options to cmd;
// it is called after every other flag of cmd is registered.
func (l *luaFlags) register(cmd *cobra.Command, args []string) {
	l.fs = cmd.Flags()
	l.path = workloadArg(args)
	if !sblua.IsScript(l.path) || !names(args, cmd) {
		return
	}
	s, err := sblua.Load(l.path)
	if err != nil {
		// The script's options are unknown: take every flag, and say what is wrong
		// with the script instead of naming a flag.
		l.err = err
		cmd.FParseErrWhitelist.UnknownFlags = true
		return
	}
	l.vals = map[string]string{}
	for _, o := range append(s.Options(), sblua.Globals()...) {
		flag := strings.ReplaceAll(o.Name, "_", "-")
		if l.fs.Lookup(flag) != nil || o.Name == "db_driver" {
			continue // fathom's own flag; the driver is the --target's kind
		}
		name := o.Name
		l.fs.Var(&luaValue{l: l, name: name, def: o.Default}, flag, "sysbench script option: "+o.Help)
		if o.IsBool() {
			l.fs.Lookup(flag).NoOptDefVal = "on"
		}
	}
	if s.Legacy() {
		l.legacyFlags(args)
	}
	prev := l.fs.GetNormalizeFunc()
	l.fs.SetNormalizeFunc(func(f *pflag.FlagSet, name string) pflag.NormalizedName {
		return prev(f, strings.ReplaceAll(name, "_", "-"))
	})
}

// legacyFlags: a script that declares no options (sysbench 0.5's, run by sysbench
// 1.0 as they are) takes any --name=value, as a string it reads as the global name
// (with '_' for '-'). sysbench's own flags that fathom answers with a hint
// (--mysql-host, --max-time …) keep their hint; the legacy scripts' --oltp-* options
// are theirs.
func (l *luaFlags) legacyFlags(args []string) {
	for i, a := range args {
		if a == "--" {
			return
		}
		name, ok := strings.CutPrefix(a, "--")
		if !ok || name == "" {
			continue
		}
		name, _, hasValue := strings.Cut(name, "=")
		// --name alone (at the end, or before another flag) is on, as sysbench reads
		// it; otherwise --name takes the next argument as its value.
		alone := !hasValue && (i+1 == len(args) || strings.HasPrefix(args[i+1], "-"))
		flag := strings.ReplaceAll(name, "_", "-")
		if l.fs.Lookup(flag) != nil {
			continue
		}
		if _, hint := compat.Foreign("unknown flag: --" + flag); hint != "" && !strings.HasPrefix(flag, "oltp-") {
			continue
		}
		l.fs.Var(&luaValue{l: l, name: strings.ReplaceAll(flag, "-", "_")}, flag, "option of a sysbench 0.5 script")
		if alone {
			l.fs.Lookup(flag).NoOptDefVal = "on"
		}
	}
}

// luaValue holds one script option as given.
type luaValue struct {
	l    *luaFlags
	name string
	def  string
}

func (v *luaValue) String() string {
	if s, ok := v.l.vals[v.name]; ok {
		return s
	}
	return v.def
}
func (v *luaValue) Type() string { return "value" }
func (v *luaValue) Set(s string) error {
	v.l.vals[v.name] = s
	return nil
}

// workloadArg is the value of -w/--workload in args, or "".
// names reports whether the command line names cmd (or an alias), so that only the
// command that runs reads the script: every command is built for each process, and
// reading a script (a Lua state running its main chunk) costs milliseconds.
func names(args []string, cmd *cobra.Command) bool {
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == cmd.Name() || cmd.HasAlias(a) {
			return true
		}
	}
	return false
}

func workloadArg(args []string) string {
	for i, a := range args {
		switch {
		case a == "--":
			return ""
		case a == "-w" || a == "--workload":
			if i+1 < len(args) {
				return args[i+1]
			}
		case strings.HasPrefix(a, "--workload="):
			return strings.TrimPrefix(a, "--workload=")
		case strings.HasPrefix(a, "-w") && !strings.HasPrefix(a, "--"):
			return strings.TrimPrefix(strings.TrimPrefix(a, "-w"), "=")
		}
	}
	return ""
}

// luaRunParams tells the script the run's own options, which sysbench's scripts
// read in sysbench.opt (threads above all: oltp_common splits work by it).
func (o *runOpts) luaRunParams(ro *run.Options) {
	if ro.Params == nil {
		ro.Params = workload.Params{}
	}
	ro.Params["threads"] = strconv.Itoa(ro.Clients)
	if ro.Duration > 0 {
		ro.Params["time"] = strconv.FormatFloat(ro.Duration.Seconds(), 'f', -1, 64)
	}
	if ro.Transactions > 0 {
		ro.Params["events"] = strconv.FormatInt(ro.Transactions*int64(ro.Clients), 10)
		if ro.Duration == 0 {
			ro.Params["time"] = "0"
		}
	}
	ro.Params["rate"] = strconv.FormatFloat(ro.Rate, 'f', -1, 64)
	// sysbench calls a script's report_intermediate hook only with --report-interval;
	// fathom's intervals are there either way (1s by default).
	if o.intervalSet != nil && o.intervalSet() {
		ro.Params["report_interval"] = strconv.FormatFloat(ro.Interval.Seconds(), 'f', -1, 64)
	}
	if p, given := o.compat.Percentile(); given {
		ro.Params["percentile"] = strconv.Itoa(p)
	}
	if ro.QueryMode == "simple" {
		ro.Params["db_ps_mode"] = "disable"
	}
	if ro.HasSeed {
		ro.Params["rand_seed"] = strconv.FormatUint(ro.Seed, 10)
	}
}

// luaCommand runs one of a sysbench script's commands (`fathom run -w x.lua
// prewarm`, as `sysbench x.lua prewarm`) on the target.
func luaCommand(ctx context.Context, env *Env, o *targetOpts, name string) error {
	_, wl, err := o.openWorkload()
	if err != nil {
		return err
	}
	sw, ok := wl.(*sblua.Workload)
	if !ok {
		return usagef("%s is not a sysbench script", o.workload)
	}
	tgt, err := o.openTarget()
	if err != nil {
		return err
	}
	defer tgt.Close()
	if err := sw.UseTarget(tgt); err != nil {
		return usagef("%v", err)
	}
	if ok, err := sw.HasCommand(ctx, name); err != nil {
		return withCode(exitFailure, err)
	} else if !ok {
		return usagef("%s has no command %q (sysbench.cmdline.commands, or a function of that name for prepare and cleanup)", o.workload, name)
	}
	sw.SetOutput(env.Stdout)
	ctx, stop := env.Interrupts(ctx)
	defer stop()
	if err := sw.Command(ctx, name, nil); err != nil {
		return withCode(exitFailure, fmt.Errorf("%s %s failed: %v", o.workload, name, err))
	}
	return nil
}

// luaLayout passes prepare's sysbench table flags (--auto-inc, --secondary,
// --create-secondary, --mysql-storage-engine) to a script as its options.
func luaLayout(p workload.Params, lo *workload.Layout) {
	onOff := func(b bool) string {
		if b {
			return "on"
		}
		return "off"
	}
	if lo.AutoInc != nil {
		p["auto_inc"] = onOff(*lo.AutoInc)
	}
	if lo.Secondary {
		p["secondary"] = "on"
	}
	if lo.CreateSecondary != nil {
		p["create_secondary"] = onOff(*lo.CreateSecondary)
	}
	if lo.Engine != "" {
		p["mysql_storage_engine"] = lo.Engine
	}
}
