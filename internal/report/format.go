package report

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/errkind"
	"github.com/fathom-lab/fathom/internal/suggest"
)

// Kind is a kind of model a command renders: a run list, a run, a comparison…
// Commands say which kinds they can render; formats say which kinds they render.
type Kind string

// The kinds of model, each with the Go type its renderers receive.
const (
	KindRuns       Kind = "run list"                    // *RunList: fathom runs
	KindRun        Kind = "run"                         // *RunView: fathom show, export
	KindIntervals  Kind = "run's intervals"             // *RunView: fathom export
	KindCommands   Kind = "run's per-command latencies" // *RunView: fathom export --per-command
	KindComparison Kind = "comparison"                  // *Comparison: fathom compare
	KindExperiment Kind = "experiment"                  // *ExperimentView: fathom show EXPERIMENT
	kindReport     Kind = "report"                      // *Report: fathom report's index.html and summary.md
)

// Renderer writes one kind of model in one format. v is the kind's type (see Kind);
// ctx is for models that read more from the store as they render (ExperimentView).
type Renderer func(ctx context.Context, w io.Writer, v any) error

// Format is an output format: its name (what --format takes), other spellings, the
// media type and file extension serve's downloads give it, and a renderer for each
// kind of model it can render.
type Format struct {
	Name      string
	Aliases   []string
	MediaType string
	Ext       string // with the dot: ".csv"
	Render    map[Kind]Renderer
}

// render adapts a renderer of one model type to a Renderer.
func render[T any](f func(ctx context.Context, w io.Writer, v T) error) Renderer {
	return func(ctx context.Context, w io.Writer, v any) error {
		m, ok := v.(T)
		if !ok {
			return fmt.Errorf("report: a %T given where a %T is rendered", v, m)
		}
		return f(ctx, w, m)
	}
}

// plain adapts a renderer that needs no context.
func plain[T any](f func(w io.Writer, v T) error) Renderer {
	return render(func(_ context.Context, w io.Writer, v T) error { return f(w, v) })
}

// method adapts a model's own writer method, e.g. (*Comparison).WriteText.
func method[T any](f func(v T, w io.Writer) error) Renderer {
	return plain(func(w io.Writer, v T) error { return f(v, w) })
}

// formats is the registry: every output format, in the order help texts list them.
// A new format is a file defining its Format and one line here.
var formats = registry(
	textFormat,
	markdownFormat,
	csvFormat,
	jsonFormat,
	htmlFormat,
	junitFormat,
	openMetricsFormat,
)

type formatRegistry struct {
	byName map[string]*Format // names and aliases
	order  []*Format
}

// registry builds the registry; a name or alias used twice is a bug (a panic at
// start, as cockroachdb's workload registry does).
func registry(fs ...Format) formatRegistry {
	r := formatRegistry{byName: map[string]*Format{}}
	for i := range fs {
		f := &fs[i]
		for _, n := range append([]string{f.Name}, f.Aliases...) {
			if n == "" || r.byName[n] != nil {
				panic(fmt.Sprintf("report: output format %q registered twice (or empty)", n))
			}
			r.byName[n] = f
		}
		r.order = append(r.order, f)
	}
	return r
}

// formatList lists every format in registry order.
func formatList() []*Format { return slices.Clone(formats.order) }

// FormatNames lists the formats that render at least one of kinds, in registry order.
func FormatNames(kinds ...Kind) []string {
	var out []string
	for _, f := range formats.order {
		if f.kindOf(kinds) != "" {
			out = append(out, f.Name)
		}
	}
	return out
}

// kindOf is the first of kinds f renders ("" none).
func (f *Format) kindOf(kinds []Kind) Kind {
	for _, k := range kinds {
		if f.Render[k] != nil {
			return k
		}
	}
	return ""
}

// Choice is a format resolved for a command: the format and the kind of model it
// renders there.
type Choice struct {
	*Format
	Kind Kind
}

// Write renders v (the Choice's kind of model) to w.
func (c Choice) Write(ctx context.Context, w io.Writer, v any) error {
	return c.Render[c.Kind](ctx, w, v)
}

// Choose resolves the format named name for a command (what, e.g. "fathom export")
// that can render kinds, in its order of preference: the first kind the format
// renders is the one used. An unknown name, or a format that renders none of the
// kinds, is a usage error in one line naming the formats that work.
func Choose(what, name string, kinds ...Kind) (Choice, error) {
	works := FormatNames(kinds...)
	f := formats.byName[name]
	if f == nil {
		return Choice{}, errkind.Usagef("--format %q%s: %s writes %s", name, suggest.Hint(name, works), what, orList(works))
	}
	k := f.kindOf(kinds)
	if k == "" {
		var can []string
		for _, k := range kinds {
			a := "a "
			if strings.ContainsRune("aeiou", rune(k[0])) {
				a = "an "
			}
			can = append(can, a+string(k))
		}
		return Choice{}, errkind.Usagef("--format %s: %s renders %s, which %s does not: use %s", name, what, orList(can), name, orList(works))
	}
	return Choice{Format: f, Kind: k}, nil
}

// renderFormat writes v, a model of kind k, in the format named name.
func renderFormat(ctx context.Context, w io.Writer, name string, k Kind, v any) error {
	f := formats.byName[name]
	if f == nil || f.Render[k] == nil {
		return fmt.Errorf("report: no %s renderer for a %s", name, k)
	}
	return f.Render[k](ctx, w, v)
}

// orList joins "a, b or c".
func orList(s []string) string {
	switch len(s) {
	case 0:
		return "nothing"
	case 1:
		return s[0]
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// MediaTypeOf is the media type of a file by its extension (the longest that
// matches), from the registry: serve's downloads of report files.
func MediaTypeOf(file string) string {
	var best *Format
	for _, f := range formats.order {
		if strings.HasSuffix(file, f.Ext) && (best == nil || len(f.Ext) > len(best.Ext)) {
			best = f
		}
	}
	if best == nil {
		return "application/octet-stream"
	}
	return best.MediaType
}
