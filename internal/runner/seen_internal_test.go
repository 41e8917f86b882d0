package runner

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/target"
)

// A failed transaction whose error is the client's last one costs no allocation and
// no lock: it is counted in the client's own fields.
func TestRepeatedErrorAllocatesNothing(t *testing.T) {
	r := &Runner{types: []string{"t"}, start: time.Now()}
	c := &client{id: 0}
	r.clients = []*client{c}
	err := fmt.Errorf("wrapped: %w", &target.Error{Class: target.ClassSerialization, Code: "40001", Msg: "could not serialize access"})
	r.noteError(c, 0, err, target.ClassSerialization, false, false)
	if n := testing.AllocsPerRun(1000, func() { r.noteError(c, 0, err, target.ClassSerialization, false, false) }); n != 0 {
		t.Errorf("a repeated error allocates %v times", n)
	}
	errs, unlisted := r.book.finish(r.clients)
	if len(errs) != 1 || errs[0].Count != 1002 || unlisted != 0 || errs[0].Code != "40001" {
		t.Errorf("book %+v, unlisted %d; want the error counted 1002 times", errs, unlisted)
	}
}

// BenchmarkRepeatedError is the cost of counting a failed transaction whose error is
// the client's last one.
func BenchmarkRepeatedError(b *testing.B) {
	r := &Runner{types: []string{"t"}, start: time.Now()}
	c := &client{id: 0}
	err := &target.Error{Class: target.ClassSerialization, Code: "40001", Msg: "could not serialize access due to concurrent update"}
	b.ReportAllocs()
	for b.Loop() {
		r.noteError(c, 0, err, target.ClassSerialization, false, false)
	}
}

// BenchmarkAlternatingErrors is the cost when a client's errors alternate between two
// (each one takes the book's lock).
func BenchmarkAlternatingErrors(b *testing.B) {
	r := &Runner{types: []string{"t"}, start: time.Now()}
	c := &client{id: 0}
	e1 := &target.Error{Class: target.ClassSerialization, Code: "40001", Msg: "could not serialize access due to concurrent update"}
	e2 := &target.Error{Class: target.ClassDeadlock, Code: "40P01", Msg: "deadlock detected"}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i++; i%2 == 0 {
			r.noteError(c, 0, e1, target.ClassSerialization, false, false)
		} else {
			r.noteError(c, 0, e2, target.ClassDeadlock, false, false)
		}
	}
}

// A workload's own error text with a password in it is kept masked, and its repeats
// are still counted as the same error.
func TestKeptErrorMasksPasswords(t *testing.T) {
	r := &Runner{types: []string{"t"}, start: time.Now()}
	c, d := &client{id: 0}, &client{id: 1}
	r.clients = []*client{c, d}
	err := fmt.Errorf("cannot reach postgres://bench:s3cretpw@db1/x")
	for range 3 {
		r.noteError(c, 0, err, target.ClassOther, false, false)
	}
	r.noteError(d, 0, err, target.ClassOther, false, false) // another client meets it anew
	errs, _ := r.book.finish(r.clients)
	if len(errs) != 1 || strings.Contains(errs[0].Message, "s3cretpw") || errs[0].Count != 4 {
		t.Errorf("kept %+v; want one error, masked, counted 4 times", errs)
	}
}
