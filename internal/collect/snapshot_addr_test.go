package collect

import "testing"

func TestDecodeProcAddr(t *testing.T) {
	for in, want := range map[string]string{
		"0100007F:1538":                         "127.0.0.1 5432",
		"00000000:0CEA":                         "0.0.0.0 3306",
		"00000000000000000000000001000000:18EB": "::1 6379",
	} {
		a, p := decodeProcAddr(in)
		if a+" "+p != want {
			t.Errorf("%s: %s %s, want %s", in, a, p, want)
		}
	}
}
