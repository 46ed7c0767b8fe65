package expreport

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"mlerl/internal/testenv"
)

// TestIndexHTMLRendersInChromium loads index.html in headless Chromium: the page's own check
// must find every figure decoded (body data-rendered="ok"), every table and figure must be in
// the DOM, and a screenshot must be a real picture.
func TestIndexHTMLRendersInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	testenv.Require(t, err == nil, "Debian's chromium renders index.html: run `go tool task setup` (%v)", err)
	dir := writeFixtureDir(t, fixtureSpec())
	if _, err := Write(dir); err != nil {
		t.Fatal(err)
	}
	url := "file://" + filepath.Join(dir, "report", "index.html")
	browse := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		args = append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
			"--window-size=1400,1800", "--virtual-time-budget=5000", "--user-data-dir=" + t.TempDir()}, args...)
		out, err := exec.CommandContext(ctx, chromium, append(args, url)...).Output()
		if err != nil {
			t.Fatalf("chromium %s: %v", strings.Join(args, " "), err)
		}
		return string(out)
	}

	dom := browse("--dump-dom")
	body := regexp.MustCompile(`<body[^>]*>`).FindString(dom)
	if !strings.Contains(body, `data-rendered="ok"`) {
		t.Fatalf("the page's image check did not pass: %q", body)
	}
	for _, tb := range wantTables {
		if !strings.Contains(dom, `id="table-`+tb+`"`) {
			t.Errorf("the rendered DOM has no table-%s", tb)
		}
	}
	for _, f := range wantFigures {
		if !regexp.MustCompile(`<img id="fig-` + regexp.QuoteMeta(f) + `"[^>]*src="data:image/png;base64,`).MatchString(dom) {
			t.Errorf("the rendered DOM has no embedded fig-%s", f)
		}
	}

	shot := filepath.Join(t.TempDir(), "index.png")
	browse("--screenshot=" + shot)
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatal(err)
	}
	checkPNG(t, "the screenshot", b, 1000, 1000)
}

// TestBrokenImageIsReported checks the page's check itself: an image that does not decode
// makes data-rendered name it.
func TestBrokenImageIsReported(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	testenv.Require(t, err == nil, "Debian's chromium renders index.html: run `go tool task setup` (%v)", err)
	r := buildFixture(t)
	pngs := map[string][]byte{}
	for _, f := range r.Figures {
		pngs[f.Name] = []byte("not a png")
	}
	page := filepath.Join(t.TempDir(), "index.html")
	if err := os.WriteFile(page, []byte(r.HTML(pngs)), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--virtual-time-budget=5000",
		"--user-data-dir="+t.TempDir(), "--dump-dom", "file://"+page).Output()
	if err != nil {
		t.Fatal(err)
	}
	body := regexp.MustCompile(`<body[^>]*>`).FindString(string(out))
	if !strings.Contains(body, `data-rendered="broken: fig-fig7-programs`) {
		t.Fatalf("a broken image is not reported: %q", body)
	}
}
