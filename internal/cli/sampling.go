package cli

import (
	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/analyze"
	"github.com/fathom-lab/fathom/internal/run"
)

// samplingOpts are the flags for server and OS sampling during a run (and watch).
type samplingOpts struct {
	run.Sampling
}

func (o *samplingOpts) register(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Off, "no-collect", false, "do not sample server and OS metrics during the run")
	fs.StringSliceVar(&o.Only, "collect", nil, "sample only these `collectors` or sources (os, postgres, mysql, or names from: fathom collectors)")
	fs.StringSliceVar(&o.Skip, "no-collector", nil, "leave out these collectors or sources")
	positiveDurationVarP(fs, &o.Timeout, "collect-timeout", "", 0, "time allowed for each collector per sample (default 2s, at most the report interval)")
	fractionVar(fs, &o.Threshold, "stall-threshold", 0, "a stall is throughput below this fraction of the baseline (default 0.5)")
	positiveIntVarP(fs, &o.Window, "stall-window", "", 0, "stall baseline: the median of this many healthy intervals nearby (default 31)")
}

func (o *samplingOpts) stallParams() (analyze.StallParams, error) { return o.StallParams() }
