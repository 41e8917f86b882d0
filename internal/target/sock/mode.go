package sock

import "context"

type pollerKey struct{}

// WithPoller returns a context under which the targets dial connections that stay
// with Go's network poller instead of becoming blocking (see Blocking): one thread
// then waits for many connections' replies at once, which costs less than a thread
// per connection once there are many more connections than cores.
func WithPoller(ctx context.Context) context.Context {
	return context.WithValue(ctx, pollerKey{}, true)
}

// Poller reports whether ctx asks for poller connections (WithPoller).
func Poller(ctx context.Context) bool {
	v, _ := ctx.Value(pollerKey{}).(bool)
	return v
}
