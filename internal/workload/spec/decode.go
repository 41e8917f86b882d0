package spec

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/target"
	"github.com/fathom-lab/fathom/internal/yamlfile"
	"gopkg.in/yaml.v3"
)

// The file as written: names and structure checked, numbers kept as YAML nodes because
// they may refer to parameters ($rows, $(rows * 100)) that only resolve against the
// options of a run.

// file is a decoded workload file.
type file struct {
	Path        string // as given, for messages
	Data        []byte // the file's text, for provenance
	Name        string
	Description string
	Params      []*paramSpec
	Sequences   []*sequence
	Tables      []*tableSpec
	Txns        []*txnSpec
	Groups      []*groupSpec
	// Thresholds are the file's pass/fail bars (thresholds:), as --threshold's.
	Thresholds []measure.Threshold
}

// paramSpec is a workload option: a default that --set overrides. A parameter with presets
// selects, by its value, defaults for other parameters.
type paramSpec struct {
	Name    string
	Default string
	Help    string
	Line    int
	Presets []preset
}

// preset is one named set of defaults for other parameters.
type preset struct {
	Name   string
	Line   int
	Values []kv
}

// kv is a parameter name and a value, with the line of the value.
type kv struct {
	Name, Value string
	Line        int
}

// sequence is a counter shared by all clients of a run.
type sequence struct {
	Name        string
	Line        int
	Start, Step *yaml.Node // nil: 1
	After       string     // "table.column": continue after its maximum (read before a run)
	AfterLine   int
}

// tableSpec is a table definition with its data.
type tableSpec struct {
	Name       string
	Line       int
	Columns    []*column
	PrimaryKey []string
	PKLine     int
	Indexes    []*index
	DDL        map[string]string // dialect name -> CREATE TABLE statement
	Rows       *yaml.Node        // nil: 0
	Load       []*columnGen
}

// column is a column with a portable type.
type column struct {
	Name          string
	Type          string
	NotNull       bool
	Default       string
	PrimaryKey    bool
	AutoIncrement bool
	Line          int
}

// index is a secondary index.
type index struct {
	Name    string
	Columns []string
	Unique  bool
	Line    int
}

// columnGen is the generator of a column's values when loading.
type columnGen struct {
	Column string
	Line   int
	Gen    *genDef
}

// txnSpec is a transaction type.
type txnSpec struct {
	Name   string
	Line   int
	Weight *yaml.Node // nil: 1
	// Autocommit sends each statement on its own instead of between BEGIN and COMMIT.
	Autocommit bool
	Values     []*namedGen
	Steps      []*step
}

// namedGen is a named value and its generator.
type namedGen struct {
	Name string
	Line int
	Gen  *genDef
}

// stepKind says what a step is.
type stepKind uint8

const (
	stepSQL stepKind = iota
	stepBlock
	stepBranch
)

// step is a statement, a repeated block or a branch.
type step struct {
	Kind stepKind
	Line int
	// SQL by dialect; "" is the default for dialects not listed.
	SQL      map[string]string
	SQLLine  int
	Values   []*namedGen
	Keep     []string // names for the first row's columns
	KeepLine int
	InsertID string // name for the id the INSERT generated
	IDColumn string // the auto-increment column (default id)
	IDLine   int
	Repeat   *genDef // nil: once
	Steps    []*step
	Arms     []*armSpec
}

// armSpec is one branch of a branch step, taken with a probability.
type armSpec struct {
	Line        int
	Probability *yaml.Node
	Steps       []*step
}

// groupSpec is a kind of client.
type groupSpec struct {
	Name         string
	Line         int
	Clients      *yaml.Node // nil: 1
	Rate         *yaml.Node // nil: closed loop
	PerClient    *yaml.Node // nil: the run's -t / -T
	Transactions []string
	TxnLines     []int
}

// genDef is a value generator as written: a constant or a mapping with one key, the
// generator's name.
type genDef struct {
	Kind string // generator name, or "const"
	Node *yaml.Node
	Line int
	// Numeric arguments by name (min, max, exp, mean …), as nodes.
	Args map[string]*yaml.Node
	// Text arguments.
	Pattern  string
	Sequence string // sequence: NAME, latest: {sequence: NAME}
	After    string // inline sequence: continue after this table.column's maximum
	Scramble bool
	Now      bool
	TimeMin  string
	TimeMax  string
	Choices  []choice
	Const    *yaml.Node // kind const
}

// choice is one value of a choice generator.
type choice struct {
	Value  *yaml.Node
	Weight *yaml.Node // nil: 1
}

// generators lists the generator names a file may use.
var generators = []string{"uniform", "zipfian", "gaussian", "exponential", "hotspot", "special", "sequence", "latest", "string", "choice", "timestamp", "float"}

// genArgs are the numeric arguments each generator takes in its mapping form.
var genArgs = map[string][]string{
	"uniform":     {"min", "max"},
	"zipfian":     {"min", "max", "exp", "scramble"},
	"gaussian":    {"min", "max", "mean", "stddev", "iter"},
	"exponential": {"min", "max", "mean"},
	"hotspot":     {"min", "max", "hot_fraction", "hot_probability"},
	"special":     {"min", "max", "pct", "res", "iter"},
	"sequence":    {"start", "step", "after"},
	"latest":      {"sequence", "window", "exp"},
	"string":      {"length", "min_length", "max_length", "pattern"},
	"timestamp":   {"min", "max"},
	"float":       {"min", "max"},
}

