// Package secret holds passwords and DSNs so that they cannot be shown by accident.
//
// A Value formats as xxxxx in every fmt verb (%v %s %q %+v %#v %x …), as JSON, YAML and
// text, and in log/slog; the secret itself comes out only through Reveal, which is
// easy to find in a review. A DSN formats as its masked form (the password replaced by
// xxxxx), so an error or a line built from one is safe from the moment it is made.
//
// Both keep the secret behind a pointer: a struct that holds one in an unexported
// field and is printed with %v (where fmt cannot call the methods) shows an address,
// not the text.
package secret

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strconv"
)

// mask is what a secret shows instead of itself.
const mask = "xxxxx"

// value is a secret: a password, a token, a DSN that may hold one. The zero Value is
// the empty secret.
type value struct{ p *string }

// newValue holds s as a secret.
func newValue(s string) value { return value{p: &s} }

// reveal is the secret itself: for handing to a driver or a child process, never for
// showing.
func (v value) reveal() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

// IsZero reports whether the secret is empty.
func (v value) IsZero() bool { return v.reveal() == "" }

func (value) String() string   { return mask }
func (value) GoString() string { return mask }

// Format writes Mask for every verb (%q quotes it).
func (value) Format(f fmt.State, verb rune) { writeShown(f, verb, mask) }

func (value) MarshalJSON() ([]byte, error)    { return json.Marshal(mask) }
func (value) MarshalText() ([]byte, error)    { return []byte(mask), nil }
func (value) MarshalYAML() (any, error)       { return mask, nil }
func (value) LogValue() slog.Value            { return slog.StringValue(mask) }
func (v *value) UnmarshalText(b []byte) error { *v = newValue(string(b)); return nil }

// DSN is a connection string (a URL, a libpq key=value string, a path) that may hold a
// password. It formats, marshals and logs as its masked form; Reveal is the DSN itself.
type DSN struct {
	raw   value
	shown string
}

// newDSN holds dsn, masked by MaskDSN wherever it is shown.
func newDSN(dsn string) DSN { return DSN{raw: newValue(dsn), shown: MaskDSN(dsn)} }

// NewDSNShown holds dsn, shown as shown (a form the caller masked exactly, e.g. a
// store's URL without its password).
func NewDSNShown(dsn, shown string) DSN { return DSN{raw: newValue(dsn), shown: shown} }

// Reveal is the DSN itself, for connecting.
func (d DSN) Reveal() string { return d.raw.reveal() }

// Masked is the DSN as it is shown: its password replaced by xxxxx.
func (d DSN) Masked() string { return d.shown }

// IsZero reports whether the DSN is empty.
func (d DSN) IsZero() bool { return d.raw.IsZero() }

func (d DSN) String() string   { return d.shown }
func (d DSN) GoString() string { return strconv.Quote(d.shown) }

// Format writes the masked DSN for every verb (%q quotes it).
func (d DSN) Format(f fmt.State, verb rune) { writeShown(f, verb, d.shown) }

func (d DSN) MarshalJSON() ([]byte, error) { return json.Marshal(d.shown) }
func (d DSN) MarshalText() ([]byte, error) { return []byte(d.shown), nil }
func (d DSN) MarshalYAML() (any, error)    { return d.shown, nil }
func (d DSN) LogValue() slog.Value         { return slog.StringValue(d.shown) }

func writeShown(f fmt.State, verb rune, s string) {
	if verb == 'q' || verb == 'v' && f.Flag('#') {
		s = strconv.Quote(s)
	}
	io.WriteString(f, s)
}
