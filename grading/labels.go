package grading

import (
	"math"
	"strconv"
	"strings"
)

// labelColumn is a column of class labels as pandas reads it and scikit-learn compares it: a
// column whose every cell is true/false in any case is bool, one of numbers is int or float,
// anything else is text kept as written. A bool is the number 1 or 0, so True, true, 1 and 1.0
// are the same label; a number never equals a text.
type labelColumn struct {
	numeric  bool
	keys     []string // comparison keys: "\x00n" + a number's shortest form, or the text
	distinct int
}

func isBoolCell(s string) (v, ok bool) {
	switch strings.ToLower(s) {
	case "true":
		return true, true
	case "false":
		return false, true
	}
	return false, false
}

// readLabels reads a label column; what names it in an invalid reason. A missing value (NaN to
// pandas) and a non-integral number (a "continuous" target to scikit-learn) are invalid.
func readLabels(cells []string, what string) (labelColumn, error) {
	bools, nums := true, true
	for i, s := range cells {
		if pandasNA[s] {
			return labelColumn{}, invalidf("%s row %d: %q is a missing value: every row needs a class label", what, i+1, s)
		}
		if _, ok := isBoolCell(s); !ok {
			bools = false
		}
		if _, ok := pandasFloat(s); !ok {
			nums = false
		}
	}
	col := labelColumn{numeric: bools || nums, keys: make([]string, len(cells))}
	seen := map[string]bool{}
	for i, s := range cells {
		var v float64
		switch {
		case bools:
			if b, _ := isBoolCell(s); b {
				v = 1
			}
		case nums:
			v, _ = pandasFloat(s)
			if v != math.Trunc(v) {
				return labelColumn{}, invalidf("%s row %d: %v is not a class label (a continuous value; write the class itself)", what, i+1, s)
			}
		default:
			col.keys[i] = s
		}
		if col.numeric {
			col.keys[i] = "\x00n" + strconv.FormatFloat(v, 'g', -1, 64)
		}
		if !seen[col.keys[i]] {
			seen[col.keys[i]] = true
			col.distinct++
		}
	}
	return col, nil
}

// comparable is scikit-learn's refusal to compare numeric and text labels where both sides
// are binary (at most 2 labels each): it sorts their union and Python cannot order a number
// against a string. Elsewhere they are simply never equal.
func comparable(truth, pred labelColumn) error {
	if truth.numeric != pred.numeric && truth.distinct <= 2 && pred.distinct <= 2 {
		kind := map[bool]string{true: "numbers or booleans", false: "text"}
		return invalidf("the labels are %s but the answers' are %s: write the classes as the answers do", kind[pred.numeric], kind[truth.numeric])
	}
	return nil
}

// boolColumn coerces a column whose every cell is true/false (any case) to 1/0, as pandas
// reads it as bool and numpy and scikit-learn take a bool as a number; else nil.
func boolColumn(cells []string) []float64 {
	if len(cells) == 0 {
		return nil
	}
	if _, ok := isBoolCell(cells[0]); !ok {
		return nil // most columns: no slice of every row's size allocated to find out
	}
	out := make([]float64, len(cells))
	for i, c := range cells {
		b, ok := isBoolCell(c)
		if !ok {
			return nil
		}
		if b {
			out[i] = 1
		}
	}
	return out
}
