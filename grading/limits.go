package grading

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"mlerl/internal/regularfile"
)

// Limits bound what grading one submission may cost the worker: a submission is a hostile
// program's output, graded outside the sandbox. Past any bound the submission is invalid with a
// reason naming the bound. The zero value bounds nothing (our own answers files).
type Limits struct {
	MaxBytes   int64         // the whole file
	MaxLine    int           // one physical line, in bytes
	MaxColumns int           // header fields
	MaxRows    int           // data rows kept; rows beyond are counted, not stored
	Timeout    time.Duration // reading, aligning and scoring
}

// Grading's bounds relative to the answers. A submission holds the answers' cells with
// predictions in place of labels: a full-precision float (at most 24 characters) in each answers
// cell, plus some extra columns where the task allows them, fits well within these.
const (
	bytesPerAnswersByte = 4
	bytesPerCell        = 24
	slackBytes          = 1 << 20
	minLine             = 64 << 10
	minColumns          = 64
)

// GradeTimeout bounds the time to grade one submission beyond the size-proportional share
// LimitsFor adds; a variable so that tests can shorten it.
var GradeTimeout = 2 * time.Minute

// LimitsFor are the limits of a submission graded against answers of size ansSize bytes.
func LimitsFor(ans table, ansSize int64) Limits {
	cells := int64(ans.n+1) * int64(len(ans.all))
	longest := 0
	for i := range ans.n {
		n := len(ans.cols) // separators
		for _, c := range ans.cols {
			n += len(c[i])
		}
		longest = max(longest, n)
	}
	maxBytes := bytesPerAnswersByte*ansSize + bytesPerCell*cells + slackBytes
	return Limits{
		MaxBytes:   maxBytes,
		MaxLine:    max(minLine, bytesPerAnswersByte*longest+bytesPerCell*len(ans.all)),
		MaxColumns: 2*len(ans.all) + minColumns,
		MaxRows:    ans.n,
		// Reading runs at tens of MiB a second: a minute per 256 MiB on top of the base.
		Timeout: GradeTimeout + time.Duration(maxBytes>>28)*time.Minute,
	}
}

func (l Limits) bytesRule() string {
	return fmt.Sprintf("%d times the answers' size, plus %d bytes per answers cell, plus 1 MiB", bytesPerAnswersByte, bytesPerCell)
}

func (l Limits) check(start time.Time) error {
	if l.Timeout > 0 && time.Since(start) > l.Timeout {
		return fmt.Errorf("grading took longer than its limit of %v for this submission's size", l.Timeout)
	}
	return nil
}

// notRegularError is a submission path that names something other than a regular file.
type notRegularError struct{ *regularfile.NotRegularError }

func (e notRegularError) Error() string {
	return e.NotRegularError.Error() + ": write the submission as a plain CSV file"
}

// OpenRegular opens a submission only if it is (or a symlink resolves to) a regular file, else
// returns a notRegularError; the open never blocks (regularfile.Open).
func OpenRegular(path string) (*os.File, error) {
	f, err := regularfile.Open(path)
	var nr *regularfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, notRegularError{nr}
	}
	return f, err
}

// IsNotRegular reports whether err is OpenRegular's refusal of a special file.
func IsNotRegular(err error) bool { return errors.As(err, new(notRegularError)) }

// boundedReader passes a file's bytes through while enforcing the byte and line-length limits
// and refusing NUL bytes; its error stops the CSV reader at the offending byte.
type boundedReader struct {
	r       io.Reader
	lim     Limits
	read    int64
	line    int // bytes since the last newline
	lineNo  int
	started bool
	err     error // sticky: a buffered reader above may swallow one error
}

type limitError struct{ msg string }

func (e limitError) Error() string { return e.msg }

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.read1(p)
	if _, ok := err.(limitError); ok {
		b.err = err
	}
	return n, err
}

func (b *boundedReader) read1(p []byte) (int, error) {
	n, err := b.r.Read(p)
	chunk := p[:n]
	if !b.started && n > 0 {
		b.started = true
		if kind := compressed(chunk); kind != "" {
			return 0, limitError{fmt.Sprintf("submission is %s data, not CSV text: write submission.csv uncompressed", kind)}
		}
	}
	if i := bytes.IndexByte(chunk, 0); i >= 0 {
		return 0, limitError{fmt.Sprintf("submission has a NUL byte at offset %d: it is binary data, not CSV text", b.read+int64(i))}
	}
	b.read += int64(n)
	if b.lim.MaxBytes > 0 && b.read > b.lim.MaxBytes {
		return 0, limitError{fmt.Sprintf("submission has more than %d bytes, over the limit for these answers", b.lim.MaxBytes)}
	}
	if b.lim.MaxLine > 0 {
		for len(chunk) > 0 {
			i := bytes.IndexByte(chunk, '\n')
			if i < 0 {
				b.line += len(chunk)
				break
			}
			b.line += i
			if b.line > b.lim.MaxLine {
				break
			}
			b.line, b.lineNo, chunk = 0, b.lineNo+1, chunk[i+1:]
		}
		if b.line > b.lim.MaxLine {
			return 0, limitError{fmt.Sprintf("submission line %d is longer than the limit of %d bytes for these answers", b.lineNo+1, b.lim.MaxLine)}
		}
	}
	return n, err
}

