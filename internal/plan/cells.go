package plan

import (
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Cell is one combination of axis values with every parameter resolved.
type Cell struct {
	Index  int
	Coords []coord // the cell's value on each axis, in axis order

	Workload     string
	Options      []KV // workload options
	Table        []KV // table options of the workload's prepare (Layout)
	Settings     []KV // server settings, base first
	OS           []KV // OS settings (sysctl keys without os.), base first
	Clients      int
	Agents       int           // run by this many `fathom agent`s (0: this process)
	Duration     time.Duration // 0 when Transactions is set
	Transactions int64
	Warmup       time.Duration
	Rate         float64
	LatencyLimit time.Duration
	Interval     time.Duration
	MaxTries     int
	QueryMode    string
	Instances    int
	// Target is the DSN the cell runs on when an axis names the targets ("": the
	// plan's target or instances).
	Target string
	// Instance is the throwaway instance the cell runs on when an axis names the
	// instances, InstanceValue that axis's value (its label); nil and "" otherwise.
	Instance      *Instance
	InstanceValue string
}

// coord is a cell's value on one axis. Axis is the axis's short name (ShortAxis):
// synchronous_commit for settings.synchronous_commit.
type coord struct {
	Axis  string `json:"axis"`
	Value string `json:"value"`
}

// KV is a named value and the line it came from.
type KV struct {
	Name  string
	Value string
	Line  int
}

// Key names the cell by its axis values, e.g. "clients=4 synchronous_commit=off"
// (settings. and options. prefixes left out); "all" for a plan without a matrix.
func (c *Cell) Key() string {
	if len(c.Coords) == 0 {
		return "all"
	}
	parts := make([]string, len(c.Coords))
	for i, co := range c.Coords {
		parts[i] = ShortAxis(co.Axis) + "=" + co.Value
	}
	return strings.Join(parts, " ")
}

// ShortAxis drops the settings., options. or table. prefix of an axis name.
func ShortAxis(name string) string {
	name = strings.TrimPrefix(name, "settings.")
	name = strings.TrimPrefix(name, "table.")
	return strings.TrimPrefix(name, "options.")
}

// Planned is how long the cell runs as planned (warm-up plus duration), 0 when it
// runs a number of transactions.
func (c *Cell) Planned() time.Duration {
	if c.Duration == 0 {
		return 0
	}
	return c.Warmup + c.Duration
}

// Setting returns the cell's value of a setting.
func (c *Cell) Setting(name string) (string, bool) {
	for _, s := range c.Settings {
		if s.Name == name {
			return s.Value, true
		}
	}
	return "", false
}

// OptionMap returns the workload options as a map.
func (c *Cell) OptionMap() map[string]string {
	m := make(map[string]string, len(c.Options))
	for _, o := range c.Options {
		m[o.Name] = o.Value
	}
	return m
}

// Cells returns the plan's cells: the cartesian product of its axes, the last axis
// varying fastest (a plan without a matrix has one cell).
func (p *Plan) Cells() []*Cell {
	n := 1
	for _, ax := range p.Axes {
		n *= len(ax.Values)
	}
	if n == 0 {
		return nil
	}
	cells := make([]*Cell, 0, n)
	idx := make([]int, len(p.Axes))
	for c := 0; c < n; c++ {
		rem := c
		for a := len(p.Axes) - 1; a >= 0; a-- {
			idx[a] = rem % len(p.Axes[a].Values)
			rem /= len(p.Axes[a].Values)
		}
		params := append([]param(nil), p.Base...)
		var coords []coord
		for a, ax := range p.Axes {
			av := ax.Values[idx[a]]
			coords = append(coords, coord{Axis: ShortAxis(ax.Name), Value: av.Label})
			params = overlay(params, av.Params)
		}
		cell := resolve(params)
		cell.Index, cell.Coords = c, coords
		for a, ax := range p.Axes {
			if av := ax.Values[idx[a]]; av.Instance != nil {
				cell.Instance, cell.InstanceValue = av.Instance, av.Label
			}
		}
		cells = append(cells, cell)
	}
	return cells
}

// overlay applies over to params: a key set again replaces the earlier value, and
// duration and transactions replace each other.
func overlay(params, over []param) []param {
	drop := map[string]bool{}
	for _, o := range over {
		drop[o.Key] = true
		switch o.Key {
		case "duration":
			drop["transactions"] = true
		case "transactions":
			drop["duration"] = true
		}
	}
	out := params[:0:0]
	for _, prm := range params {
		if !drop[prm.Key] {
			out = append(out, prm)
		}
	}
	return append(out, over...)
}

// resolve turns checked parameters into a cell (values were checked when decoded).
func resolve(params []param) *Cell {
	c := &Cell{Clients: 1, Interval: time.Second, MaxTries: 1, QueryMode: "prepared", Instances: 1}
	for _, prm := range params {
		v := prm.Value
		switch {
		case prm.Key == "workload":
			c.Workload = v
		case prm.Key == "clients":
			c.Clients, _ = strconv.Atoi(v)
		case prm.Key == "agents":
			c.Agents, _ = strconv.Atoi(v)
		case prm.Key == "max_tries":
			c.MaxTries, _ = strconv.Atoi(v)
		case prm.Key == "instances":
			c.Instances, _ = strconv.Atoi(v)
		case prm.Key == "transactions":
			c.Transactions, _ = strconv.ParseInt(v, 10, 64)
		case prm.Key == "duration":
			c.Duration, _ = parseDuration(v)
		case prm.Key == "warmup":
			c.Warmup, _ = parseDuration(v)
		case prm.Key == "latency_limit":
			c.LatencyLimit, _ = parseDuration(v)
		case prm.Key == "report_interval":
			c.Interval, _ = parseDuration(v)
		case prm.Key == "rate":
			c.Rate, _ = strconv.ParseFloat(v, 64)
		case prm.Key == "query_mode":
			c.QueryMode = v
		case prm.Key == "target":
			c.Target = v
		case strings.HasPrefix(prm.Key, "table."):
			c.Table = append(c.Table, KV{strings.TrimPrefix(prm.Key, "table."), v, prm.Line})
		case strings.HasPrefix(prm.Key, "options."):
			c.Options = append(c.Options, KV{strings.TrimPrefix(prm.Key, "options."), v, prm.Line})
		case strings.HasPrefix(prm.Key, "settings."+OSPrefix):
			c.OS = append(c.OS, KV{strings.TrimPrefix(prm.Key, "settings."+OSPrefix), v, prm.Line})
		case strings.HasPrefix(prm.Key, "settings."):
			c.Settings = append(c.Settings, KV{strings.TrimPrefix(prm.Key, "settings."), v, prm.Line})
		}
	}
	if c.Duration == 0 && c.Transactions == 0 {
		c.Duration = 10 * time.Second
	}
	return c
}

// slot is one run of the schedule: a cell and a repetition (1-based).
type slot struct {
	Index      int
	Cell       int
	Repetition int
}

// Schedule orders cells × repetitions. Interleaved runs every cell once per round, so
// that drift over time (caches warming, disks filling) spreads over all cells instead
// of masquerading as an effect; random shuffles each round with seed; sequential runs
// all repetitions of a cell before the next cell.
func Schedule(cells, reps int, order string, seed uint64) []slot {
	var out []slot
	add := func(c, r int) { out = append(out, slot{Index: len(out), Cell: c, Repetition: r}) }
	switch order {
	case OrderSequential:
		for c := 0; c < cells; c++ {
			for r := 1; r <= reps; r++ {
				add(c, r)
			}
		}
	default:
		rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
		perm := make([]int, cells)
		for r := 1; r <= reps; r++ {
			for i := range perm {
				perm[i] = i
			}
			if order == OrderRandom {
				rng.Shuffle(len(perm), func(i, j int) { perm[i], perm[j] = perm[j], perm[i] })
			}
			for _, c := range perm {
				add(c, r)
			}
		}
	}
	return out
}

// RunSeed is the seed of one run when the plan gives a seed: different for every cell
// and repetition, the same every time the plan runs.
func RunSeed(planSeed uint64, cellKey string, rep int) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d", planSeed, cellKey, rep)
	return h.Sum64() >> 1
}
