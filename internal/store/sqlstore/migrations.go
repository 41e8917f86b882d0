package sqlstore

import (
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
)

// migration is one numbered change of a store's schema.
type migration struct {
	Version int
	Name    string // its file's name
	SQL     string
}

// Migrations reads fsys's migrations/NNNN_what.sql files (a store embeds its own), in
// version order.
func Migrations(fsys fs.FS) ([]migration, error) {
	ents, err := fs.ReadDir(fsys, "migrations")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, e := range ents {
		v, err := strconv.Atoi(strings.SplitN(e.Name(), "_", 2)[0])
		if err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its version", e.Name())
		}
		b, err := fs.ReadFile(fsys, "migrations/"+e.Name())
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{v, e.Name(), string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.Version - b.Version })
	return ms, nil
}