// compressed names the compression format whose magic number starts the data, or "".
func compressed(b []byte) string {
	for _, m := range []struct{ magic, name string }{
		{"\x1f\x8b", "gzip-compressed"}, {"PK\x03\x04", "zip"}, {"BZh", "bzip2-compressed"},
		{"\xfd7zXZ\x00", "xz-compressed"}, {"\x28\xb5\x2f\xfd", "zstd-compressed"}, {"7z\xbc\xaf\x27\x1c", "7z"},
	} {
		if bytes.HasPrefix(b, []byte(m.magic)) {
			return m.name
		}
	}
	return ""
}

// parseBounded reads a CSV under the limits, keeping only the columns named in keep, in that
// order (all, in the file's order, when keep is nil). Every row must have the header's field count; a UTF-8 byte-order mark is
// skipped, as pandas skips it; text that is not UTF-8 is refused, as pandas refuses it.
func parseBounded(r io.Reader, lim Limits, keep []string, start time.Time) (table, error) {
	br := bufio.NewReaderSize(&boundedReader{r: r, lim: lim}, 64<<10)
	bom, err := br.Peek(3)
	if string(bom) == "\ufeff" {
		br.Discard(3)
	} else if le := (limitError{}); errors.As(err, &le) {
		return table{}, le
	}
	cr := csv.NewReader(br)
	cr.ReuseRecord = true
	fail := func(err error) (table, error) {
		var le limitError
		if errors.As(err, &le) {
			return table{}, le
		}
		return table{}, fmt.Errorf("submission is not a readable CSV: %v", err)
	}
	head, err := cr.Read()
	if err == io.EOF {
		return table{}, errors.New("submission is not a readable CSV: the file is empty (no header)")
	}
	if err != nil {
		return fail(err)
	}
	if lim.MaxColumns > 0 && len(head) > lim.MaxColumns {
		return table{}, fmt.Errorf("submission has %d columns, over the limit of %d for these answers", len(head), lim.MaxColumns)
	}
	t := table{all: append([]string(nil), head...), index: map[string]int{}}
	seen := map[string]bool{}
	for i, h := range t.all {
		if !utf8.ValidString(h) {
			return table{}, fmt.Errorf("submission is not UTF-8 text (header column %d)", i+1)
		}
		if seen[h] {
			return table{}, fmt.Errorf("submission is not a readable CSV: column %q appears twice", h)
		}
		seen[h] = true
	}
	// pos[k] is where the k-th kept column is in a record, -1 when the file lacks it (its cells
	// stay nil and col() reports it missing). cols hold the kept columns in keep's order.
	if keep == nil {
		keep = t.all
	}
	pos := make([]int, len(keep))
	for k, name := range keep {
		pos[k] = slices.Index(t.all, name)
		if pos[k] >= 0 {
			t.index[name] = k
			t.header = append(t.header, name)
		}
	}
	t.cols = make([][]string, len(pos))
	for k, i := range pos {
		if i >= 0 && lim.MaxRows > 0 {
			t.cols[k] = make([]string, 0, lim.MaxRows)
		}
	}
	var cells cellArena
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) && errors.Is(pe.Err, csv.ErrFieldCount) {
				return table{}, fmt.Errorf("submission row %d has %d fields, the header has %d", t.total+1, len(rec), len(head))
			}
			return fail(err)
		}
		t.total++
		if t.total%4096 == 0 {
			if err := lim.check(start); err != nil {
				return table{}, err
			}
		}
		for _, c := range rec {
			if !utf8.ValidString(c) {
				return table{}, fmt.Errorf("submission is not UTF-8 text (row %d)", t.total)
			}
		}
		if lim.MaxRows > 0 && t.total > lim.MaxRows {
			continue // invalid anyway: counted for the message, not stored
		}
		for k, i := range pos {
			if i >= 0 {
				t.cols[k] = append(t.cols[k], cells.keep(rec[i])) // the record's buffer is reused
			}
		}
		t.n++
	}
	return t, nil
}

// cellArena copies cells into large shared blocks: one allocation per cell cost more than the
// cell on million-row files. A strings.Builder never changes bytes it has handed out.
type cellArena struct{ b strings.Builder }

const arenaBlock = 1 << 20

func (a *cellArena) keep(s string) string {
	if len(s) > arenaBlock/4 {
		return strings.Clone(s)
	}
	if a.b.Len()+len(s) > a.b.Cap() {
		a.b = strings.Builder{}
		a.b.Grow(arenaBlock)
	}
	start := a.b.Len()
	a.b.WriteString(s)
	return a.b.String()[start:]
}
