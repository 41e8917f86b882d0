package sblua

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/fathom-lab/fathom/internal/lua"
	"github.com/fathom-lab/fathom/internal/lua/parse"
)

// SearchDirs are where require() looks after the script's own directory and the
// working directory: where sysbench installs its bundled scripts (oltp_common).
var SearchDirs = []string{"/usr/share/sysbench", "/usr/local/share/sysbench"}

// IsScript reports whether a workload name is a sysbench Lua script's path.
func IsScript(name string) bool { return strings.HasSuffix(strings.ToLower(name), ".lua") }

// option is a command-line option: one a script declares in
// sysbench.cmdline.options, or one of sysbench's own that scripts read in sysbench.opt.
type option struct {
	Name    string // with underscores, as in sysbench.opt
	Help    string
	Default string // as sysbench prints it: on/off, a number, a comma-separated list
	kind    optKind
}

// IsBool reports whether the option is on/off (given alone, it is on).
func (o option) IsBool() bool { return o.kind == kindBool }

// script is a compiled sysbench Lua script and what it declares.
type script struct {
	Path       string
	dir        string
	proto      *lua.FunctionProto
	searchDirs []string
	options    []option // declared by the script, sorted by name
	legacy     bool     // no sysbench.cmdline.options: options are globals too
	mods       *modules // the modules it requires, compiled once
	// countsErrors: the script or a module it requires when read calls
	// ffi.C.sb_counter_inc, so its events may count errors (the type "event-error").
	countsErrors bool
}

// globals are sysbench 1.0's own options that scripts read in sysbench.opt.
var globals = []option{
	{"threads", "number of threads to use", "1", kindNumber},
	{"events", "limit for total number of events", "0", kindNumber},
	{"time", "limit for total execution time in seconds", "10", kindNumber},
	{"rate", "average transactions rate; 0 for unlimited rate", "0", kindNumber},
	{"report_interval", "periodically report intermediate statistics with a specified interval in seconds", "0", kindNumber},
	{"warmup_time", "execute events for this many seconds with statistics disabled", "0", kindNumber},
	{"percentile", "percentile to calculate in latency statistics (1-100)", "95", kindNumber},
	{"histogram", "print latency histogram in report", "off", kindBool},
	{"rand_type", "random numbers distribution {uniform,gaussian,special,pareto,zipfian}", "special", kindString},
	{"rand_seed", "seed for random number generator; 0 takes the time", "0", kindNumber},
	{"rand_spec_iter", "number of iterations used for numbers generation", "12", kindNumber},
	{"rand_spec_pct", "percentage of values to be treated as 'special' (for special distribution)", "1", kindNumber},
	{"rand_spec_res", "percentage of 'special' values to use (for special distribution)", "75", kindNumber},
	{"rand_pareto_h", "parameter h for pareto distribution", "0.2", kindNumber},
	{"rand_zipfian_exp", "shape parameter (exponent, theta) for the Zipfian distribution", "0.8", kindNumber},
	{"db_driver", "the database driver (from --target: mysql or pgsql)", "mysql", kindString},
	{"db_ps_mode", "prepared statements usage mode {auto, disable}", "auto", kindString},
	{"db_debug", "print database-specific debug information", "off", kindBool},
}

// Globals lists sysbench's own options that a script sees in sysbench.opt.
func Globals() []option { return append([]option(nil), globals...) }

// Load reads and compiles the script at path and runs its main chunk once to learn
// the options and commands it declares. A mistake in it is one line with the file,
// the line and the Lua error.
func Load(path string) (*script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("sysbench script %s: %v", path, errNoStat(err))
	}
	proto, err := compile(stripShebang(data), path)
	if err != nil {
		return nil, err
	}
	s := &script{Path: path, dir: filepath.Dir(path), proto: proto, searchDirs: SearchDirs, mods: &modules{}}
	if readsResults(data) {
		s.mods.readsResults.Store(true)
	}
	opts, kinds := defaults(nil)
	e, err := newEnv(context.Background(), envConfig{s: s, command: "run", opts: opts, kinds: kinds, driver: "mysql",
		rp: randParams{kind: "uniform", iter: 12, pct: 1, res: 75, paretoH: 0.2, zipfExp: 0.8}})
	if err != nil {
		return nil, err
	}
	defer e.L.Close()
	if err := s.readOptions(e); err != nil {
		return nil, err
	}
	s.mods.mu.Lock()
	s.countsErrors = bytes.Contains(data, []byte("sb_counter_inc")) || s.mods.countsErrors
	s.mods.mu.Unlock()
	return s, nil
}

func errNoStat(err error) error {
	if os.IsNotExist(err) {
		return fmt.Errorf("no such file")
	}
	return err
}

