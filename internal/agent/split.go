// Package agent makes one run out of several fathom processes on several machines
// (agents), coordinated through a shared PostgreSQL results store: the deterministic
// split of clients, rate and seed (Split), the agent's side (Serve, Join) and the
// coordinator's (Remote), which waits for every agent, starts them at one instant of
// the store's clock and merges their interval histograms exactly into the run.
package agent

import "fmt"

// Share is one agent's part of a run: everything it needs follows from the run's
// totals and its index alone (k6's execution segments), so agents agree on the split
// without talking to each other.
type Share struct {
	Index   int     // 0 to N-1
	Clients int     // this agent's clients
	First   int     // the run-wide index of its first client
	Rate    float64 // its part of the total rate (0: closed loop)
	Seed    uint64  // its own seed, derived from the run's
}

// split gives agent index of n its share of clients and rate. The remainder of
// clients/n goes one each to the agents whose segment [index/n, (index+1)/n) holds
// the next whole client, so extra clients are spread evenly over the agents rather
// than piled on the first ones; the rate follows the clients (every client keeps the
// same intended rate as in a single-process run), so the shares add up to the total.
func split(clients int, rate float64, seed uint64, n, index int) (Share, error) {
	switch {
	case n < 1:
		return Share{}, fmt.Errorf("agents must be at least 1 (got %d)", n)
	case index < 0 || index >= n:
		return Share{}, fmt.Errorf("agent index %d is outside 0 to %d", index, n-1)
	case clients < n:
		return Share{}, fmt.Errorf("%d clients cannot be split over %d agents: every agent needs at least one client; use -c %d or more, or fewer agents", clients, n, n)
	}
	first, end := bound(clients, n, index), bound(clients, n, index+1)
	s := Share{Index: index, Clients: end - first, First: first, Seed: deriveSeed(seed, index)}
	if rate > 0 {
		s.Rate = rate * float64(s.Clients) / float64(clients)
	}
	return s, nil
}

// bound is the first client of segment i: floor(i*clients/n) computed without
// overflow for any int inputs a run can have.
func bound(clients, n, i int) int {
	q, r := clients/n, clients%n
	return i*q + i*r/n
}

// deriveSeed gives agent index its own seed: distinct for every index and the same
// every time (SplitMix64's finaliser over the run's seed and the index), and kept
// below 2^63 like the seeds fathom records.
func deriveSeed(seed uint64, index int) uint64 {
	z := seed + uint64(index+1)*0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	z ^= z >> 31
	return z >> 1
}
