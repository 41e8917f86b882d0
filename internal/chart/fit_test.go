package chart

import (
	"strings"
	"testing"
)

// A title too long for its chart keeps its end (the value that tells panels apart)
// and fits the width; the SVG's <title> keeps all of it.
func TestTitleKeepsItsEnd(t *testing.T) {
	long := "innodb_buffer_pool_dump_at_shutdown=ON"
	got := fitEnd(long, 200, titleCharWidth)
	if !strings.HasSuffix(got, "=ON") || !strings.HasPrefix(got, "…") {
		t.Errorf("fitEnd: %q", got)
	}
	if n := len([]rune(got)); float64(n)*titleCharWidth > 200-16 {
		t.Errorf("%q (%d characters) does not fit 200px", got, n)
	}
	if fitEnd("ON", 200, titleCharWidth) != "ON" {
		t.Error("a short title changed")
	}
	c := Chart{ID: "x", Title: long, Width: 200, Height: 150, Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{1, 2}}}}
	svg := c.SVG()
	if !strings.Contains(svg, "<title id=\"x-t\">"+long+"</title>") || !strings.Contains(svg, ">…") {
		t.Errorf("svg title: %s", svg[:300])
	}
}
