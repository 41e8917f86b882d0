package durable

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/fathom-lab/fathom/internal/measure"
	"github.com/fathom-lab/fathom/internal/safefile"
	"github.com/fathom-lab/fathom/internal/store"
)

// The spool file: one JSON object a line. The first is the header (which store, when);
// each other line is one write (an op), in the order it was made. Histograms are in
// the store's own encoding, so what is uploaded is what would have been written.

const spoolFormat = "fathom-spool/1"

type header struct {
	Format  string    `json:"format"`
	Store   string    `json:"store"` // where the writes belong, without a password
	Created time.Time `json:"created"`
	PID     int       `json:"pid"`
}

const (
	opInterval      = "interval"
	opAgentInterval = "agent_interval"
	opWarning       = "warning"
	opErrors        = "errors"
	opFinish        = "finish"
)

// op is one write that can wait in the spool file.
type op struct {
	Op  string    `json:"op"`
	At  time.Time `json:"at"` // when it was made
	Run int64     `json:"run,omitempty"`
	// interval, agent_interval
	Job        int64           `json:"job,omitempty"`
	Agent      int             `json:"agent,omitempty"`
	Index      int             `json:"index,omitempty"`
	StartNS    int64           `json:"start_ns,omitempty"`
	EndNS      int64           `json:"end_ns,omitempty"`
	Warmup     bool            `json:"warmup,omitempty"`
	Reconnects int64           `json:"reconnects,omitempty"`
	TxnTypes   []string        `json:"txn_types,omitempty"`
	Types      json.RawMessage `json:"types,omitempty"` // store.EncodeAgentTypes
	// warning
	Text string `json:"text,omitempty"`
	// errors
	Errors []measure.SeenError `json:"errors,omitempty"`
	// finish
	Status  string          `json:"status,omitempty"`
	Reason  string          `json:"reason,omitempty"`
	EndedAt time.Time       `json:"ended_at,omitzero"`
	Summary json.RawMessage `json:"summary,omitempty"`
}

func intervalOp(kind string, at time.Time, iv *measure.Interval) *op {
	o := &op{Op: kind, At: at, Index: iv.Index, StartNS: int64(iv.Start), EndNS: int64(iv.End), Warmup: iv.Warmup,
		Reconnects: iv.Reconnects, Types: store.EncodeAgentTypes(iv)}
	for i := range iv.Types {
		o.TxnTypes = append(o.TxnTypes, iv.Types[i].Name)
	}
	return o
}

func (o *op) interval() (*measure.Interval, error) {
	iv := measure.NewInterval(o.Index, o.TxnTypes)
	iv.Start, iv.End, iv.Warmup, iv.Reconnects = time.Duration(o.StartNS), time.Duration(o.EndNS), o.Warmup, o.Reconnects
	if err := store.DecodeAgentTypes(o.Types, iv); err != nil {
		return nil, fmt.Errorf("interval %d: %v", o.Index, err)
	}
	return iv, nil
}

// apply makes the write o stands for in st. Each is idempotent: an interval that is
// there is left as it is, errors and the finish are replaced.
func apply(ctx context.Context, st store.Store, o *op) error {
	switch o.Op {
	case opInterval:
		iv, err := o.interval()
		if err != nil {
			return err
		}
		return st.AddInterval(ctx, o.Run, iv)
	case opAgentInterval:
		as, ok := st.(store.AgentStore)
		if !ok {
			return fmt.Errorf("%s does not coordinate agents", st.Path())
		}
		iv, err := o.interval()
		if err != nil {
			return err
		}
		return as.AddAgentInterval(ctx, o.Job, o.Agent, iv)
	case opWarning:
		return st.AddRunWarning(ctx, o.Run, o.Text)
	case opErrors:
		return st.SaveRunErrors(ctx, o.Run, o.Errors)
	case opFinish:
		return st.FinishRun(ctx, o.Run, o.Status, o.Reason, o.EndedAt, o.Summary)
	}
	return fmt.Errorf("unknown write %q", o.Op)
}

// spoolFile is the private file the writes go to past the memory bound or the outage
// bound; the drain reads it back in order.
type spoolFile struct {
	path    string
	w       *os.File
	r       *bufio.Reader
	rf      *os.File
	total   int // writes appended
	done    int // writes read back and written
	left    int // total - done
	head    *op // read back, not yet written
	waiting []waiter
}

type waiter struct {
	n    int // answered once this many writes are done
	done chan error
}

func createSpool(dir, storePath string, now time.Time) (*spoolFile, error) {
	if err := safefile.Dir(dir, 0o700); err != nil {
		return nil, err
	}
	name := fmt.Sprintf("fathom-spool-%s-%d.jsonl", now.Format("20060102-150405"), os.Getpid())
	path := filepath.Join(dir, name)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	w, err := safefile.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND)
	if err != nil {
		return nil, err
	}
	b, _ := json.Marshal(header{Format: spoolFormat, Store: storePath, Created: now, PID: os.Getpid()})
	if _, err := w.Write(append(b, '\n')); err != nil {
		w.Close()
		return nil, err
	}
	rf, err := os.Open(path)
	if err != nil {
		w.Close()
		return nil, err
	}
	r := bufio.NewReader(rf)
	if _, err := r.ReadBytes('\n'); err != nil { // the header
		w.Close()
		rf.Close()
		return nil, err
	}
	return &spoolFile{path: path, w: w, r: r, rf: rf}, nil
}

func (f *spoolFile) append(o *op) error {
	b, err := json.Marshal(o)
	if err != nil {
		return err
	}
	if _, err := f.w.Write(append(b, '\n')); err != nil {
		return err
	}
	f.total++
	f.left++
	return nil
}

