# Splits Kaggle's raw denoising-dirty-documents train images as MLE-bench does: the sorted
# train/*.png paths are split by train_test_split(test_size=0.2, random_state=0); the held-out
# noisy images go to public/test/, the rest stay in public/train/ with their cleaned versions in
# public/train_cleaned/. The private answers.csv lists every pixel of the held-out cleaned images
# (in sorted path order, row-major) as id "<image>_<row>_<col>" (1-based) and value the grey level
# divided by 255; public/sampleSubmission.csv is the answers with value 1. Kaggle's own unlabelled
# test.zip is not used.
#
# The train is images, not rows, so carve.py cannot carve it: the spec names this file as its
# carver too, and called so, with one argument (the JSON config carve.py gets), it carves a
# validation or cross-validation fold itself, holding out whole images in the same way.
# Runs after common.py (args, raw_file, split).
import io
import json
import math
import os
import shutil
import zipfile

import numpy as np
from PIL import Image

TASK = "denoising-dirty-documents"
# The text pandas' to_csv writes for the float64 k/255 (Python's repr): the answers are written
# from this table, far faster than through a DataFrame, and byte-identical to MLE-bench's.
LEVELS = np.array([repr(k / 255.0) for k in range(256)], dtype=object)


def read_folder(raw, name):
    """{file name: PNG bytes} of raw folder `name`, from <name>.zip (Kaggle's) or <name>/."""
    pngs = {}
    if (raw / name).is_dir():
        for p in (raw / name).glob("*.png"):
            pngs[p.name] = p.read_bytes()
    else:
        archive = raw_file(raw, name + ".zip", f"it must hold {name}/*.png ({DOWNLOAD})")
        try:
            with zipfile.ZipFile(archive) as z:
                for n in z.namelist():
                    parts = n.split("/")
                    if n.endswith(".png") and len(parts) == 2 and parts[0] == name:
                        pngs[parts[1]] = z.read(n)
        except (zipfile.BadZipFile, OSError) as e:
            sys.exit(f"raw file {name}.zip is not a readable zip: {e}")
    if len(pngs) < 2:
        sys.exit(f"raw {name}.zip (or {name}/) holds {len(pngs)} {name}/*.png images: is {raw} the {TASK} download?")
    return pngs


def grey(png, name):
    """The image as a 2-D uint8 array of grey levels."""
    try:
        return np.asarray(Image.open(io.BytesIO(png)).convert("L"))
    except OSError as e:
        sys.exit(f"image {name} is not a readable PNG: {e}")


def pixel_lines(stem, levels, value=None):
    """The CSV lines "<stem>_<row>_<col>,<value>" of an image's uint8 grey levels, row-major;
    with value set, every line ends in that text instead."""
    h, w = levels.shape
    rows = np.array([f"{stem}_{r}_" for r in range(1, h + 1)], dtype=object)
    cols = np.array([f"{c}," for c in range(1, w + 1)], dtype=object)
    ids = np.repeat(rows, w) + np.tile(cols, h)
    return ids + (LEVELS[levels.ravel()] if value is None else value)


def write_pixels(path, images, value=None):
    """Writes id,value for every pixel of images ({stem: uint8 array}, in the given order); with
    value set, every pixel's value is that text instead (the sample submission's 1)."""
    with open(path, "w") as f:
        f.write("id,value\n")
        for stem, levels in images.items():
            f.write("\n".join(pixel_lines(stem, levels, value)))
            f.write("\n")


def write_split(public, private, noisy, clean, held, link=None):
    """Writes a split: the noisy images not in held to public/train/ with their cleaned versions
    in public/train_cleaned/, the held ones to public/test/, the held cleaned ones' pixels to
    private/answers.csv and the sample submission. held is in the answers' order. With link
    (the public folder of the split being carved) images are hard-linked from there."""
    for d in ("train", "train_cleaned", "test"):
        (public / d).mkdir(parents=True, exist_ok=True)
    private.mkdir(parents=True, exist_ok=True)
    held_set = set(held)

    def put(folder, name, src_folder):
        dst = public / folder / name
        if link is not None:
            os.link(link / src_folder / name, dst)
        else:
            dst.write_bytes((noisy if src_folder == "train" else clean)[name])

    for name in noisy:
        if name in held_set:
            put("test", name, "train")
        else:
            put("train", name, "train")
            put("train_cleaned", name, "train_cleaned")
    answers = {}
    for name in held:
        png = (link / "train_cleaned" / name).read_bytes() if link is not None else clean[name]
        answers[name[: -len(".png")]] = grey(png, name)
    write_pixels(private / "answers.csv", answers)
    write_pixels(public / "sampleSubmission.csv", answers, value="1")


def carve(cfg):
    """One validation fold (or, with cv_folds, one cross-validation fold) of the public train:
    whole images held out by a seeded permutation of the sorted names, as carve.py holds rows."""
    pub, priv = Path(cfg["public"]), Path(cfg["private"])
    names = sorted(p.name for p in (pub / "train").glob("*.png"))
    lacking = [n for n in names if not (pub / "train_cleaned" / n).is_file()]
    if lacking:
        sys.exit(f"public train_cleaned/ lacks {lacking[:5]}: prepare the task again")
    n, fold = len(names), cfg.get("fold", 1)
    order = np.random.RandomState(cfg["seed"]).permutation(n)
    if cfg.get("cv_folds"):
        if cfg["cv_folds"] > n:
            sys.exit(f"{cfg['cv_folds']} cross-validation folds need at least as many train images, the train has {n}")
        held = np.array_split(order, cfg["cv_folds"])[fold - 1]
    else:
        k = math.ceil(cfg["fraction"] * n)
        if fold * k > n:
            sys.exit(f"fold {fold} of {k} images does not fit in the {n} train images: lower validation.folds or validation.fraction")
        held = order[(fold - 1) * k : fold * k]
    held_names = [names[i] for i in held]
    held_names.sort(key=lambda s: (pub / "train" / s).as_posix())  # the answers' order, as MLE-bench's
    noisy = dict.fromkeys(names)
    write_split(Path(cfg["out_public"]), Path(cfg["out_private"]), noisy, None, held_names, link=pub)


if len(sys.argv) == 2:
    carve(json.loads(sys.argv[1]))
    sys.exit(0)

raw, public, private = args()
noisy = read_folder(raw, "train")
clean = read_folder(raw, "train_cleaned")
unpaired = sorted(set(noisy) ^ set(clean))
if unpaired:
    sys.exit(f"raw train and train_cleaned must hold the same images; {len(unpaired)} are in only one (first: {unpaired[:5]})")
for name in noisy:
    if grey(noisy[name], name).shape != grey(clean[name], name).shape:
        sys.exit(f"raw image {name} has different sizes in train/ and train_cleaned/")

# MLE-bench splits the sorted paths public/train/<name>; sorting the names sorts them alike.
_, test_names = split(sorted(noisy), 0.2)
write_split(public, private, noisy, clean, sorted(test_names))
