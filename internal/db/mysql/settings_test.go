package mysql

import "testing"

func TestMySQLValue(t *testing.T) {
	for in, want := range map[string]string{"1": "1", "64M": "67108864", "on": "ON", "O_DIRECT": "'O_DIRECT'", "it's": `'it\'s'`, "0.5": "0.5"} {
		if got := mysqlValue(in); got != want {
			t.Errorf("mysqlValue(%q) = %s, want %s", in, got, want)
		}
	}
}
