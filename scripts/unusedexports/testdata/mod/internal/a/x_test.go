package a_test

import (
	"testing"

	"example.com/m/internal/a"
)

func TestX(t *testing.T) { a.XTestOnly() }
