package runner_test

// The throwaway servers these tests start find their drivers in the registry of
// database kinds (internal/db hands it to package instance).
import _ "github.com/fathom-lab/fathom/internal/db"
