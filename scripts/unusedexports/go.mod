module github.com/fathom-lab/fathom/scripts/unusedexports

go 1.26.8

require golang.org/x/tools v0.52.0

require (
	golang.org/x/mod v0.42.0 // indirect
	golang.org/x/sync v0.24.0 // indirect
)