func (f *spoolFile) sync() error { return f.w.Sync() }

// peek reads back the next write (the same one until advance).
func (f *spoolFile) peek() (*op, error) {
	if f.head != nil {
		return f.head, nil
	}
	line, err := f.r.ReadBytes('\n')
	if err != nil {
		return nil, fmt.Errorf("reading back %s: %v", f.path, err)
	}
	var o op
	if err := json.Unmarshal(line, &o); err != nil {
		return nil, fmt.Errorf("reading back %s: %v", f.path, err)
	}
	f.head = &o
	return f.head, nil
}

func (f *spoolFile) advance() {
	f.head = nil
	f.done++
	f.left--
}

func (f *spoolFile) close() {
	_ = f.w.Sync()
	f.w.Close()
	f.rf.Close()
}

// remove deletes the file once everything in it is written.
func (f *spoolFile) remove() {
	f.close()
	_ = os.Remove(f.path)
}

// uploaded is what Upload wrote.
type uploaded struct {
	Store     string // as the spool file names it
	Writes    int
	Intervals int
	Runs      []int64 // the runs written to, in order of first write
	Finished  []int64 // runs the upload marked ended
	Jobs      []int64 // agent jobs written to
}

// ErrSpool is wrapped by Upload's errors about the file itself.
var ErrSpool = errors.New("not a usable spool file")

// ReadHeader reads the spool file's header: which store its writes belong to.
func ReadHeader(path string) (string, error) {
	f, err := safefile.OpenFile(path, os.O_RDONLY)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h, _, err := readHeader(bufio.NewReader(f), path)
	return h.Store, err
}

func readHeader(r *bufio.Reader, path string) (header, int, error) {
	var h header
	line, err := r.ReadBytes('\n')
	if err != nil && !(errors.Is(err, io.EOF) && len(line) > 0) {
		return h, 0, fmt.Errorf("%s: %v: %w", path, err, ErrSpool)
	}
	if json.Unmarshal(line, &h) != nil || h.Format != spoolFormat {
		return h, 0, fmt.Errorf("%s is not a fathom spool file (want a first line with \"format\":%q): %w", path, spoolFormat, ErrSpool)
	}
	return h, len(line), nil
}

// Upload writes the spool file's writes to st, in order; each is idempotent, so an
// upload cut short, or made again, is finished by running it again. The runs written
// to get a warning saying so (once). The file is left in place.
func Upload(ctx context.Context, st store.Store, path string) (*uploaded, error) {
	f, err := safefile.OpenFile(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := bufio.NewReader(f)
	h, _, err := readHeader(r, path)
	if err != nil {
		return nil, err
	}
	up := &uploaded{Store: h.Store}
	seen := map[int64]bool{}
	jobs := map[int64]bool{}
	checked := map[int64]bool{}
	for n := 2; ; n++ {
		line, err := r.ReadBytes('\n')
		if len(line) == 0 && errors.Is(err, io.EOF) {
			break
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return up, fmt.Errorf("%s line %d: %v", path, n, err)
		}
		var o op
		if jerr := json.Unmarshal(line, &o); jerr != nil {
			if errors.Is(err, io.EOF) {
				break // a last line cut short by a crash: its write was never acknowledged to the run either
			}
			return up, fmt.Errorf("%s line %d: %v: %w", path, n, jerr, ErrSpool)
		}
		if o.Run != 0 && !checked[o.Run] {
			if _, err := st.Run(ctx, o.Run); err != nil {
				return up, fmt.Errorf("%s line %d: run %d: %v (is --store the store the file names, %s?)", path, n, o.Run, err, h.Store)
			}
			checked[o.Run] = true
		}
		if o.Op == opWarning {
			// A warning is appended, not replaced: one that is there already is not
			// added again.
			if run, err := st.Run(ctx, o.Run); err == nil && contains(run.Warnings, o.Text) {
				continue
			}
		}
		if err := apply(ctx, st, &o); err != nil {
			return up, fmt.Errorf("%s line %d (%s of run %d): %v", path, n, o.Op, o.Run, err)
		}
		up.Writes++
		if o.Op == opInterval || o.Op == opAgentInterval {
			up.Intervals++
		}
		if o.Run != 0 && !seen[o.Run] {
			seen[o.Run] = true
			up.Runs = append(up.Runs, o.Run)
		}
		if o.Op == opFinish {
			up.Finished = append(up.Finished, o.Run)
		}
		if o.Job != 0 && !jobs[o.Job] {
			jobs[o.Job] = true
			up.Jobs = append(up.Jobs, o.Job)
		}
	}
	for _, id := range up.Runs {
		msg := fmt.Sprintf("written late from the spool file %s (made %s) by fathom store upload", filepath.Base(path), h.Created.Format(time.RFC3339))
		run, err := st.Run(ctx, id)
		if err == nil && contains(run.Warnings, msg) {
			continue
		}
		if err := st.AddRunWarning(ctx, id, msg); err != nil {
			return up, err
		}
	}
	return up, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Line says what an upload wrote, in one line.
func (u *uploaded) Line(path string) string {
	s := fmt.Sprintf("uploaded %s: %d writes (%d intervals)", path, u.Writes, u.Intervals)
	if len(u.Runs) > 0 {
		s += " to run"
		if len(u.Runs) > 1 {
			s += "s"
		}
		for i, id := range u.Runs {
			if i > 0 {
				s += ","
			}
			s += " " + strconv.FormatInt(id, 10)
		}
	}
	if len(u.Jobs) > 0 {
		s += fmt.Sprintf(" and %d agent jobs (merge their intervals with `fathom agent --recover NAME`)", len(u.Jobs))
	}
	return s + " in " + u.Store
}
