package mysql

import (
	"fmt"
	"path/filepath"
	"testing"
)

// The slow log digest groups statements whatever their literals, line breaks and
// IN-list lengths, and orders them by total time.
func TestSlowLogDigest(t *testing.T) {
	rows, err := slowLogDigest(filepath.Join("testdata", "slow.log"), 10)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"2", "4.000", "2.000", "2.500", "190000", "SELECT * FROM orders WHERE customer_id = ? AND note = ?;"},
		{"2", "3.250", "1.625", "3.000", "9", "UPDATE stock SET qty = qty - ? WHERE id IN (?+);"},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Errorf("digest:\n%v\nwant\n%v", rows, want)
	}
}
