package workload

import (
	"context"
	"io"

	"github.com/fathom-lab/fathom/internal/target"
)

// TargetUser is implemented by workloads that need the target itself, not only a
// connection: a sysbench script opens its own connections (drv:connect()) and asks
// the driver's name. UseTarget is called once the target is open, before Setup,
// Cleanup and the workers; an error refuses the target (a usage mistake).
type TargetUser interface {
	UseTarget(t target.Target) error
}

// Printer is implemented by workloads whose scripts print (sysbench's print()):
// SetOutput says where that goes (nil: nowhere).
type Printer interface {
	SetOutput(w io.Writer)
}

// Finisher is implemented by workers that have work to do when their client stops
// (a sysbench script's thread_done). The runner calls Finish once, after the run,
// before it closes the client's connection; what it sends is not measured.
type Finisher interface {
	Finish(ctx context.Context) error
}

// KeepsExisting is implemented by workloads whose prepare is their own script's
// (a sysbench script's prepare command): fathom prepare does not drop their tables
// first, and the script meets existing tables as it would under its own tool.
type KeepsExisting interface {
	KeepsExisting()
}
