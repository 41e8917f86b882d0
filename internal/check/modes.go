package check

import (
	"fmt"
	"strings"
	"text/tabwriter"
)

// modeNames lists the modes, for a flag's help.
func modeNames() string {
	var names []string
	for _, m := range modes {
		names = append(names, m.Name)
	}
	return strings.Join(names, ", ")
}

// ModeHelp is one aligned line per mode: its name and what it checks.
func ModeHelp() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	for _, m := range modes {
		fmt.Fprintf(tw, "  %s\t%s\n", m.Name, m.Help)
	}
	_ = tw.Flush()
	return b.String()
}
