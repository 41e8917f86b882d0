package sqlstore

import (
	"encoding/json"
	"testing"

	"github.com/fathom-lab/fathom/internal/target"
)

func TestParseErrorCounts(t *testing.T) {
	for _, s := range []string{"", "{}", `{"serialization":1}`, `{"deadlock":3,"serialization":12}`, `{"other":9223372036854775807}`,
		`{"unknown":4,"timeout":2}`, `{"serialization":-1}`, `{"serialization":1,"serialization":2}`, `{"connection":0}`, "null",
		`{ "deadlock": 2 }`, `{"dead\u006cock":2}`, `{"deadlock":2.0}`, `{"deadlock":02}`, `{"deadlock":}`, `{"deadlock":2,}`, `{"deadlock"`,
		`{"deadlock":99999999999999999999}`, `[1]`, `{`, `}`, `{"auth":1,"undefined":2,"canceled":3,"constraint":4}`} {
		checkErrorCounts(t, []byte(s))
	}
	var got [target.NumClasses]int64
	if err := parseErrorCounts([]byte(`{"deadlock":3,"serialization":12}`), &got); err != nil || got[target.ClassDeadlock] != 3 || got[target.ClassSerialization] != 12 {
		t.Fatalf("got %v, %v", got, err)
	}
}

// checkErrorCounts asserts that parseErrorCounts reads s as encoding/json does.
func checkErrorCounts(t *testing.T, s []byte) {
	var want [target.NumClasses]int64
	var em map[string]int64
	wantErr := false
	if len(s) > 0 && string(s) != "{}" {
		if err := json.Unmarshal(s, &em); err != nil {
			wantErr = true
		}
		for cl := target.Class(0); cl < target.NumClasses; cl++ {
			want[cl] = em[cl.String()]
		}
	}
	var got [target.NumClasses]int64
	err := parseErrorCounts(s, &got)
	if (err != nil) != wantErr || (!wantErr && got != want) {
		t.Fatalf("%q: got %v, %v; encoding/json: %v, error %v", s, got, err, want, wantErr)
	}
}

func FuzzParseErrorCounts(f *testing.F) {
	for _, s := range []string{"{}", `{"serialization":1}`, `{"deadlock":3,"serialization":12}`, `{"deadlock":02}`, `{"x":-0}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, s []byte) { checkErrorCounts(t, s) })
}