// Dialects are the dialect names a file may give SQL or DDL for: the registered
// kinds' SQL dialects (their bundles' data, target.SQLDialects), in kind name order.
func Dialects() []string { return target.SQLDialects(false) }

// dialectKeys are the keys a file's sql or ddl mapping n may have: Dialects, or, while
// the registry has not given them yet (the built-ins are decoded when package builtin
// is initialized, before internal/db), any key n has: those files are checked by
// their tests, where the dialects are known.
func dialectKeys(n *yaml.Node) []string {
	if target.DialectsGiven() {
		return Dialects()
	}
	var out []string
	if n = yamlfile.Deref(n); n != nil && n.Kind == yaml.MappingNode {
		for i := 0; i < len(n.Content); i += 2 {
			if n.Content[i].Value != "default" {
				out = append(out, n.Content[i].Value)
			}
		}
	}
	return out
}

// coversAll says whether m has an entry for each of names.
func coversAll[V any](m map[string]V, names []string) bool {
	for _, n := range names {
		if _, ok := m[n]; !ok {
			return false
		}
	}
	return true
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
var wlNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// decodeFile decodes a workload file strictly: it reports every unknown key, wrong type,
// missing field and duplicate name at once, each with its line. Decoding needs no
// parameter values; Resolve checks what depends on them.
func decodeFile(path string, data []byte) (*file, error) {
	f, p := decode(path, data)
	if err := p.Err(path); err != nil {
		return nil, err
	}
	return f, nil
}

// checkFile decodes a file and resolves it with its parameters' defaults, and reports
// every problem of both steps at once: it is `fathom workload check`. The resolver
// also runs over the parts of a file that decoded, so that a typo in one place does
// not hide a mistake in another.
func checkFile(path string, data []byte) (*file, error) {
	f, p := decode(path, data)
	r := newResolver(f, nil)
	p.Merge(&r.p)
	if err := p.Err(path); err != nil {
		return nil, err
	}
	return f, nil
}

func decode(path string, data []byte) (*file, *problems) {
	d := &decoder{f: &file{Path: path, Data: data}}
	root := d.p.Document(data, "a workload file", "the file is empty")
	if root == nil {
		return d.f, &d.p
	}
	d.file(root)
	return d.f, &d.p
}

type decoder struct {
	f *file
	p problems
	// depth and nsteps bound the walk over steps, which YAML aliases could make
	// recursive or exponentially large.
	depth, nsteps int
}

// Bounds on the steps of a file.
const (
	maxDepth = 32
	maxSteps = 10_000
)

// The checks shared with the plan's decoder (package yamlfile), on this file's
// problems.

// fields checks that n is a mapping with only known keys and returns its values by key
// (none when n is not a mapping).
func (d *decoder) fields(n *yaml.Node, what string, known ...string) map[string]*yaml.Node {
	if m, ok := d.p.Fields(n, what, known...); ok {
		return m
	}
	return map[string]*yaml.Node{}
}

func describe(n *yaml.Node) string { return yamlfile.Describe(n) }

func (d *decoder) str(n *yaml.Node, what string) string { return d.p.Str(n, what) }

// name reads an identifier (table, column, value name …).
func (d *decoder) name(n *yaml.Node, what string) string {
	s := d.str(n, what)
	if s != "" && !nameRE.MatchString(s) {
		d.p.At(n, "%s %q must be a name of letters, digits and _ (not starting with a digit)", what, s)
		return ""
	}
	return s
}

func (d *decoder) boolean(n *yaml.Node, what string) bool { return d.p.Bool(n, what) }

// list checks that n is a list and returns its items.
func (d *decoder) list(n *yaml.Node, what string) []*yaml.Node {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		d.p.At(n, "%s must be a list, not %s", what, describe(n))
		return nil
	}
	return n.Content
}

