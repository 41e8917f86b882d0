package storetest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"

	"github.com/fathom-lab/fathom/internal/store"
	"github.com/fathom-lab/fathom/internal/store/stores"
	"github.com/fathom-lab/fathom/internal/store/storetest"
)

// Several processes write runs into one store at once: every run and every interval
// arrives, ids and UUIDs never collide.
func TestProcessesWriteConcurrently(t *testing.T) {
	if v := os.Getenv("FATHOM_STORE_WRITER"); v != "" {
		writeRuns(v)
		return
	}
	const procs, runs, intervals = 4, 5, 20
	forEach(t, func(t *testing.T, f factory) {
		path := f.fresh(t)
		// The writers create and migrate the store themselves, at once.
		var wg sync.WaitGroup
		outs := make([][]byte, procs)
		errs := make([]error, procs)
		for p := range procs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(os.Args[0], "-test.run=^TestProcessesWriteConcurrently$")
				cmd.Env = append(os.Environ(), "FATHOM_STORE_WRITER="+path, "FATHOM_STORE_WRITER_N="+strconv.Itoa(runs)+","+strconv.Itoa(intervals))
				outs[p], errs[p] = cmd.CombinedOutput()
			}()
		}
		wg.Wait()
		for p := range procs {
			if errs[p] != nil {
				t.Fatalf("writer %d: %v\n%s", p, errs[p], outs[p])
			}
		}
		s := f.open(t, path)
		defer s.Close()
		ctx := context.Background()
		all, err := s.Runs(ctx, store.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != procs*runs {
			t.Fatalf("%d runs stored, want %d", len(all), procs*runs)
		}
		ids, uuids := map[int64]bool{}, map[string]bool{}
		for _, r := range all {
			if ids[r.ID] || uuids[r.UUID] {
				t.Fatalf("run %d (%s) twice", r.ID, r.UUID)
			}
			ids[r.ID], uuids[r.UUID] = true, true
			if r.Status != "complete" {
				t.Errorf("run %d: %s (%s)", r.ID, r.Status, r.Reason)
			}
			ivs, err := s.EncodedIntervals(ctx, &r)
			if err != nil {
				t.Fatal(err)
			}
			if len(ivs) != intervals {
				t.Errorf("run %d: %d intervals, want %d", r.ID, len(ivs), intervals)
			}
		}
	})
}

// writeRuns is one writer process: runs × intervals into the store at value.
func writeRuns(value string) {
	var runs, intervals int
	fmt.Sscanf(os.Getenv("FATHOM_STORE_WRITER_N"), "%d,%d", &runs, &intervals)
	s, err := stores.Open(value)
	if err != nil {
		fmt.Println(err)
		os.Exit(3)
	}
	defer s.Close()
	ctx := context.Background()
	for range runs {
		r := storetest.Run()
		id, err := s.CreateRun(ctx, r)
		if err != nil {
			fmt.Println(err)
			os.Exit(4)
		}
		for i := range intervals {
			if err := s.AddInterval(ctx, id, storetest.Interval(i, 10)); err != nil {
				fmt.Println(err)
				os.Exit(5)
			}
		}
		if err := s.FinishRun(ctx, id, "complete", "", r.StartedAt, nil); err != nil {
			fmt.Println(err)
			os.Exit(6)
		}
	}
}
