package storetest_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// A run's first errors are kept in order, replaced whole by a later save (the final
// counts), read back as written, per run, and go with a deleted run.
func TestRunErrors(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		a, err := s.CreateRun(ctx, storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		b, err := s.CreateRun(ctx, storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		if got, err := s.RunErrors(ctx, a); err != nil || got != nil {
			t.Fatalf("a run without errors: %v, %v; want nil, nil", got, err)
		}
		first := []measure.SeenError{{Class: "other", Code: "42601", Message: `syntax error at or near "SELEC"`, Txn: "bad.sql",
			Where: "bad.sql line 3: SELEC 1", Client: 4, AtNs: 12345}}
		if err := s.SaveRunErrors(ctx, a, first); err != nil {
			t.Fatal(err)
		}
		final := []measure.SeenError{
			{Class: "other", Code: "42601", Message: `syntax error at or near "SELEC"`, Txn: "bad.sql", Where: "bad.sql line 3: SELEC 1",
				Client: 4, AtNs: 12345, Count: 1000, Warmup: 17},
			{Class: "constraint", Code: "23505", Message: "duplicate key value violates unique constraint \"t_pkey\": Key (id)=(1) already exists.",
				Txn: "ins", Client: 0, AtNs: 99, Count: 1, Aborted: true},
		}
		if err := s.SaveRunErrors(ctx, a, final); err != nil {
			t.Fatal(err)
		}
		if err := s.SaveRunErrors(ctx, b, first); err != nil {
			t.Fatal(err)
		}
		got, err := s.RunErrors(ctx, a)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, final) {
			t.Errorf("run a's errors:\n%+v\nwant\n%+v", got, final)
		}
		if got, _ := s.RunErrors(ctx, b); !reflect.DeepEqual(got, first) {
			t.Errorf("run b's errors:\n%+v\nwant\n%+v", got, first)
		}
		ed, ok := s.(interface {
			DeleteRun(ctx context.Context, runID int64) error
		})
		if !ok {
			t.Fatalf("%s store cannot delete runs", f.name)
		}
		if err := ed.DeleteRun(ctx, a); err != nil {
			t.Fatal(err)
		}
		if got, err := s.RunErrors(ctx, a); err != nil || got != nil {
			t.Errorf("a deleted run's errors: %v, %v; want none", got, err)
		}
	})
}