func (d *decoder) names(n *yaml.Node, what string) []string {
	n = yamlfile.Deref(n)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag != "!!null" {
		return []string{d.name(n, what)}
	}
	var out []string
	for _, it := range d.list(n, what) {
		if s := d.name(it, what); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// number keeps a scalar that must become a number when resolved.
func (d *decoder) number(n *yaml.Node, what string) *yaml.Node {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.p.At(n, "%s must be a number or $parameter, not %s", what, describe(n))
		return nil
	}
	return n
}

// scalar returns the text of a scalar node, or "" when n is not one.
func scalar(n *yaml.Node) (string, bool) {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode {
		return "", false
	}
	return n.Value, true
}

func (d *decoder) file(n *yaml.Node) {
	f := d.f
	m := d.fields(n, "the workload file", "name", "description", "params", "sequences", "tables", "transactions", "groups", "thresholds")
	if v, ok := m["name"]; ok {
		f.Name = d.str(v, "name")
		if f.Name != "" && !wlNameRE.MatchString(f.Name) {
			d.p.At(v, "name %q must be letters, digits, _, . and - (no spaces or slashes)", f.Name)
		}
	} else {
		d.p.At(n, "the workload has no name: add name: …")
	}
	if v, ok := m["description"]; ok {
		f.Description = strings.TrimSpace(d.str(v, "description"))
	}
	if v, ok := m["params"]; ok {
		d.params(v)
	}
	if v, ok := m["thresholds"]; ok {
		for _, it := range d.list(v, "thresholds (a list such as [\"p99<20ms\", \"tps>1000\"])") {
			if s := d.str(it, "a threshold"); s != "" {
				th, err := measure.ParseThreshold(s)
				if err != nil {
					d.p.At(it, "%v", err)
					continue
				}
				f.Thresholds = append(f.Thresholds, th)
			}
		}
	}
	if v, ok := m["sequences"]; ok {
		d.sequences(v)
	}
	if v, ok := m["tables"]; ok {
		seen := map[string]bool{}
		for _, it := range d.list(v, "tables") {
			t := d.table(it)
			if t.Name != "" {
				if seen[strings.ToLower(t.Name)] {
					d.p.Add(t.Line, "table %s is defined twice", t.Name)
				}
				seen[strings.ToLower(t.Name)] = true
			}
			f.Tables = append(f.Tables, t)
		}
	}
	if v, ok := m["transactions"]; ok {
		seen := map[string]bool{}
		for _, it := range d.list(v, "transactions") {
			t := d.txn(it)
			if t.Name != "" {
				if seen[t.Name] {
					d.p.Add(t.Line, "transaction %s is defined twice", t.Name)
				}
				seen[t.Name] = true
			}
			f.Txns = append(f.Txns, t)
		}
	}
	if len(f.Txns) == 0 {
		d.p.At(n, "the workload has no transactions: add transactions: with at least one")
	}
	if v, ok := m["groups"]; ok {
		seen := map[string]bool{}
		items := d.list(v, "groups")
		if v != nil && yamlfile.Deref(v).Kind == yaml.SequenceNode && len(items) == 0 {
			d.p.At(v, "groups is empty: remove it to run every transaction with -c clients, or add groups")
		}
		for _, it := range items {
			g := d.group(it)
			if g.Name != "" {
				if seen[g.Name] {
					d.p.Add(g.Line, "group %s is defined twice", g.Name)
				}
				seen[g.Name] = true
			}
			f.Groups = append(f.Groups, g)
		}
	}
	d.crossCheck()
}

func (d *decoder) params(n *yaml.Node) {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.p.At(n, "params must be a mapping of name: default (or name: {default: …, help: …}), not %s", describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		p := &paramSpec{Name: d.name(k, "parameter name"), Line: k.Line}
		for _, q := range d.f.Params {
			if q.Name == p.Name && p.Name != "" {
				d.p.At(k, "parameter %s is defined twice", p.Name)
			}
		}
		v = yamlfile.Deref(v)
		if v != nil && v.Kind == yaml.MappingNode {
			m := d.fields(v, "parameter "+p.Name, "default", "help", "presets")
			if dv, ok := m["default"]; ok {
				if s, ok := scalar(dv); ok && yamlfile.Deref(dv).Tag != "!!null" {
					p.Default = s
				} else if !ok {
					d.p.At(dv, "parameter %s: default must be a single value, not %s", p.Name, describe(dv))
				}
			}
			if h, ok := m["help"]; ok {
				p.Help = strings.TrimSpace(d.str(h, "help"))
			}
			if ps, ok := m["presets"]; ok {
				p.Presets = d.presets(ps, p.Name)
			}
		} else if s, ok := scalar(v); ok {
			if v.Tag != "!!null" {
				p.Default = s
			}
		} else {
			d.p.At(v, "parameter %s must be a default value or a mapping with default and help, not %s", p.Name, describe(v))
		}
		d.f.Params = append(d.f.Params, p)
	}
}

func (d *decoder) presets(n *yaml.Node, param string) []preset {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.p.At(n, "parameter %s: presets must map each value to parameter defaults, not %s", param, describe(n))
		return nil
	}
	var out []preset
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ps := preset{Name: k.Value, Line: k.Line}
		v = yamlfile.Deref(v)
		if v == nil || v.Kind != yaml.MappingNode {
			d.p.At(v, "parameter %s preset %s must be a mapping of parameter: value, not %s", param, ps.Name, describe(v))
			continue
		}
		for j := 0; j+1 < len(v.Content); j += 2 {
			pk, pv := v.Content[j], v.Content[j+1]
			s, ok := scalar(pv)
			if !ok {
				d.p.At(pv, "parameter %s preset %s: %s must be a single value", param, ps.Name, pk.Value)
				continue
			}
			ps.Values = append(ps.Values, kv{Name: pk.Value, Value: s, Line: pk.Line})
		}
		out = append(out, ps)
	}
	return out
}

func (d *decoder) sequences(n *yaml.Node) {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.p.At(n, "sequences must be a mapping of name: {start: …, step: …}, not %s", describe(n))
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		s := &sequence{Name: d.name(k, "sequence name"), Line: k.Line}
		for _, q := range d.f.Sequences {
			if q.Name == s.Name && s.Name != "" {
				d.p.At(k, "sequence %s is defined twice", s.Name)
			}
		}
		d.seqFields(v, s, "sequence "+s.Name)
		d.f.Sequences = append(d.f.Sequences, s)
	}
}