func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, "\nstack traceback:"); i >= 0 {
		s = s[:i]
	}
	return strings.Join(strings.Fields(s), " ")
}

// readOptions reads sysbench.cmdline.options as sysbench does: name = {help,
// default[, type]}, the type given or taken from the default's.
func (s *script) readOptions(e *env) error {
	ot := e.cmdline().RawGetString("options")
	if ot == lua.LNil {
		s.legacy = true
		return nil
	}
	t, ok := ot.(*lua.LTable)
	if !ok {
		return &scriptError{Msg: fmt.Sprintf("%s: wrong type for sysbench.cmdline.options: %s", s.Path, ot.Type())}
	}
	var bad error
	t.ForEach(func(k, v lua.LValue) {
		name, ok1 := k.(lua.LString)
		def, ok2 := v.(*lua.LTable)
		if !ok1 || !ok2 {
			bad = &scriptError{Msg: fmt.Sprintf("%s: wrong table structure in sysbench.cmdline.options", s.Path)}
			return
		}
		o := option{Name: string(name), Help: lua.LVAsString(def.RawGetInt(1))}
		switch d := def.RawGetInt(2).(type) {
		case lua.LBool:
			o.kind, o.Default = kindBool, map[bool]string{true: "on", false: "off"}[bool(d)]
		case lua.LNumber:
			o.kind, o.Default = kindNumber, d.String()
		case lua.LString:
			o.Default = string(d)
		case *lua.LTable:
			var parts []string
			d.ForEach(func(_, x lua.LValue) { parts = append(parts, x.String()) })
			o.kind, o.Default = kindList, strings.Join(parts, ",")
		}
		if tn, ok := def.RawGetInt(3).(lua.LNumber); ok {
			switch int(tn) {
			case 1:
				o.kind = kindBool
			case 2, 3, 4:
				o.kind = kindNumber
			case 6:
				o.kind = kindList
			default:
				o.kind = kindString
			}
		}
		s.options = append(s.options, o)
	})
	sort.Slice(s.options, func(i, j int) bool { return s.options[i].Name < s.options[j].Name })
	return bad
}

// Options lists the options the script declares, sorted by name.
func (s *script) Options() []option { return append([]option(nil), s.options...) }

// Legacy reports whether the script declares no options (sysbench.cmdline.options):
// sysbench 1.0 then takes any option for it, as sysbench 0.5 did, and the script
// reads them as globals.
func (s *script) Legacy() bool { return s.legacy }

// defaults are sysbench's own options' defaults overlaid with the script's.
func defaults(s *script) (map[string]string, map[string]optKind) {
	vals, kinds := map[string]string{}, map[string]optKind{}
	for _, o := range globals {
		vals[o.Name], kinds[o.Name] = o.Default, o.kind
	}
	if s != nil {
		for _, o := range s.options {
			vals[o.Name], kinds[o.Name] = o.Default, o.kind
		}
	}
	return vals, kinds
}

// Compiled code is kept for the process, by name and text: a run loads a script
// several times before its first event (the command line's options, the workload,
// each client's state requiring its modules), and compiling sysbench's oltp_common
// took most of fathom's start-up CPU (about 24 ms of a one-event run's 70). A
// FunctionProto is never changed once compiled, so every state may share it.
func compile(data []byte, path string) (*lua.FunctionProto, error) {
	key := path + "\x00" + string(data)
	compiled.mu.Lock()
	p, ok := compiled.protos[key]
	compiled.mu.Unlock()
	if ok {
		return p, nil
	}
	p, err := compileText(data, path)
	if err != nil {
		return nil, err
	}
	compiled.mu.Lock()
	if compiled.protos == nil {
		compiled.protos = map[string]*lua.FunctionProto{}
	}
	compiled.protos[key] = p
	compiled.mu.Unlock()
	return p, nil
}

// compiled is compile's cache.
var compiled struct {
	mu     sync.Mutex
	protos map[string]*lua.FunctionProto
}

func compileText(data []byte, path string) (*lua.FunctionProto, error) {
	chunk, err := parse.Parse(bytes.NewReader(data), path)
	if err != nil {
		return nil, &scriptError{Msg: oneLine(err.Error())}
	}
	proto, err := lua.Compile(chunk, path)
	if err != nil {
		return nil, &scriptError{Msg: oneLine(err.Error())}
	}
	return proto, nil
}

func compileString(src, name string) (*lua.FunctionProto, error) { return compile([]byte(src), name) }

// stripShebang blanks a first line starting with '#' (#!/usr/bin/sysbench), as
// Lua's own loader skips it; the line numbers stay.
func stripShebang(data []byte) []byte {
	if !bytes.HasPrefix(data, []byte("#")) {
		return data
	}
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return append([]byte("--"), data[i:]...)
	}
	return nil
}
