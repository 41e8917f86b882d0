package run

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fathom-lab/fathom/internal/sample"
	"github.com/fathom-lab/fathom/internal/store"
)

type quietWatch struct{}

func (quietWatch) WatchStarted(int64, string)           {}
func (quietWatch) Sample(*sample.Sample, time.Duration) {}
func (quietWatch) Finished()                            {}
func (quietWatch) Warning(string)                       {}

// A watch downsamples its older samples as it goes: with 100ms samples kept whole for
// 500ms and merged into 200ms buckets before, a 2.5s session stores far fewer points
// than it took samples, and counts every sample once.
func TestWatchDownsamples(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t)
	o := WatchOptions{DSN: "sqlite:" + filepath.Join(dir, "target.db"), Duration: 2500 * time.Millisecond, Interval: 100 * time.Millisecond,
		Sampling: Sampling{Only: []string{"os"}}, ToolVersion: "test", Command: "fathom watch",
		Downsampling: []store.DownsampleTier{{After: 500 * time.Millisecond, Bucket: 200 * time.Millisecond}}}
	sum, err := Watch(context.Background(), s, o, quietWatch{})
	if err != nil {
		t.Fatal(err)
	}
	series, err := s.MetricSeries(context.Background(), sum.RunID)
	if err != nil || len(series) == 0 {
		t.Fatalf("%d series, %v", len(series), err)
	}
	points, readings := 0, 0
	for _, ser := range series {
		r := 0
		for _, p := range ser.Points {
			r += max(p.N, 1)
		}
		if r > sum.Samples {
			t.Errorf("%s: %d readings of %d samples", ser.Name, r, sum.Samples)
		}
		points, readings = points+len(ser.Points), readings+r
	}
	if points*4 > readings*3 { // about 15 points for 25 readings
		t.Errorf("%d points stored for %d readings: not downsampled", points, readings)
	}
}