func (d *decoder) seqFields(v *yaml.Node, s *sequence, what string) {
	if dv := yamlfile.Deref(v); dv != nil && dv.Kind == yaml.ScalarNode && dv.Tag == "!!null" {
		return // all defaults
	}
	m := d.fields(v, what, "start", "step", "after")
	if x, ok := m["start"]; ok {
		s.Start = d.number(x, what+" start")
	}
	if x, ok := m["step"]; ok {
		s.Step = d.number(x, what+" step")
	}
	if x, ok := m["after"]; ok {
		s.After = d.str(x, what+" after")
		s.AfterLine = x.Line
		if t, c, ok := strings.Cut(s.After, "."); !ok || !nameRE.MatchString(t) || !nameRE.MatchString(c) {
			d.p.At(x, "%s: after must be table.column, not %q", what, s.After)
			s.After = ""
		}
	}
}

func (d *decoder) table(n *yaml.Node) *tableSpec {
	t := &tableSpec{Line: yamlfile.Deref(n).Line}
	m := d.fields(n, "a table", "name", "columns", "primary_key", "indexes", "ddl", "rows", "load")
	if v, ok := m["name"]; ok {
		t.Name = d.name(v, "table name")
	} else {
		d.p.At(n, "a table has no name")
	}
	what := "table " + t.Name
	if v, ok := m["columns"]; ok {
		d.tableColumns(t, v, what)
	} else {
		d.p.At(n, "%s has no columns", what)
	}
	if v, ok := m["primary_key"]; ok {
		t.PrimaryKey = d.names(v, what+" primary_key")
		t.PKLine = v.Line
	}
	d.columnPrimaryKeys(t, what)
	if v, ok := m["indexes"]; ok {
		for _, it := range d.list(v, what+" indexes") {
			t.Indexes = append(t.Indexes, d.index(it, what))
		}
	}
	if v, ok := m["ddl"]; ok {
		t.DDL = map[string]string{}
		dm := d.fields(v, what+" ddl", dialectKeys(v)...)
		for k, x := range dm {
			t.DDL[k] = strings.TrimSpace(d.str(x, what+" ddl "+k))
		}
	}
	if v, ok := m["rows"]; ok {
		t.Rows = d.number(v, what+" rows")
	}
	if v, ok := m["load"]; ok {
		d.tableLoad(t, v, what)
	}
	d.checkTableColumns(t, what)
	return t
}

// tableColumns decodes a table's columns, each defined once.
func (d *decoder) tableColumns(t *tableSpec, v *yaml.Node, what string) {
	for _, it := range d.list(v, what+" columns") {
		c := d.column(it, what)
		for _, o := range t.Columns {
			if strings.EqualFold(o.Name, c.Name) && c.Name != "" {
				d.p.Add(c.Line, "%s: column %s is defined twice", what, c.Name)
			}
		}
		t.Columns = append(t.Columns, c)
	}
}

// columnPrimaryKeys reconciles columns marked primary_key with the table's
// primary_key list: without a list, the marked columns make it.
func (d *decoder) columnPrimaryKeys(t *tableSpec, what string) {
	for _, c := range t.Columns {
		if c.PrimaryKey {
			if t.PKLine != 0 && !slices.Contains(t.PrimaryKey, c.Name) {
				d.p.Add(c.Line, "%s: column %s says primary_key but the table's primary_key list does not name it", what, c.Name)
			} else if t.PKLine == 0 {
				t.PrimaryKey = append(t.PrimaryKey, c.Name)
			}
		}
	}
}

// index decodes one entry of a table's indexes.
func (d *decoder) index(it *yaml.Node, what string) *index {
	ix := &index{Line: yamlfile.Deref(it).Line}
	im := d.fields(it, what+" index", "name", "columns", "unique")
	if x, ok := im["name"]; ok {
		ix.Name = d.name(x, "index name")
	} else {
		d.p.At(it, "%s: an index has no name", what)
	}
	if x, ok := im["columns"]; ok {
		ix.Columns = d.names(x, "index columns")
	} else {
		d.p.At(it, "%s: index %s has no columns", what, ix.Name)
	}
	if x, ok := im["unique"]; ok {
		ix.Unique = d.boolean(x, "unique")
	}
	return ix
}

// tableLoad decodes a table's load: a map of columns to generators, which needs rows.
func (d *decoder) tableLoad(t *tableSpec, v *yaml.Node, what string) {
	v = yamlfile.Deref(v)
	if v == nil || v.Kind != yaml.MappingNode {
		d.p.At(v, "%s load must map columns to generators, not %s", what, describe(v))
	} else {
		for i := 0; i+1 < len(v.Content); i += 2 {
			k, g := v.Content[i], v.Content[i+1]
			cg := &columnGen{Column: d.name(k, "column"), Line: k.Line, Gen: d.gen(g, what+" load "+k.Value)}
			t.Load = append(t.Load, cg)
		}
	}
	if t.Rows == nil {
		d.p.At(v, "%s has load generators but no rows: add rows: N", what)
	}
}

