package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"mlerl/internal/testenv"
)

func TestEmbeddedTablesEqualShared(t *testing.T) {
	shared, err := os.ReadFile(filepath.Join(testenv.SharedDir(t, "baselines"), "paper_tables.csv"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(shared, paperTables) {
		t.Fatal("report/paper_tables.csv differs from shared/data/baselines/paper_tables.csv: copy it again")
	}
}

func TestRowsPutOursBesideThePaper(t *testing.T) {
	s := 0.0412
	rows, err := Rows("leaf-classification", Ours{Label: "mlerl policy", Score: &s, Medal: "none", AboveMedian: true, Protocol: "leak-free"})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Score != "0.04120" || rows[0].Medal != "none (above median)" {
		t.Fatalf("our row: %+v", rows[0])
	}
	found := false
	for _, r := range rows {
		if r.System == "Qwen2.5-3B RL" && r.Score == "0.124 ± 0.000" && r.Source == "paper table1" {
			found = true
		}
	}
	if !found {
		t.Fatalf("the paper's RL number for leaf is missing: %+v", rows)
	}
	md, err := Render(rows, true)
	if err != nil || !strings.Contains(md, "| mlerl policy") {
		t.Fatalf("markdown: %v\n%s", err, md)
	}
}
