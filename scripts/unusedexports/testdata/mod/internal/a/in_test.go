package a

import "testing"

func TestIn(t *testing.T) {
	if Lonely != 1 || len(URLs) != 0 {
		t.Fatal()
	}
}
