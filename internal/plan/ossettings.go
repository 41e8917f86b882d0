package plan

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
)

// OS settings are plan settings named os.NAME, NAME a sysctl key such as
// vm.dirty_background_ratio: written to /proc/sys/vm/dirty_background_ratio before a
// run, read back, recorded with the run, and put back as they were when the experiment
// ends, whether it completes, fails or is interrupted.

// OSPrefix starts the name of an OS setting.
const OSPrefix = "os."

// ProcSys is where the kernel's tunables are.
const ProcSys = "/proc/sys"

var sysctlRE = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9_-]+)+$`)

// osPath is the file of sysctl key (vm.dirty_background_ratio) under root.
func osPath(root, key string) string {
	return filepath.Join(root, filepath.FromSlash(strings.ReplaceAll(key, ".", "/")))
}

// CheckOSSetting says, in one line, why fathom may not change the sysctl key under
// root, or returns nil when it may: the file exists and opens for writing (opening
// changes nothing).
func CheckOSSetting(root, key string) error {
	if !sysctlRE.MatchString(key) {
		return fmt.Errorf("os.%s is not a sysctl name (e.g. os.vm.dirty_background_ratio)", key)
	}
	p := osPath(root, key)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("os.%s: this system has no %s", key, p)
	}
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		why := "permission denied"
		switch {
		case errors.Is(err, syscall.EROFS):
			why = "read-only (a container's /proc/sys usually is)"
		case !errors.Is(err, fs.ErrPermission):
			why = err.Error()
		}
		return fmt.Errorf("os.%s: fathom may not change %s (%s): run as root with a writable /proc/sys, or leave the setting out", key, p, why)
	}
	f.Close()
	return nil
}

// OSSettings applies OS settings and puts back what they were.
type OSSettings struct {
	Root string            // ProcSys; a directory of files in tests
	orig map[string]string // key → value before fathom first changed it
	keys []string          // in the order first changed
}

// NewOSSettings returns an applier for the tunables under root.
func NewOSSettings(root string) *OSSettings {
	return &OSSettings{Root: root, orig: map[string]string{}}
}

func (o *OSSettings) read(key string) (string, error) {
	b, err := os.ReadFile(osPath(o.Root, key))
	if err != nil {
		return "", fmt.Errorf("reading os.%s: %v", key, err)
	}
	return strings.Join(strings.Fields(string(b)), " "), nil
}

func (o *OSSettings) write(key, v string) error {
	if err := os.WriteFile(osPath(o.Root, key), []byte(v+"\n"), 0); err != nil {
		return fmt.Errorf("setting os.%s to %s: %v", key, v, err)
	}
	return nil
}

// Apply makes want (keys without os.) the values of their tunables and every other
// tunable it changed before what it was, and returns every managed tunable's value as
// read back (key os.NAME). A value that does not read back as written is an error.
func (o *OSSettings) Apply(want []KV) (map[string]string, error) {
	w := map[string]string{}
	for _, kv := range want {
		w[kv.Name] = strings.Join(strings.Fields(kv.Value), " ")
		if _, ok := o.orig[kv.Name]; !ok {
			v, err := o.read(kv.Name)
			if err != nil {
				return nil, err
			}
			o.orig[kv.Name] = v
			o.keys = append(o.keys, kv.Name)
		}
	}
	got := map[string]string{}
	for _, k := range o.keys {
		v, ok := w[k]
		if !ok {
			v = o.orig[k] // a cell that does not set it runs with the system's value
		}
		cur, err := o.read(k)
		if err != nil {
			return nil, err
		}
		if cur != v {
			if err := o.write(k, v); err != nil {
				return nil, err
			}
			if cur, err = o.read(k); err != nil {
				return nil, err
			}
			if cur != v {
				return nil, fmt.Errorf("os.%s: wrote %s but it reads back %s", k, v, cur)
			}
		}
		got[OSPrefix+k] = cur
	}
	return got, nil
}

// Restore puts every changed tunable back as it was; it reports all that failed.
func (o *OSSettings) Restore() error {
	var errs []error
	for _, k := range o.keys {
		if cur, err := o.read(k); err == nil && cur == o.orig[k] {
			continue
		}
		if err := o.write(k, o.orig[k]); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Changed lists what Restore puts back: "os.vm.dirty_background_ratio=10".
func (o *OSSettings) Changed() []string {
	var out []string
	for _, k := range o.keys {
		out = append(out, OSPrefix+k+"="+o.orig[k])
	}
	return out
}
