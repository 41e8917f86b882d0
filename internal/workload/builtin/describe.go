package builtin

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fathom-lab/fathom/internal/workload"
)

// Describe prints a built-in workload written in Go as fathom workload show does: its
// description, options and transaction types.
func Describe(w io.Writer, s *workload.Spec, wl workload.Workload) error {
	fmt.Fprintf(w, "workload %s (built in)\n  %s\n", s.Name, s.Description)
	opts := wl.Options()
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	if len(names) > 0 {
		fmt.Fprintln(w, "\noptions:")
	}
	for _, k := range names {
		v := opts[k]
		if v == "" {
			v = "(detected)"
		}
		fmt.Fprintf(w, "  %s = %s\n", k, v)
	}
	fmt.Fprintf(w, "\ntransaction types: %s\n", strings.Join(wl.TxnTypes(), ", "))
	return nil
}