// checkTableColumns checks that the columns named in keys and loads exist.
func (d *decoder) checkTableColumns(t *tableSpec, what string) {
	has := func(c string) bool {
		for _, col := range t.Columns {
			if strings.EqualFold(col.Name, c) {
				return true
			}
		}
		return false
	}
	for _, c := range t.PrimaryKey {
		if !has(c) {
			d.p.Add(t.PKLine, "%s: primary key column %s is not among its columns", what, c)
		}
	}
	for _, ix := range t.Indexes {
		for _, c := range ix.Columns {
			if !has(c) {
				d.p.Add(ix.Line, "%s: index %s names column %s, which the table does not have", what, ix.Name, c)
			}
		}
	}
	for _, cg := range t.Load {
		if cg.Column != "" && !has(cg.Column) {
			d.p.Add(cg.Line, "%s: load names column %s, which the table does not have", what, cg.Column)
		}
	}
}

func (d *decoder) column(n *yaml.Node, what string) *column {
	c := &column{Line: yamlfile.Deref(n).Line}
	m := d.fields(n, what+" column", "name", "type", "not_null", "default", "primary_key", "auto_increment")
	if v, ok := m["name"]; ok {
		c.Name = d.name(v, "column name")
	} else {
		d.p.At(n, "%s: a column has no name", what)
	}
	if v, ok := m["type"]; ok {
		c.Type = strings.ToLower(strings.TrimSpace(d.str(v, "column type")))
		base := c.Type
		if i := strings.IndexByte(base, '('); i >= 0 {
			base = strings.TrimSpace(base[:i])
		}
		if c.Type != "" && !slices.Contains(portableTypes, base) {
			d.p.At(v, "%s column %s: unknown type %q (use %s)", what, c.Name, c.Type, strings.Join(portableTypes, ", "))
		}
	} else {
		d.p.At(n, "%s column %s has no type", what, c.Name)
	}
	if v, ok := m["not_null"]; ok {
		c.NotNull = d.boolean(v, "not_null")
	}
	if v, ok := m["default"]; ok {
		c.Default = d.str(v, "default")
	}
	if v, ok := m["primary_key"]; ok {
		c.PrimaryKey = d.boolean(v, "primary_key")
	}
	if v, ok := m["auto_increment"]; ok {
		c.AutoIncrement = d.boolean(v, "auto_increment")
		switch c.Type {
		case "int", "integer", "bigint", "serial", "bigserial", "":
		default:
			d.p.At(v, "%s column %s: auto_increment needs an int or bigint column, not %s", what, c.Name, c.Type)
		}
	}
	return c
}

// portableTypes are target.Dialect's portable column types.
var portableTypes = []string{"int", "integer", "bigint", "serial", "bigserial", "char", "varchar", "text", "timestamp", "decimal", "boolean", "bytes", "double"}

func (d *decoder) txn(n *yaml.Node) *txnSpec {
	t := &txnSpec{Line: yamlfile.Deref(n).Line}
	m := d.fields(n, "a transaction", "name", "weight", "autocommit", "values", "steps")
	if v, ok := m["name"]; ok {
		t.Name = d.name(v, "transaction name")
	} else {
		d.p.At(n, "a transaction has no name")
	}
	what := "transaction " + t.Name
	if v, ok := m["weight"]; ok {
		t.Weight = d.number(v, what+" weight")
	}
	if v, ok := m["autocommit"]; ok {
		t.Autocommit = d.boolean(v, "autocommit")
	}
	if v, ok := m["values"]; ok {
		t.Values = d.values(v, what)
	}
	if v, ok := m["steps"]; ok {
		t.Steps = d.steps(v, what)
	}
	if len(t.Steps) == 0 {
		d.p.At(n, "%s has no steps: add steps: with at least one sql", what)
	}
	return t
}

func (d *decoder) values(n *yaml.Node, what string) []*namedGen {
	n = yamlfile.Deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		d.p.At(n, "%s values must map names to generators, not %s", what, describe(n))
		return nil
	}
	var out []*namedGen
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		ng := &namedGen{Name: d.name(k, "value name"), Line: k.Line}
		ng.Gen = d.gen(v, what+" value "+ng.Name)
		out = append(out, ng)
	}
	return out
}

func (d *decoder) steps(n *yaml.Node, what string) []*step {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > maxDepth {
		d.p.At(n, "%s: steps are nested more than %d deep", what, maxDepth)
		return nil
	}
	if d.nsteps > maxSteps {
		return nil
	}
	d.nsteps += len(yamlfile.Deref(n).Content)
	if d.nsteps > maxSteps {
		d.p.At(n, "%s: more than %d steps in the file", what, maxSteps)
		return nil
	}
	var out []*step
	for _, it := range d.list(n, what+" steps") {
		out = append(out, d.step(it, what))
	}
	return out
}

func (d *decoder) step(n *yaml.Node, what string) *step {
	s := &step{Line: yamlfile.Deref(n).Line}
	m := d.fields(n, what+" step", "sql", "values", "keep", "insert_id", "id_column", "repeat", "steps", "branch")
	_, hasSQL := m["sql"]
	_, hasSteps := m["steps"]
	_, hasBranch := m["branch"]
	switch {
	case hasSQL && !hasSteps && !hasBranch:
		s.Kind = stepSQL
	case hasSteps && !hasSQL && !hasBranch:
		s.Kind = stepBlock
	case hasBranch && !hasSQL && !hasSteps:
		s.Kind = stepBranch
	default:
		d.p.At(n, "%s: a step has exactly one of sql, steps (with repeat) or branch", what)
		return s
	}
	if s.Kind != stepSQL {
		for _, k := range []string{"values", "keep", "insert_id", "id_column"} {
			if v, ok := m[k]; ok {
				d.p.At(v, "%s: %s belongs to an sql step", what, k)
			}
		}
	}
	if v, ok := m["repeat"]; ok {
		if s.Kind == stepBranch {
			d.p.At(v, "%s: repeat a branch by putting it in steps: with repeat", what)
		}
		s.Repeat = d.gen(v, what+" repeat")
	}
	switch s.Kind {
	case stepSQL:
		d.sqlStep(s, m, what)
	case stepBlock:
		s.Steps = d.steps(m["steps"], what)
		if len(s.Steps) == 0 {
			d.p.At(m["steps"], "%s: steps is empty", what)
		}
	case stepBranch:
		d.branchStep(s, m["branch"], what)
	}
	return s
}

