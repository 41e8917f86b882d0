package mysql

import (
	"github.com/fathom-lab/fathom/internal/instance"
	"github.com/fathom-lab/fathom/internal/target"
)

// The packages below internal/db learn a kind's dialect and instance driver from the
// registry's bundles, which these tests do not link: they give this bundle's.
func init() {
	target.UseDialects(func() []*target.Dialect { return []*target.Dialect{Kind{}.Dialect()} })
	instance.UseDrivers(func() []instance.Driver { return []instance.Driver{Kind{}.InstanceDriver()} })
}
