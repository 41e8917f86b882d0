// Package builtin is the registry of fathom's built-in workloads: the ones written in
// Go (tpcb, oltp) and the workload files shipped in internal/workload/files (fanout,
// seqrand, ycsb). Lookup also accepts the path of a workload file, so that
// `fathom run --workload path/to/file.yaml` (and prepare, cleanup) runs a user's own.
package builtin

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/suggest"
	"github.com/fathom-lab/fathom/internal/workload"
	"github.com/fathom-lab/fathom/internal/workload/files"
	"github.com/fathom-lab/fathom/internal/workload/kv"
	"github.com/fathom-lab/fathom/internal/workload/oltp"
	"github.com/fathom-lab/fathom/internal/workload/sblua"
	"github.com/fathom-lab/fathom/internal/workload/spec"
	"github.com/fathom-lab/fathom/internal/workload/tpcb"
	"github.com/fathom-lab/fathom/internal/workload/tpcc"
)

// registry is the built-ins: each name's spec, and which of them are shipped
// workload files.
type registry struct {
	specs   map[string]*workload.Spec
	shipped map[string]bool
}

// builtins builds the registry once, on first use rather than in an init function:
// parsing the shipped workload files took about 9 ms of every fathom process's
// start-up, whatever its command (GODEBUG=inittrace=1).
var builtins = sync.OnceValue(func() registry {
	r := registry{specs: map[string]*workload.Spec{
		"tpcb":               tpcb.Spec(tpcb.TPCBLike),
		"tpcb-select":        tpcb.Spec(tpcb.SelectOnly),
		"tpcb-simple-update": tpcb.Spec(tpcb.SimpleUpdate),

		"oltp_point_select":     oltp.Spec("oltp_point_select"),
		"oltp_read_only":        oltp.Spec("oltp_read_only"),
		"oltp_read_write":       oltp.Spec("oltp_read_write"),
		"oltp_write_only":       oltp.Spec("oltp_write_only"),
		"oltp_update_index":     oltp.Spec("oltp_update_index"),
		"oltp_update_non_index": oltp.Spec("oltp_update_non_index"),
		"oltp_insert":           oltp.Spec("oltp_insert"),
		"oltp_delete":           oltp.Spec("oltp_delete"),

		"tpcc": tpcc.Spec(),

		"redis-kv":    kv.KVSpec(),
		"redis-bench": kv.BenchSpec(),
		"redis-ycsb":  kv.YCSBSpec(),
	}, shipped: map[string]bool{}}
	for _, name := range files.Names() {
		data, file, err := files.Read(name)
		if err != nil {
			panic(fmt.Sprintf("builtin: shipped workload %s: %v", name, err))
		}
		s, err := spec.Load(file, data)
		if err != nil {
			panic(fmt.Sprintf("builtin: shipped workload %s is invalid:\n%v", name, err))
		}
		if s.Name != name {
			panic(fmt.Sprintf("builtin: shipped workload file %s names itself %s", file, s.Name))
		}
		if r.specs[name] != nil {
			panic("builtin: two built-in workloads are named " + name)
		}
		r.specs[name] = s
		r.shipped[name] = true
	}
	return r
})

// IsFile reports whether a name or path is a workload file rather than a built-in's
// name: it ends in .yaml or .yml.
func IsFile(name string) bool {
	n := strings.ToLower(name)
	return strings.HasSuffix(n, ".yaml") || strings.HasSuffix(n, ".yml")
}

// Shipped reports whether the named built-in is a shipped workload file.
func Shipped(name string) bool { return builtins().shipped[name] }

// Lookup returns the spec of the named built-in workload, or of the workload file at
// a path ending in .yaml or .yml. A file with mistakes is an error listing each of
// them with its line.
func Lookup(name string) (*workload.Spec, error) {
	if IsFile(name) {
		return spec.LoadFile(name)
	}
	if sblua.IsScript(name) {
		return sblua.Spec(name)
	}
	if s, ok := builtins().specs[name]; ok {
		return s, nil
	}
	if near := closest(name); near != "" {
		return nil, fmt.Errorf("unknown workload %q: did you mean %s? (available: %s; or the path of a workload file ending in .yaml)", name, near, strings.Join(Names(), ", "))
	}
	return nil, fmt.Errorf("unknown workload %q (available: %s; or the path of a workload file ending in .yaml)", name, strings.Join(Names(), ", "))
}

// closest is the built-in nearest to a misspelt name (suggest.Nearest).
func closest(name string) string { return suggest.Nearest(name, Names()) }

// Source returns the text of a shipped workload file (for `fathom workload show`), or
// false for the built-ins written in Go.
func Source(name string) ([]byte, string, bool) {
	if !builtins().shipped[name] {
		return nil, "", false
	}
	data, file, err := files.Read(name)
	return data, file, err == nil
}

// Names lists the built-in workloads, sorted.
func Names() []string {
	specs := builtins().specs
	out := make([]string, 0, len(specs))
	for n := range specs {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}