// sqlStep decodes the fields of an sql step: its statement and what it binds and keeps.
func (d *decoder) sqlStep(s *step, m map[string]*yaml.Node, what string) {
	d.stepSQL(s, yamlfile.Deref(m["sql"]), what)
	if x, ok := m["values"]; ok {
		s.Values = d.values(x, what+" step")
	}
	if x, ok := m["keep"]; ok {
		s.Keep = d.names(x, "keep")
		s.KeepLine = x.Line
	}
	if x, ok := m["insert_id"]; ok {
		s.InsertID = d.name(x, "insert_id")
		s.IDLine = x.Line
	}
	s.IDColumn = "id"
	if x, ok := m["id_column"]; ok {
		s.IDColumn = d.name(x, "id_column")
		if s.InsertID == "" {
			d.p.At(x, "%s: id_column goes with insert_id", what)
		}
	}
	if s.InsertID != "" && len(s.Keep) > 0 {
		d.p.Add(s.IDLine, "%s: a statement has keep or insert_id, not both", what)
	}
}

// stepSQL decodes a step's sql: one statement, or one per dialect (with a default
// unless every dialect has its own).
func (d *decoder) stepSQL(s *step, v *yaml.Node, what string) {
	s.SQLLine = v.Line
	s.SQL = map[string]string{}
	if v.Kind == yaml.MappingNode {
		dm := d.fields(v, what+" sql", append([]string{"default"}, dialectKeys(v)...)...)
		for k, x := range dm {
			key := k
			if k == "default" {
				key = ""
			}
			s.SQL[key] = strings.TrimSpace(d.str(x, what+" sql "+k))
		}
		if own := target.SQLDialects(true); len(dm) > 0 && s.SQL[""] == "" && !coversAll(dm, own) {
			d.p.At(v, "%s: sql by dialect needs a default: or an entry for each of %s", what, strings.Join(own, ", "))
		}
	} else if v.Kind == yaml.ScalarNode && v.Tag != "!!null" && strings.TrimSpace(v.Value) == "" {
		d.p.At(v, "%s: sql is empty", what)
	} else {
		s.SQL[""] = strings.TrimSpace(d.str(v, what+" sql"))
	}
}

// branchStep decodes a branch's arms, each with a probability and steps.
func (d *decoder) branchStep(s *step, n *yaml.Node, what string) {
	for _, it := range d.list(n, what+" branch") {
		a := &armSpec{Line: yamlfile.Deref(it).Line}
		am := d.fields(it, what+" branch arm", "probability", "steps")
		if x, ok := am["probability"]; ok {
			a.Probability = d.number(x, "probability")
		} else {
			d.p.At(it, "%s: a branch arm has no probability", what)
		}
		if x, ok := am["steps"]; ok {
			a.Steps = d.steps(x, what)
		}
		s.Arms = append(s.Arms, a)
	}
	if len(s.Arms) == 0 {
		d.p.At(n, "%s: branch has no arms", what)
	}
}

func (d *decoder) group(n *yaml.Node) *groupSpec {
	g := &groupSpec{Line: yamlfile.Deref(n).Line}
	m := d.fields(n, "a group", "name", "clients", "rate", "transactions_per_client", "transactions")
	if v, ok := m["name"]; ok {
		g.Name = d.name(v, "group name")
	} else {
		d.p.At(n, "a group has no name")
	}
	what := "group " + g.Name
	if v, ok := m["clients"]; ok {
		g.Clients = d.number(v, what+" clients")
	}
	if v, ok := m["rate"]; ok {
		g.Rate = d.number(v, what+" rate")
	}
	if v, ok := m["transactions_per_client"]; ok {
		g.PerClient = d.number(v, what+" transactions_per_client")
	}
	if v, ok := m["transactions"]; ok {
		v = yamlfile.Deref(v)
		items := []*yaml.Node{v}
		if v.Kind == yaml.SequenceNode {
			items = v.Content
		}
		for _, it := range items {
			if s := d.name(it, what+" transaction"); s != "" {
				g.Transactions = append(g.Transactions, s)
				g.TxnLines = append(g.TxnLines, it.Line)
			}
		}
	}
	if len(g.Transactions) == 0 {
		d.p.At(n, "%s runs no transactions: add transactions: [name, …]", what)
	}
	return g
}

// gen decodes a generator: a constant scalar, or a mapping with one generator key.
func (d *decoder) gen(n *yaml.Node, what string) *genDef {
	g, v, ok := d.genKind(n, what)
	if !ok {
		return g
	}
	what += " " + g.Kind
	if d.genShorthand(g, v, what) {
		return g
	}
	m := d.fields(v, what, genArgs[g.Kind]...)
	d.genFields(g, m, what)
	d.checkGenArgs(g, m, v, what)
	return g
}

