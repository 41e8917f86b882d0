package pgscript

import "fmt"

// Place says where the last Do stopped: the script, its line and the command as
// written (workload.Placer), for the first errors a run lists.
func (k *worker) Place() string {
	if k.st.script < 0 || k.st.script >= len(k.w.scripts) {
		return ""
	}
	s := k.w.scripts[k.st.script]
	i := k.st.command - 1
	if i < 0 || i >= len(s.commands) {
		return s.Name
	}
	c := &s.commands[i]
	return fmt.Sprintf("%s line %d: %s", s.Name, c.line, c.text)
}
