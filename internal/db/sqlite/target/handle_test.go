package sqlite

import (
	"path/filepath"
	"reflect"
	"runtime/debug"
	"testing"
	"unsafe"

	"modernc.org/libc"
)

// moduleVersion is the version of module path linked into the test binary.
func moduleVersion(path string) string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == path {
				if m.Replace != nil {
					return m.Replace.Path + " " + m.Replace.Version
				}
				return m.Path + " " + m.Version
			}
		}
	}
	return path + " (version unknown)"
}

// TestDriverInternals guards what handle.go takes from the drivers' internals, so that
// an upgrade that moves them fails here, loudly and by name, instead of in a run:
//   - modernc.org/sqlite keeps the sqlite3* handle in the unexported uintptr field
//     "db" of its connection, and the handle is live (SQLite answers through it);
//   - cFuncPointer's unsafe cast gives the pointer to a func value whose first word is
//     the function's code (Go's func representation, which modernc.org/libc assumes
//     when it calls a C function pointer back), and calling it the way libc does
//     reaches busyHandler.
func TestDriverInternals(t *testing.T) {
	written := "handle.go was written for " + sqliteDriverWrittenFor + " and " + libcWrittenFor +
		"; linked: " + moduleVersion("modernc.org/sqlite") + " and " + moduleVersion("modernc.org/libc")

	dc, err := drv.Open(filepath.Join(t.TempDir(), "h.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer dc.Close()
	typ := reflect.TypeOf(dc)
	if typ.Kind() != reflect.Pointer || typ.Elem().Kind() != reflect.Struct {
		t.Fatalf("the driver's connection is a %v, not a pointer to a struct: %s", typ, written)
	}
	f, ok := typ.Elem().FieldByName("db")
	if !ok || f.Type.Kind() != reflect.Uintptr {
		t.Fatalf("the driver's connection %v has no uintptr field \"db\" (found %v): %s", typ, f.Type, written)
	}
	db, err := dbHandle(dc)
	if err != nil {
		t.Fatalf("%v: %s", err, written)
	}
	tls := libc.NewTLS()
	defer tls.Close()
	// A live handle answers: autocommit is on outside a transaction.
	c := &conn{tls: tls, db: db}
	if c.inTransaction() {
		t.Fatalf("sqlite3_get_autocommit through the \"db\" field says a transaction is open on a fresh connection: the field holds something else; %s", written)
	}

	fp := cFuncPointer(busyHandler)
	if fp == 0 {
		t.Fatalf("cFuncPointer(busyHandler) is 0: %s", written)
	}
	h := busyHandler
	if word := *(*uintptr)(unsafe.Pointer(&h)); word != fp {
		t.Fatalf("cFuncPointer(busyHandler) = %#x, but the func value holds %#x: %s", fp, word, written)
	}
	if code := **(**uintptr)(unsafe.Pointer(&h)); code != reflect.ValueOf(busyHandler).Pointer() {
		t.Fatalf("busyHandler's func value does not point at its code (%#x, want %#x): Go's func representation changed; %s",
			code, reflect.ValueOf(busyHandler).Pointer(), written)
	}
	// Called back as libc calls a C function pointer: the handler for a key no Conn
	// registered gives up (0) at once.
	back := *(*func(*libc.TLS, uintptr, int32) int32)(unsafe.Pointer(&struct{ uintptr }{fp}))
	if got := back(tls, ^uintptr(0), 0); got != 0 {
		t.Fatalf("busyHandler called through its C function pointer returned %d for an unregistered connection, want 0: %s", got, written)
	}
}
