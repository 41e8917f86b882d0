package lua

import "math"

// Inline caches for reads of fields named by string constants (globals,
// t.name, obj:method()): each closure remembers, per site, the table a value
// was found in and that table's write generation, so that the next read at the
// site, while neither changed, is two compares instead of a map lookup.
//
// A site that reads the same field of several tables in turn (sysbench's
// param[tnum].point_selects over --tables) also keeps the last fieldWays other
// tables' values, replaced in turn.

type fieldCacheEntry struct {
	// a is the table the value was read from: the object read, or, for a
	// userdata, its metatable's __index table (which alone decides the value
	// while the metatable's __index is that table: LTable.index).
	a   *LTable
	gen uint64 // a's gen when the value was read
	v   LValue
}

// An entry is 32 bytes, two to a cache line: a site's check reads its entry and
// the table, and in a run with many clients both are usually out of the cache.

const fieldWays = 7

// fieldWaysBlock holds a site's other tables' values, with the tables (each
// entry's a) apart, so that finding a table's entry reads one cache line.
type fieldWaysBlock struct {
	a    [fieldWays]*LTable
	e    [fieldWays]fieldCacheEntry
	next uint8 // the entry a new table replaces
}

// find returns the entry kept for t, or nil.
func (w *fieldWaysBlock) find(t *LTable) *fieldCacheEntry {
	for i, a := range &w.a {
		if a == t {
			return &w.e[i]
		}
	}
	return nil
}

// hit reports whether e holds the field of table t, as it is now.
func (e *fieldCacheEntry) hit(t *LTable) bool {
	return e.a == t && e.gen == t.gen
}

// lookupMore returns the value kept at site for table t (the object read, or a
// userdata's __index table) among the site's other tables, if it is current
// (getFieldSite checks the site's own entry first, inline).
func (fn *LFunction) lookupMore(site int, t *LTable) (LValue, bool) {
	if fn.fieldMore != nil {
		if w := fn.fieldMore[site]; w != nil {
			if m := w.find(t); m != nil && m.hit(t) {
				return m.v, true
			}
		}
	}
	return nil, false
}

// fill keeps v, read from table t, at the site: in its entry when that is empty or
// holds t's older value, else among the site's other tables.
func (fn *LFunction) fill(site int, t *LTable, v LValue) {
	f := fieldCacheEntry{a: t, gen: t.gen, v: v}
	e := &fn.fieldCache[site]
	if e.a == nil || e.a == t {
		*e = f
		return
	}
	if fn.fieldMore == nil {
		fn.fieldMore = make([]*fieldWaysBlock, len(fn.fieldCache))
	}
	w := fn.fieldMore[site]
	if w == nil {
		w = new(fieldWaysBlock)
		fn.fieldMore[site] = w
	}
	if m := w.find(t); m != nil { // the same table, written since
		*m = f
		return
	}
	w.a[w.next], w.e[w.next] = t, f
	w.next = (w.next + 1) % fieldWays
}

func markFieldSites(proto *FunctionProto) {
	proto.fieldSites = make([]uint16, len(proto.Code))
	n := 0
	for pc, inst := range proto.Code {
		if n == math.MaxUint16 {
			break // the rest are read without a cache
		}
		switch opGetOpCode(inst) {
		case OP_GETGLOBAL:
		case OP_GETTABLE, OP_GETTABLEKS, OP_SELF:
			c := opGetArgC(inst)
			if !opIsK(c) {
				continue
			}
			if _, ok := proto.Constants[opIndexK(c)].(LString); !ok {
				continue
			}
		default:
			continue
		}
		n++
		proto.fieldSites[pc] = uint16(n)
	}
	proto.numFieldSites = n
}

// getFieldSite is getFieldString at the field site of the instruction being run.
func (ls *LState) getFieldSite(obj LValue, key string) LValue {
	fn := ls.currentFrame.Fn
	site := int(fn.Proto.fieldSites[ls.currentFrame.Pc-1]) - 1
	if site < 0 {
		return ls.getFieldString(obj, key)
	}
	if fn.fieldCache == nil {
		fn.fieldCache = make([]fieldCacheEntry, fn.Proto.numFieldSites)
	}
	e := &fn.fieldCache[site]
	switch o := obj.(type) {
	case *LTable:
		if e.hit(o) {
			return e.v
		}
		if v, ok := fn.lookupMore(site, o); ok {
			return v
		}
		if o.strdict != nil {
			if v, ok := o.strdict[key]; ok {
				fn.fill(site, o, v)
				return v
			}
		}
	case *LUserData:
		mt, ok := o.Metatable.(*LTable)
		if !ok || mt.index == nil {
			break
		}
		idx := mt.index
		if e.hit(idx) {
			return e.v
		}
		if v, ok := fn.lookupMore(site, idx); ok {
			return v
		}
		if idx.strdict != nil {
			if v, ok := idx.strdict[key]; ok {
				fn.fill(site, idx, v)
				return v
			}
		}
	}
	return ls.getFieldString(obj, key)
}
