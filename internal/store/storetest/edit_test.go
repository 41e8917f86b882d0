package storetest_test

import (
	"context"
	"errors"
	"testing"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// The optional RunEditor (used by `fathom serve`): labels set and removed in one go,
// a run deleted with what it carries, and ErrNotFound for a run that is not there.
func TestRunEditor(t *testing.T) {
	forEach(t, func(t *testing.T, f factory) {
		ctx := context.Background()
		s := f.open(t, f.fresh(t))
		defer s.Close()
		ed, ok := s.(store.RunEditor)
		if !ok {
			t.Fatalf("%T does not implement store.RunEditor", s)
		}
		id, err := s.CreateRun(ctx, storetest.Run())
		if err != nil {
			t.Fatal(err)
		}
		if err := ed.SetLabels(ctx, id, map[string]string{"note": "first", "variant": "a"}, nil); err != nil {
			t.Fatal(err)
		}
		if err := ed.SetLabels(ctx, id, map[string]string{"note": "second"}, []string{"variant"}); err != nil {
			t.Fatal(err)
		}
		r, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Labels["note"] != "second" || r.Labels["variant"] != "" {
			t.Errorf("labels %v", r.Labels)
		}
		if err := ed.DeleteRun(ctx, id); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Run(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted run reads %v", err)
		}
		if err := ed.DeleteRun(ctx, id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleting it again: %v", err)
		}
		if err := ed.SetLabels(ctx, id, map[string]string{"a": "b"}, nil); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("labelling a deleted run: %v", err)
		}
	})
}
