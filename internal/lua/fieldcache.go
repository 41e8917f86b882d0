package lua

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
	more *[fieldWays]fieldCacheEntry
	next uint8
}

const fieldWays = 7

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
		e.more = new([fieldWays]fieldCacheEntry)
	}
	for i := range e.more {
		if e.more[i].a == f.a { // the same table, written since
			e.more[i] = f
			return
		}
	}
	e.more[e.next] = f
	e.next = (e.next + 1) % fieldWays
}

func markFieldSites(proto *FunctionProto) {
	proto.fieldSites = make([]int32, len(proto.Code))
	n := int32(0)
	for pc, inst := range proto.Code {
		proto.fieldSites[pc] = -1
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
		proto.fieldSites[pc] = n
		n++
	}
	proto.numFieldSites = int(n)
}

// getFieldSite is getFieldString at the field site of the instruction being run.
func (ls *LState) getFieldSite(obj LValue, key string) LValue {
	fn := ls.currentFrame.Fn
	site := fn.Proto.fieldSites[ls.currentFrame.Pc-1]
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
			for i := range e.more {
				if m := &e.more[i]; m.tableHit(o) {
					return m.v
				}
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
			for i := range e.more {
				if m := &e.more[i]; m.userdataHit(mt) {
					return m.v
				}
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
