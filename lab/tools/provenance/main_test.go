package main

import "testing"

func TestIterationOf(t *testing.T) {
	for _, c := range []struct {
		id   string
		want int
	}{
		{"it0001-s000", 1},
		{"it0012-s007", 12},
		{"it0003-r1-s001", 3},
		{"eval-final-000", 0},
		{"eval-r1-final-002", 0},
		{"itx-s000", 0},
	} {
		if got := iterationOf(c.id); got != c.want {
			t.Errorf("iterationOf(%q) = %d, want %d", c.id, got, c.want)
		}
	}
}
