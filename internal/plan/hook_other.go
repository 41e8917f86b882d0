//go:build !unix

package plan

import "os/exec"

// ownGroup: without process groups (Windows), cancelling kills the shell only, which
// exec.CommandContext does by default.
func ownGroup(*exec.Cmd) {}
