package cli

import (
	"testing"
	"time"
)

var durationCases = []struct {
	in   string
	want time.Duration
	ok   bool
}{
	{"60", 60 * time.Second, true},
	{"0.25", 250 * time.Millisecond, true},
	{"250ms", 250 * time.Millisecond, true},
	{"1m30s", 90 * time.Second, true},
	{" 5 ", 5 * time.Second, true},
	{"-1", 0, false},
	{"-5s", 0, false},
	{"soon", 0, false},
	{"", 0, false},
	{"1e10", 0, false},
}

func TestParseDuration(t *testing.T) {
	for _, c := range durationCases {
		got, err := parseDuration(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseDuration(%q) = %v, %v; want %v, ok=%v", c.in, got, err, c.want, c.ok)
		}
	}
}

func FuzzParseDuration(f *testing.F) {
	for _, c := range durationCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := parseDuration(s)
		if err == nil && d < 0 {
			t.Fatalf("parseDuration(%q) = %v: negative accepted", s, d)
		}
	})
}

func TestRedactArgs(t *testing.T) {
	got := redactArgs([]string{"run", "--target", "postgres://u:secret@h/d", "--label", "note=a b"})
	want := "fathom run --target postgres://u:xxxxx@h/d --label 'note=a b'"
	if got != want {
		t.Fatalf("redactArgs = %q, want %q", got, want)
	}
}
