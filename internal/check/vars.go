package check

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
)

// value is one variable: a number, or text for settings like log_bin=ON.
type value struct {
	Name  string // as the server spells it
	Num   float64
	Str   string
	IsNum bool
}

// any is the value as the expression language sees it: float64 or string.
func (v value) any() any {
	if v.IsNum {
		return v.Num
	}
	return v.Str
}

// String renders the value for --list.
func (v value) String() string {
	if v.IsNum {
		return formatNumber(v.Num)
	}
	return v.Str
}

// vars is one namespace of variables, looked up case-insensitively.
type vars map[string]value

// Set stores a variable, parsing numbers; an existing variable of the same name is
// kept unless replace is set (MySQL: status wins over variables on a clash).
func (vs vars) Set(name, raw string, replace bool) {
	key := strings.ToLower(name)
	if _, ok := vs[key]; ok && !replace {
		return
	}
	vs[key] = parseValue(name, raw)
}

// SetNum stores a number.
func (vs vars) SetNum(name string, f float64) {
	vs[strings.ToLower(name)] = value{Name: name, Num: f, IsNum: true}
}

func parseValue(name, raw string) value {
	s := strings.TrimSpace(raw)
	if f, ok := ParseNumber(s); ok {
		return value{Name: name, Num: f, IsNum: true}
	}
	return value{Name: name, Str: raw}
}

// Get looks a variable up case-insensitively.
func (vs vars) Get(name string) (value, bool) {
	v, ok := vs[strings.ToLower(name)]
	return v, ok
}

// Names lists the variables' names as the server spells them, sorted
// case-insensitively.
func (vs vars) Names() []string {
	keys := make([]string, 0, len(vs))
	for k := range vs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := make([]string, len(keys))
	for i, k := range keys {
		out[i] = vs[k].Name
	}
	return out
}

// only returns the subset of vs named in names (lower case).
func (vs vars) only(names []string) vars {
	out := vars{}
	for _, n := range names {
		if v, ok := vs[strings.ToLower(n)]; ok {
			out[strings.ToLower(n)] = v
		}
	}
	return out
}

// suggest returns the closest known name to a misspelled one, or "".
func (vs vars) suggest(name string) string {
	want := strings.ToLower(name)
	limit := len(want)/3 + 2
	best, bestD := "", limit
	for k, v := range vs {
		d := editDistance(want, k, limit)
		if d < limit && (d < bestD || d == bestD && v.Name < best) {
			best, bestD = v.Name, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b, or limit when it is at least
// limit.
func editDistance(a, b string, limit int) int {
	if d := len(a) - len(b); d >= limit || -d >= limit {
		return limit
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			rowMin = min(rowMin, cur[j])
		}
		if rowMin >= limit {
			return limit
		}
		prev, cur = cur, prev
	}
	return min(prev[len(b)], limit)
}

// MarshalJSON writes variables as {"Name": number-or-string}.
func (vs vars) MarshalJSON() ([]byte, error) {
	m := make(map[string]json.RawMessage, len(vs))
	for _, v := range vs {
		if v.IsNum {
			m[v.Name] = json.RawMessage(strconv.FormatFloat(v.Num, 'g', -1, 64))
		} else {
			b, err := json.Marshal(v.Str)
			if err != nil {
				return nil, err
			}
			m[v.Name] = b
		}
	}
	return json.Marshal(m)
}

// UnmarshalJSON reads what MarshalJSON wrote.
func (vs *vars) UnmarshalJSON(b []byte) error {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	out := make(vars, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case float64:
			out[strings.ToLower(k)] = value{Name: k, Num: v, IsNum: true}
		case string:
			out[strings.ToLower(k)] = value{Name: k, Str: v}
		}
	}
	*vs = out
	return nil
}
