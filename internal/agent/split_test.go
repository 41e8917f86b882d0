package agent

import (
	"math"
	"strings"
	"testing"
)

func TestSplitAddsUp(t *testing.T) {
	for _, tc := range []struct {
		clients, n int
		rate       float64
	}{{3, 3, 0}, {7, 3, 1000}, {10, 4, 333.3}, {64, 3, 5000}, {1, 1, 10}, {100, 7, 12345.6}, {5, 5, 1}} {
		sum, sumRate, next := 0, 0.0, 0
		sizes := map[int]bool{}
		for i := 0; i < tc.n; i++ {
			s, err := split(tc.clients, tc.rate, 42, tc.n, i)
			if err != nil {
				t.Fatal(err)
			}
			if s.First != next {
				t.Errorf("%+v agent %d: first client %d, want %d (segments must tile the clients)", tc, i, s.First, next)
			}
			next = s.First + s.Clients
			sum += s.Clients
			sumRate += s.Rate
			sizes[s.Clients] = true
			if want := tc.rate * float64(s.Clients) / float64(tc.clients); s.Rate != want {
				t.Errorf("%+v agent %d: rate %v, want %v (each client keeps the single-process rate)", tc, i, s.Rate, want)
			}
			// Remainders are spread: no agent has more than one client more than another.
			if lo, hi := tc.clients/tc.n, (tc.clients+tc.n-1)/tc.n; s.Clients < lo || s.Clients > hi {
				t.Errorf("%+v agent %d: %d clients, want %d or %d", tc, i, s.Clients, lo, hi)
			}
		}
		if sum != tc.clients {
			t.Errorf("%+v: clients add up to %d", tc, sum)
		}
		if math.Abs(sumRate-tc.rate) > 1e-9*tc.rate {
			t.Errorf("%+v: rates add up to %v", tc, sumRate)
		}
		if len(sizes) > 2 {
			t.Errorf("%+v: share sizes %v", tc, sizes)
		}
	}
}

func TestSplitRemainderSpread(t *testing.T) {
	// 10 clients over 4 agents: 2 extra clients go to two agents that are not
	// neighbours at the start (segments 0-2, 2-5, 5-7, 7-10).
	want := []int{2, 3, 2, 3}
	for i, w := range want {
		s, _ := split(10, 0, 1, 4, i)
		if s.Clients != w {
			t.Errorf("agent %d: %d clients, want %d", i, s.Clients, w)
		}
	}
}

func TestSplitSeeds(t *testing.T) {
	seen := map[uint64]int{}
	for i := 0; i < 1000; i++ {
		s, err := split(1000, 0, 7, 1000, i)
		if err != nil {
			t.Fatal(err)
		}
		if j, dup := seen[s.Seed]; dup {
			t.Fatalf("agents %d and %d share seed %d", j, i, s.Seed)
		}
		seen[s.Seed] = i
		if s.Seed >= 1<<63 {
			t.Errorf("agent %d: seed %d is not below 2^63", i, s.Seed)
		}
		again, _ := split(1000, 0, 7, 1000, i)
		if again.Seed != s.Seed {
			t.Fatalf("agent %d: seed changed between calls", i)
		}
	}
	// Stable across builds: the first agent of seed 7 always gets this seed.
	if s, _ := split(3, 0, 7, 3, 1); s.Seed != 154844686297477902 {
		t.Errorf("agent 1 of seed 7: seed %d, want 154844686297477902 (agents of different builds must agree)", s.Seed)
	}
	if deriveSeed(7, 0) == deriveSeed(8, 0) {
		t.Errorf("seeds do not depend on the run's seed")
	}
}

func TestSplitRefuses(t *testing.T) {
	for _, tc := range []struct{ clients, n, i int }{{2, 3, 0}, {3, 0, 0}, {3, 3, 3}, {3, 3, -1}} {
		if _, err := split(tc.clients, 0, 1, tc.n, tc.i); err == nil {
			t.Errorf("%+v: no error", tc)
		}
	}
}

func TestWithoutPassword(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://bench:s3cret@db1:5432/bench?sslmode=disable":     "postgres://bench@db1:5432/bench?sslmode=disable",
		"postgres://bench@db1/bench?password=s3cret&sslmode=require": "postgres://bench@db1/bench?sslmode=require",
		"mysql://root:s3cret@127.0.0.1:3306/sbtest":                  "mysql://root@127.0.0.1:3306/sbtest",
		"host=db1 user=bench password='s3 cret' dbname=bench":        "host=db1 user=bench  dbname=bench",
		"postgres://bench@db1/bench?passfile=/home/u/.pgpass":        "postgres://bench@db1/bench?passfile=/home/u/.pgpass",
		"redis://:s3cret@127.0.0.1:6379/0":                           "redis://@127.0.0.1:6379/0",
	} {
		got := withoutPassword(in)
		if got != want {
			t.Errorf("WithoutPassword(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(got, "s3") {
			t.Errorf("%q keeps the password", got)
		}
	}
}