// genKind reads which generator a node names: a constant, or a mapping of exactly one
// known generator to its arguments (returned). It returns false when the generator is
// complete (a constant) or unusable.
func (d *decoder) genKind(n *yaml.Node, what string) (*genDef, *yaml.Node, bool) {
	n = yamlfile.Deref(n)
	g := &genDef{Node: n, Args: map[string]*yaml.Node{}}
	if n == nil {
		d.p.Add(0, "%s: missing generator", what)
		return g, nil, false
	}
	g.Line = n.Line
	switch n.Kind {
	case yaml.ScalarNode:
		g.Kind, g.Const = "const", n
		return g, nil, false
	case yaml.MappingNode:
	default:
		d.p.At(n, "%s must be a constant or a generator such as {uniform: [1, 100]}, not %s", what, describe(n))
		return g, nil, false
	}
	if len(n.Content) != 2 {
		var keys []string
		for i := 0; i < len(n.Content); i += 2 {
			keys = append(keys, n.Content[i].Value)
		}
		d.p.At(n, "%s must name exactly one generator (%s), not %s", what, strings.Join(generators, ", "), strings.Join(keys, ", "))
		if len(n.Content) == 0 {
			return g, nil, false
		}
	}
	k, v := n.Content[0], yamlfile.Deref(n.Content[1])
	g.Kind = k.Value
	if !slices.Contains(generators, g.Kind) {
		d.p.At(k, "%s: unknown generator %q (use %s)", what, g.Kind, strings.Join(generators, ", "))
		g.Kind = ""
		return g, nil, false
	}
	return g, v, true
}

// rangeGens are the generators that take [min, max] for {min: …, max: …}.
var rangeGens = []string{"uniform", "float", "zipfian", "exponential", "hotspot", "gaussian", "special"}

// genShorthand reads the short forms of a generator's arguments (sequence: name,
// string: length, timestamp: now, [min, max]) and choice's list, and reports whether
// it did: otherwise the arguments are a mapping.
func (d *decoder) genShorthand(g *genDef, v *yaml.Node, what string) bool {
	switch g.Kind {
	case "sequence":
		if _, ok := scalar(v); ok && v.Tag != "!!null" {
			g.Sequence = d.name(v, "sequence name")
			return true
		}
		if v.Kind == yaml.ScalarNode { // sequence: (null) — all defaults
			return true
		}
	case "string":
		if v.Kind == yaml.ScalarNode {
			g.Args["length"] = d.number(v, what+" length")
			return true
		}
	case "timestamp":
		if s, ok := scalar(v); ok {
			if s != "now" {
				d.p.At(v, "%s: use timestamp: now or timestamp: {min: 2024-01-01, max: 2024-12-31}", what)
			}
			g.Now = true
			return true
		}
	case "choice":
		d.choices(g, v, what)
		return true
	}
	if v.Kind == yaml.SequenceNode && slices.Contains(rangeGens, g.Kind) {
		if len(v.Content) != 2 {
			d.p.At(v, "%s: [min, max] takes two numbers, not %d", what, len(v.Content))
			return true
		}
		g.Args["min"] = d.number(v.Content[0], what+" min")
		g.Args["max"] = d.number(v.Content[1], what+" max")
		return true
	}
	return false
}

// choices reads choice's list: values, or {value: …, weight: …}.
func (d *decoder) choices(g *genDef, v *yaml.Node, what string) {
	items := d.list(v, what)
	for _, it := range items {
		it = yamlfile.Deref(it)
		if it.Kind == yaml.MappingNode {
			cm := d.fields(it, what+" item", "value", "weight")
			c := choice{Value: cm["value"], Weight: cm["weight"]}
			if c.Value == nil {
				d.p.At(it, "%s: an item has no value", what)
			} else if _, ok := scalar(c.Value); !ok {
				d.p.At(c.Value, "%s: a value must be a single value, not %s", what, describe(c.Value))
			}
			if c.Weight != nil {
				c.Weight = d.number(c.Weight, "weight")
			}
			g.Choices = append(g.Choices, c)
		} else if it.Kind == yaml.ScalarNode {
			g.Choices = append(g.Choices, choice{Value: it})
		} else {
			d.p.At(it, "%s: an item must be a value or {value: …, weight: …}", what)
		}
	}
	if len(items) == 0 && v.Kind == yaml.SequenceNode {
		d.p.At(v, "%s has no values", what)
	}
}

// genFields reads a generator's arguments given as a mapping.
func (d *decoder) genFields(g *genDef, m map[string]*yaml.Node, what string) {
	for key, x := range m {
		switch {
		case key == "scramble":
			g.Scramble = d.boolean(x, "scramble")
		case key == "pattern":
			g.Pattern = d.str(x, "pattern")
			if g.Pattern == "" {
				d.p.At(x, "%s: pattern is empty", what)
			}
		case key == "after":
			g.After = d.str(x, what+" after")
			if t, c, ok := strings.Cut(g.After, "."); !ok || !nameRE.MatchString(t) || !nameRE.MatchString(c) {
				d.p.At(x, "%s: after must be table.column, not %q", what, g.After)
				g.After = ""
			}
		case g.Kind == "latest" && key == "sequence":
			g.Sequence = d.name(x, "sequence")
		case g.Kind == "timestamp":
			s := d.str(x, what+" "+key)
			if key == "min" {
				g.TimeMin = s
			} else {
				g.TimeMax = s
			}
			g.Args[key] = x
		default:
			g.Args[key] = d.number(x, what+" "+key)
		}
	}
}

