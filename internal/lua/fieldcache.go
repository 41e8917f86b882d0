package lua

// Inline caches for reads of fields named by string constants (globals,
// t.name, obj:method()): each closure remembers, per site, the table a value
// was found in and that table's write generation, so that the next read at the
// site, while neither changed, is two compares instead of a map lookup.

type fieldCacheEntry struct {
	a    *LTable // the table the value was read from, or a userdata's metatable
	agen uint64
	b    *LTable // nil, or the metatable's __index table the value was read from
	bgen uint64
	v    LValue
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
		if e.a == o && e.b == nil && e.agen == o.gen {
			return e.v
		}
		if o.strdict != nil {
			if v, ok := o.strdict[key]; ok {
				*e = fieldCacheEntry{a: o, agen: o.gen, v: v}
				return v
			}
		}
	case *LUserData:
		mt, ok := o.Metatable.(*LTable)
		if !ok {
			break
		}
		if e.a == mt && e.b != nil && e.agen == mt.gen && e.bgen == e.b.gen {
			return e.v
		}
		if idx, ok := mt.RawGetString("__index").(*LTable); ok && idx.strdict != nil {
			if v, ok := idx.strdict[key]; ok {
				*e = fieldCacheEntry{a: mt, agen: mt.gen, b: idx, bgen: idx.gen, v: v}
				return v
			}
		}
	}
	return ls.getFieldString(obj, key)
}
