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
	a    *LTable // the table the value was read from, or a userdata's metatable
	agen uint64
	b    *LTable // nil, or the metatable's __index table the value was read from
	bgen uint64
	v    LValue
	// more holds other tables' values, once the site has seen a second table;
	// next is the one a new table replaces.
	more *fieldWaysBlock
	next uint8
}

const fieldWays = 7

// fieldWaysBlock holds a site's other tables' values, with the tables (each
// entry's a) apart, so that finding a table's entry reads one cache line.
type fieldWaysBlock struct {
	a [fieldWays]*LTable
	e [fieldWays]fieldCacheEntry
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

// tableHit reports whether e holds the field of table o, as it is now.
func (e *fieldCacheEntry) tableHit(o *LTable) bool {
	return e.a == o && e.b == nil && e.agen == o.gen
}

// userdataHit reports whether e holds the field reached through metatable mt.
func (e *fieldCacheEntry) userdataHit(mt *LTable) bool {
	return e.a == mt && e.b != nil && e.agen == mt.gen && e.bgen == e.b.gen
}

// fill keeps f at the site: in e when e is empty or holds the same table's (or
// metatable's) older value, else in more.
func (e *fieldCacheEntry) fill(f fieldCacheEntry) {
	if e.a == nil || e.a == f.a {
		f.more, f.next = e.more, e.next
		*e = f
		return
	}
	if e.more == nil {
		e.more = new(fieldWaysBlock)
	}
	if m := e.more.find(f.a); m != nil { // the same table, written since
		*m = f
		return
	}
	e.more.a[e.next], e.more.e[e.next] = f.a, f
	e.next = (e.next + 1) % fieldWays
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
		if e.tableHit(o) {
			return e.v
		}
		if e.more != nil {
			if m := e.more.find(o); m != nil && m.tableHit(o) {
				return m.v
			}
		}
		if o.strdict != nil {
			if v, ok := o.strdict[key]; ok {
				e.fill(fieldCacheEntry{a: o, agen: o.gen, v: v})
				return v
			}
		}
	case *LUserData:
		mt, ok := o.Metatable.(*LTable)
		if !ok {
			break
		}
		if e.userdataHit(mt) {
			return e.v
		}
		if e.more != nil {
			if m := e.more.find(mt); m != nil && m.userdataHit(mt) {
				return m.v
			}
		}
		if idx, ok := mt.RawGetString("__index").(*LTable); ok && idx.strdict != nil {
			if v, ok := idx.strdict[key]; ok {
				e.fill(fieldCacheEntry{a: mt, agen: mt.gen, b: idx, bgen: idx.gen, v: v})
				return v
			}
		}
	}
	return ls.getFieldString(obj, key)
}