// checkGenArgs checks a generator was given the arguments it needs (m, from v).
func (d *decoder) checkGenArgs(g *genDef, m map[string]*yaml.Node, v *yaml.Node, what string) {
	switch g.Kind {
	case "uniform", "zipfian", "exponential", "hotspot", "gaussian", "special", "float", "timestamp":
		for _, req := range []string{"min", "max"} {
			if m[req] == nil {
				d.p.At(v, "%s needs %s", what, req)
			}
		}
	case "string":
		d.checkStringLength(m, v, what)
	case "latest":
		if m["sequence"] == nil || m["window"] == nil {
			d.p.At(v, "%s needs sequence and window", what)
		}
	}
	if g.Kind == "exponential" && m["mean"] == nil {
		d.p.At(v, "%s needs mean", what)
	}
}

// checkStringLength checks string's arguments: a pattern, a length, or min_length and
// max_length.
func (d *decoder) checkStringLength(m map[string]*yaml.Node, v *yaml.Node, what string) {
	_, l := m["length"]
	_, lo := m["min_length"]
	_, hi := m["max_length"]
	_, pat := m["pattern"]
	switch {
	case pat && (l || lo || hi):
		d.p.At(v, "%s: give a pattern or a length, not both", what)
	case l && (lo || hi):
		d.p.At(v, "%s: give length or min_length and max_length, not both", what)
	case lo != hi:
		d.p.At(v, "%s: min_length and max_length go together", what)
	case !l && !lo && !pat:
		d.p.At(v, "%s needs a length or a pattern", what)
	}
}

// crossCheck checks references between parts of the file: group transactions and
// sequence names.
func (d *decoder) crossCheck() {
	d.checkGroups()
	d.checkPresets()
	d.checkSequences()
}

// checkGroups checks that groups run defined transactions and that, when there are
// groups, every transaction is in one.
func (d *decoder) checkGroups() {
	f := d.f
	txns := map[string]bool{}
	for _, t := range f.Txns {
		txns[t.Name] = true
	}
	used := map[string]bool{}
	for _, g := range f.Groups {
		for i, name := range g.Transactions {
			if !txns[name] {
				d.p.Add(g.TxnLines[i], "group %s runs transaction %s, which is not defined", g.Name, name)
			}
			used[name] = true
		}
	}
	if len(f.Groups) > 0 {
		for _, t := range f.Txns {
			if !used[t.Name] && t.Name != "" {
				d.p.Add(t.Line, "transaction %s is in no group: add it to a group's transactions or remove it", t.Name)
			}
		}
	}
}

// checkPresets checks that parameter presets set other parameters that have no presets
// of their own, and that a default names one of the presets.
func (d *decoder) checkPresets() {
	f := d.f
	params := map[string]*paramSpec{}
	for _, p := range f.Params {
		params[p.Name] = p
	}
	for _, p := range f.Params {
		for _, ps := range p.Presets {
			for _, kv := range ps.Values {
				q, ok := params[kv.Name]
				switch {
				case !ok:
					d.p.Add(kv.Line, "parameter %s preset %s sets %s, which is not a parameter", p.Name, ps.Name, kv.Name)
				case q == p:
					d.p.Add(kv.Line, "parameter %s preset %s sets the parameter itself", p.Name, ps.Name)
				case len(q.Presets) > 0:
					d.p.Add(kv.Line, "parameter %s preset %s sets %s, which has presets of its own", p.Name, ps.Name, kv.Name)
				}
			}
		}
		if len(p.Presets) > 0 && p.Default != "" {
			found := false
			for _, ps := range p.Presets {
				found = found || ps.Name == p.Default
			}
			if !found {
				d.p.Add(p.Line, "parameter %s: default %q is not one of its presets", p.Name, p.Default)
			}
		}
	}
}

// checkSequences checks that the generators naming a sequence name a defined one.
func (d *decoder) checkSequences() {
	f := d.f
	seqs := map[string]bool{}
	for _, s := range f.Sequences {
		seqs[s.Name] = true
	}
	walkGen := func(g *genDef) {
		if g != nil && g.Sequence != "" && !seqs[g.Sequence] {
			d.p.Add(g.Line, "sequence %s is not defined under sequences:", g.Sequence)
		}
	}
	for _, t := range f.Tables {
		for _, l := range t.Load {
			walkGen(l.Gen)
		}
	}
	var walkSteps func(ss []*step)
	walkSteps = func(ss []*step) {
		for _, s := range ss {
			walkGen(s.Repeat)
			for _, v := range s.Values {
				walkGen(v.Gen)
			}
			walkSteps(s.Steps)
			for _, a := range s.Arms {
				walkSteps(a.Steps)
			}
		}
	}
	for _, t := range f.Txns {
		for _, v := range t.Values {
			walkGen(v.Gen)
		}
		walkSteps(t.Steps)
	}
}
