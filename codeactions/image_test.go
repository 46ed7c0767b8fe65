package codeactions_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"mlerl/codeactions"
	"mlerl/internal/testenv"
	"mlerl/tasks"
)

// imageBase is a strong, fast image program: colour histograms, gradient-orientation histograms
// and texture statistics at 64 pixels under a 300-tree random forest.
func imageBase() map[string]string {
	return map[string]string{"load": "input", "decode": "draft", "size": "64", "features": "hist-hog-texture",
		"augment": "none", "transform": "standard", "target": "argmax", "model": "random-forest",
		"strength": "s3", "validation": "holdout", "submission": "aligned"}
}

// imageFast is a quick valid program the failure cases start from (they only need to reach
// their failing stage).
func imageFast(kv ...string) map[string]string {
	m := imageBase()
	m["size"], m["features"], m["model"], m["strength"] = "16", "hsv-hist", "logreg", "s3"
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

// imageSynth writes a small prepared plant-pathology layout with the preparer's columns (public
// train.csv: image_id and the four one-hot columns; test.csv: image_id; a 0.25 sample
// submission; images/<id>.jpg) and the grader's answers (private test.csv, one-hot). The leaves
// are green with lighting gradients, noise and dark dirt spots; rust adds orange spots, scab
// brown patches, multiple_diseases a few of both. Sizes vary and some are portrait, as in the
// real data.
const imageSynth = `import sys, pathlib
import numpy as np
import pandas as pd
from PIL import Image

root = pathlib.Path(sys.argv[1])
n_train, n_test = int(sys.argv[2]), int(sys.argv[3])
public, private = root / "public", root / "private"
(public / "images").mkdir(parents=True, exist_ok=True)
private.mkdir(parents=True, exist_ok=True)
rng = np.random.default_rng(0)
CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]
SIZES = [(200, 133), (200, 133), (160, 107), (133, 200)]


def blobs(img, n, radius, colour, alpha):
    h, w = img.shape[:2]
    for _ in range(n):
        cy, cx = rng.uniform(0.15, 0.85) * h, rng.uniform(0.15, 0.85) * w
        r = rng.uniform(*radius) * min(h, w) / 133
        ry, rx = r * rng.uniform(0.6, 1.4), r * rng.uniform(0.6, 1.4)
        y0, y1 = int(max(cy - 1.3 * ry, 0)), int(min(cy + 1.3 * ry + 1, h))
        x0, x1 = int(max(cx - 1.3 * rx, 0)), int(min(cx + 1.3 * rx + 1, w))
        yy, xx = np.mgrid[y0:y1, x0:x1]
        d = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2
        m = np.clip(1.5 - d, 0, 1)[..., None] * rng.uniform(*alpha)
        c = np.array(colour) + rng.normal(0, 12, 3)
        img[y0:y1, x0:x1] = img[y0:y1, x0:x1] * (1 - m) + c * m


def leaf(label):
    w, h = SIZES[rng.integers(len(SIZES))]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    base = np.array([70, 135, 50]) + rng.normal(0, 15, 3)
    light = 0.8 + 0.4 * (xx / w * rng.uniform(-1, 1) + yy / h * rng.uniform(-1, 1)) / 2 + 0.2
    img = base * light[..., None] + rng.normal(0, 10, (h, w, 3)).astype(np.float32)
    blobs(img, rng.integers(0, 4), (2, 5), (40, 70, 30), (0.3, 0.7))  # shadows and dirt
    if label in ("rust", "multiple_diseases"):
        blobs(img, rng.integers(1, 7 if label == "rust" else 4), (2, 5), (215, 140, 40), (0.3, 1.0))
    if label in ("scab", "multiple_diseases"):
        blobs(img, rng.integers(1, 5 if label == "scab" else 3), (5, 12), (105, 85, 45), (0.3, 0.9))
    return Image.fromarray(np.clip(img, 0, 255).astype(np.uint8))


def layout(n, prefix):
    labels = rng.choice(CLASSES, size=n, p=[0.28, 0.12, 0.30, 0.30])
    labels[: len(CLASSES)] = CLASSES  # every class in every split
    ids = [f"{prefix}_{i}" for i in range(n)]
    for i, lab in zip(ids, labels):
        leaf(lab).save(public / "images" / f"{i}.jpg", quality=90)
    df = pd.DataFrame({"image_id": ids})
    for c in CLASSES:
        df[c] = (labels == c).astype(int)
    return df


train, answers = layout(n_train, "Train"), layout(n_test, "Test")
train.to_csv(public / "train.csv", index=False)
answers[["image_id"]].to_csv(public / "test.csv", index=False)
sample = answers[["image_id"]].copy()
for c in CLASSES:
    sample[c] = 0.25
sample.to_csv(public / "sample_submission.csv", index=False)
answers.to_csv(private / "test.csv", index=False)
`

// imageSyntheticData writes the synthetic layout into a temporary folder.
func imageSyntheticData(t *testing.T, nTrain, nTest string) tasks.Dirs {
	t.Helper()
	testenv.RequirePython(t)
	if out, err := exec.Command(testenv.Python, "-c", "import PIL").CombinedOutput(); err != nil {
		t.Fatalf("Debian's python3-pil is required: run `go tool task setup` (%v: %s)", err, out)
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "synth.py")
	if err := os.WriteFile(script, []byte(imageSynth), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(testenv.Python, script, dir, nTrain, nTest).CombinedOutput(); err != nil {
		t.Fatalf("writing the synthetic images: %v\n%s", err, out)
	}
	return tasks.Dirs{Public: filepath.Join(dir, "public"), Private: filepath.Join(dir, "private")}
}

// Real programs from the image library on synthetic leaves: a strong program scores well, a
// weak one clearly worse, and each failure mode fails at its stage, earning partial credit.
func TestImageProgramsOnSyntheticData(t *testing.T) {
	spec, _ := tasks.Builtin().Get("plant-pathology-2020-fgvc7")
	dirs := imageSyntheticData(t, "400", "150")
	lib := codeactions.Image
	checkPrograms(t, lib, spec, dirs, []programCase{
		{"strong: histograms, gradients and texture at 64 px under a random forest", imageBase(), true, 0.85, 7},
		{"OpenCV is not installed: fails at import", imageFast("load", "cv2"), false, 0, 0},
		{"wrong data path fails while loading", imageFast("load", "cwd"), false, 0, 1},
		{"image paths without the extension fail at the first image", imageFast("load", "no-ext"), false, 0, 2},
		{"raw pixels of images of different sizes cannot be stacked", imageFast("size", "original", "features", "pixels"), false, 0, 2},
		{"grayscale images have no channels for the gradient histogram", imageFast("decode", "gray", "features", "hist-hog"), false, 0, 2},
		{"128 principal components of 40 histogram bins fail", imageFast("transform", "pca128"), false, 0, 2},
		{"XGBoost rejects the class names as labels", imageFast("model", "xgboost", "target", "argmax-names"), false, 0, 3},
		{"mirrored features without repeated labels fail at the split", imageFast("augment", "hflip-x-only"), false, 0, 3},
		{"no predict_proba fails after training", imageFast("model", "linear-svc"), false, 0, 4},
		{"a wrong test folder fails after training and validation", imageFast("load", "test-folder"), false, 0, 6},
		{"no id column makes an invalid submission", imageFast("submission", "no-id"), false, 0, 7},
		{"the probability matrix's own column names make an invalid submission", imageFast("submission", "index-columns"), false, 0, 7},
	})
	// A fast weak program: naive Bayes on raw 16-pixel images barely beats chance.
	weak := runChoice(t, lib, imageFast("features", "pixels", "model", "naive-bayes", "validation", "none"), spec, dirs, 5*time.Minute)
	if weak.ExitCode != 0 || !weak.Grade.Valid {
		t.Fatalf("weak program failed (exit %d, %s):\n%s", weak.ExitCode, weak.Grade.Reason, weak.Output)
	}
	if s := *weak.Grade.Score; s > 0.7 {
		t.Errorf("naive Bayes on raw 16-pixel images scores %.4f, want a weak score (at most 0.7)", s)
	}
	t.Logf("weak: %s %.5f in %.1fs, %d markers", spec.Metric, *weak.Grade.Score, weak.Seconds, weak.Markers)
}

// imageOdd turns the synthetic layout's training labels into booleans with a few missing (one
// cell, one whole row), overwrites one training image with bytes that are no image and cuts one
// test image short, as real competitions' files sometimes are.
const imageOdd = `import sys, pathlib
import numpy as np
import pandas as pd

public = pathlib.Path(sys.argv[1]) / "public"
train = pd.read_csv(public / "train.csv")
targets = ["healthy", "multiple_diseases", "rust", "scab"]
train[targets] = train[targets].astype(bool).astype(object)
train.loc[10, "rust"] = np.nan
train.loc[11, targets] = np.nan
train.to_csv(public / "train.csv", index=False)
(public / "images" / "Train_12.jpg").write_bytes(b"not an image")
test_image = public / "images" / "Test_5.jpg"
data = test_image.read_bytes()
test_image.write_bytes(data[: len(data) // 2])
`

// On the synthetic leaves with boolean labels, two unlabelled rows, an undecodable training
// image and a truncated test image, the strong program, cross-validated or writing hard one-hot
// rows, still writes valid submissions that score near the clean layout's bounds.
func TestImageProgramsOnOddSyntheticData(t *testing.T) {
	spec, _ := tasks.Builtin().Get("plant-pathology-2020-fgvc7")
	dirs := imageSyntheticData(t, "400", "150")
	if out, err := exec.Command(testenv.Python, "-c", imageOdd, filepath.Dir(dirs.Public)).CombinedOutput(); err != nil {
		t.Fatalf("making the synthetic layout odd: %v\n%s", err, out)
	}
	checkPrograms(t, codeactions.Image, spec, dirs, []programCase{
		{"strong: histograms, gradients and texture at 64 px under a random forest", imageBase(), true, 0.85, 7},
		{"the strong program cross-validated, writing one-hot rows", override(imageBase(), "validation", "cv3", "submission", "hard-onehot"), true, 0.7, 7},
	})
}

// On the real aerial-cactus validation split (prepared by the generic split from the spec
// alone; one binary target, ids that are the image file names): colour histograms under a
// logistic regression, opening the images by their ids alone (there is no extension to add),
// write a valid submission well above chance (AUC 0.949 measured), and the wrong data folder
// fails while loading.
func TestImageProgramsOnCactus(t *testing.T) {
	dataDir := testenv.PreparedData(t, "aerial-cactus-identification")
	spec, _ := tasks.Builtin().Get("aerial-cactus-identification")
	dirs := tasks.Layout{DataDir: dataDir}.Dirs(spec.ID, tasks.SplitValidation)
	checkPrograms(t, codeactions.Image, spec, dirs, []programCase{
		{"colour histograms under a logistic regression", imageFast("load", "no-ext"), true, 0.9, -1},
		{"the wrong data folder fails while loading", imageFast("load", "cwd"), false, 0, -1},
	})
}

// Raw pixels at 128 pixels with mirrored copies, under a memory limit whose eighth (the feature
// budget) holds them only at a lower size: the program lowers its working size to the largest
// that fits, says so, and still writes a valid submission; under the task's real limit it keeps
// 128 pixels and says nothing.
func TestImageFeaturesFitTheMemoryLimit(t *testing.T) {
	spec, _ := tasks.Builtin().Get("plant-pathology-2020-fgvc7")
	const nTrain = 60
	dirs := imageSyntheticData(t, strconv.Itoa(nTrain), "20")
	choices := imageFast("size", "128", "features", "pixels", "augment", "hflip", "model", "knn", "validation", "none")

	tight := *spec
	tight.Limits.MemoryMB = 8 // a 1 MiB feature budget
	rows, budget := 2*nTrain, (tight.Limits.MemoryMB<<20)/8
	want := 128
	for rows*want*want*3*4 > budget { // float32 RGB pixels of every row
		want--
	}
	o := runChoice(t, codeactions.Image, choices, &tight, dirs, 5*time.Minute)
	if o.ExitCode != 0 || !o.Grade.Valid {
		t.Fatalf("exit %d, %s:\n%s", o.ExitCode, o.Grade.Reason, o.Output)
	}
	said := fmt.Sprintf("over the 1 MiB budget (an eighth of 8 MiB): working at %d pixels", want)
	if !strings.Contains(o.Output, said) {
		t.Errorf("the output does not say %q:\n%s", said, o.Output)
	}
	if shape := fmt.Sprintf("%d training rows of %d features", rows, want*want*3); !strings.Contains(o.Output, shape) {
		t.Errorf("the features are not %s:\n%s", shape, o.Output)
	}

	o = runChoice(t, codeactions.Image, choices, spec, dirs, 5*time.Minute)
	if o.ExitCode != 0 || !o.Grade.Valid {
		t.Fatalf("under the task's limit: exit %d, %s:\n%s", o.ExitCode, o.Grade.Reason, o.Output)
	}
	if shape := fmt.Sprintf("%d training rows of %d features", rows, 128*128*3); strings.Contains(o.Output, "working at") || !strings.Contains(o.Output, shape) {
		t.Errorf("under the task's %d MiB the features fit at 128 pixels (%s), but the program lowered them:\n%s", spec.Limits.MemoryMB, shape, o.Output)
	}
}
