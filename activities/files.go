package activities

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
)

func countLines(file string) (int, error) {
	f, err := os.Open(file)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	buf := make([]byte, 1<<16)
	for {
		k, err := f.Read(buf)
		n += bytes.Count(buf[:k], []byte{'\n'})
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// tableShape returns the rows and columns of a CSV (header excluded) or a JSON list of records.
func tableShape(file string) (rows, cols int, err error) {
	if strings.HasSuffix(file, ".json") {
		b, err := os.ReadFile(file)
		if err != nil {
			return 0, 0, err
		}
		var recs []map[string]json.RawMessage
		if err := json.Unmarshal(b, &recs); err != nil {
			return 0, 0, fmt.Errorf("%s is not a JSON list of records: %w", file, err)
		}
		if len(recs) > 0 {
			cols = len(recs[0])
		}
		return len(recs), cols, nil
	}
	n, err := countLines(file)
	if err != nil {
		return 0, 0, err
	}
	h, err := readHeader(file)
	if err != nil {
		return 0, 0, err
	}
	return n - 1, len(h), nil
}

func readHeader(file string) ([]string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return csv.NewReader(bufio.NewReader(f)).Read()
}
