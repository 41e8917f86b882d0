package store

import (
	"errors"
)

// ErrPath is wrapped by Open's errors about the path itself (empty, a directory, not
// writable, not a fathom results database): the user gave a path that cannot work.
var ErrPath = errors.New("unusable store path")
