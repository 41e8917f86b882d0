package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/fathom-lab/fathom/internal/report"
)

// formatFlag is -f/--format: one of the output formats that render kinds (the
// registry in internal/report says which).
func formatFlag(fs *pflag.FlagSet, p *string, def string, kinds ...report.Kind) {
	names := report.FormatNames(kinds...)
	help := strings.Join(names, ", ")
	if n := len(names); n > 1 {
		help = strings.Join(names[:n-1], ", ") + " or " + names[n-1]
	}
	fs.StringVarP(p, "format", "f", def, help)
}

// chooseFormat resolves -f/--format, with --json as its old spelling of -f json.
func chooseFormat(what, format string, asJSON bool, kinds ...report.Kind) (report.Choice, error) {
	if asJSON {
		if format != "text" && format != "json" {
			return report.Choice{}, usagef("--json and --format %s: give one of them", format)
		}
		format = "json"
	}
	return report.Choose(what, format, kinds...)
}
