// Package a declares the names the test looks for.
package a

import (
	"fmt"
	"text/template"
)

// Used is used by package b.
func Used() int { return Lonely + Twin }

// Lonely is used by nobody else.
const Lonely = 1

// Twin is used by nobody else, and a package-level twin exists.
var Twin = 2

var twin = 3

// Shadowed is used where a local shadows its new name.
func Shadowed() int { return 4 }

func caller() int {
	shadowed := 5
	return Shadowed() + shadowed + twin
}

// XTestOnly is used only by the package's external test package.
func XTestOnly() {}

// T is a type whose methods the test checks.
type T struct{ Field int }

// String satisfies fmt.Stringer.
func (T) String() string { return "t" }

// Helper is a method nobody else calls.
func (t T) Helper() int { return t.Field }

// Shown is named in a template.
func (T) Shown() string { return "s" }

// Iface is an interface type: it stays exported.
type Iface interface{ Do() }

// Fn is a func type: it stays exported.
type Fn func()

// Embedded is embedded as a field.
type Embedded struct{}

// Outer embeds Embedded.
type Outer struct{ Embedded }

// Default would become a keyword.
func Default() {}

var tmpl = template.Must(template.New("x").Parse("{{.Shown}}"))

var _ = fmt.Sprint(caller(), tmpl, Outer{}, T{}.Helper())

// URLs becomes urls.
var URLs = []string{}
