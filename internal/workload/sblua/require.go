package sblua

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/fathom-lab/fathom/internal/lua"
)

// modules caches compiled modules by file: every client's state requires
// oltp_common, and compiling it is most of a state's start-up cost.
type modules struct {
	mu     sync.Mutex
	protos map[string]*lua.FunctionProto
	// countsErrors: a module's text calls sb_counter_inc (see Script.countsErrors).
	countsErrors bool
	// readsResults: the script's or a module's text names a result set's fields
	// (readsResults); until then prepared statements skip their rows (runDirect).
	readsResults atomic.Bool
}

// readsResults reports whether a script's text may read a result set: it names
// rs:fetch_row(), rs.nrows or rs.nfields. A script that does not (sysbench's own
// oltp scripts discard what stmt:execute() returns) has its prepared statements'
// rows skipped on the wire instead of decoded (see sqlStmt.runDirect).
func readsResults(data []byte) bool {
	for _, w := range [...]string{"fetch_row", "nrows", "nfields"} {
		if bytes.Contains(data, []byte(w)) {
			return true
		}
	}
	return false
}

func (m *modules) get(path string) (*lua.FunctionProto, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.protos[path]; ok {
		return p, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := compile(stripShebang(data), path)
	if err != nil {
		return nil, err
	}
	m.countsErrors = m.countsErrors || bytes.Contains(data, []byte("sb_counter_inc"))
	if readsResults(data) {
		m.readsResults.Store(true)
	}
	if m.protos == nil {
		m.protos = map[string]*lua.FunctionProto{}
	}
	m.protos[path] = p
	return p, nil
}

// setLoader puts a loader of Lua files into package.loaders in place of
// gopher-lua's own: the same search along package.path, with compiled modules
// shared by the states of a script.
func (e *env) setLoader() {
	pkg, ok := e.L.GetGlobal("package").(*lua.LTable)
	if !ok {
		return
	}
	loaders, ok := pkg.RawGetString("loaders").(*lua.LTable)
	if !ok || loaders.Len() < 2 {
		return
	}
	loaders.RawSetInt(2, e.L.NewFunction(func(L *lua.LState) int {
		name := L.CheckString(1)
		path := lua.LVAsString(pkg.RawGetString("path"))
		var tried []string
		for _, tmpl := range strings.Split(path, ";") {
			if tmpl == "" {
				continue
			}
			f := strings.ReplaceAll(tmpl, "?", strings.ReplaceAll(name, ".", "/"))
			if _, err := os.Stat(f); err != nil {
				tried = append(tried, "\n\tno file '"+f+"'")
				continue
			}
			p, err := e.s.mods.get(f)
			if err != nil {
				L.RaiseError("error loading module '%s' from file '%s': %v", name, f, err)
			}
			L.Push(L.NewFunctionFromProto(p))
			return 1
		}
		L.Push(lua.LString(fmt.Sprint(strings.Join(tried, ""))))
		return 1
	}))
}
