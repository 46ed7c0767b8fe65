# The generic preparer: MLE-bench's common preparation, driven by a task spec's split section.
# The raw table's rows are split with train_test_split(test_size, random_state[, stratify]);
# the train part is the public train, the test part without the target columns the public test,
# the test part whole the private answers, and the test ids with the spec's constants the sample
# submission. With split.images, each row's image is copied into the public images folder.
# Every failure names the spec field (or the raw file) and the fix.
#   python3 generic.py CONFIG_JSON
import io
import json
import shutil
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pandas as pd
from sklearn.model_selection import train_test_split

cfg = json.loads(sys.argv[1])
raw, public, private = Path(cfg["raw"]), Path(cfg["public"]), Path(cfg["private"])
split, files = cfg["split"], cfg["files"]
ID, TARGETS = cfg["id_column"], cfg["target_columns"]


def table_source(name):
    """The raw table `name` as a path or, inside a zip, as bytes; and the name of the table."""
    path = raw / name
    if not path.is_file():
        sys.exit(f"split.raw: raw file {name} is missing from {raw}: download the competition's files from Kaggle, or name the raw table there")
    if not name.endswith(".zip"):
        return path, name
    try:
        with zipfile.ZipFile(path) as z:
            inside = [m for m in z.namelist() if not m.endswith("/") and PurePosixPath(m).suffix in (".csv", ".tsv")]
            # train.tsv.zip holds train.tsv; otherwise the zip must hold a single table.
            named = [m for m in inside if PurePosixPath(m).name == name[: -len(".zip")]]
            if len(named) == 1:
                inside = named
            if len(inside) != 1:
                sys.exit(f"split.raw: raw file {name} must hold one .csv or .tsv table, it holds {inside[:5] or z.namelist()[:5]}")
            return io.BytesIO(z.read(inside[0])), inside[0]
    except (zipfile.BadZipFile, OSError) as e:
        sys.exit(f"split.raw: raw file {name} is not a readable zip: {e}")


source, table = table_source(split["raw"])
try:
    rows = pd.read_csv(source, sep="\t" if table.endswith(".tsv") else ",")
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"split.raw: raw file {table} is not a readable table: {e}")

have = list(rows.columns)
for field, columns in (("id_column", [ID]), ("target_columns", TARGETS)):
    lacking = [c for c in columns if c not in have]
    if lacking:
        sys.exit(f"{field}: {lacking} not in raw table {table}, whose columns are {have[:10]}: name its columns in the spec")
if rows[ID].duplicated().any():
    sys.exit(f"id_column: {ID} repeats in raw table {table} (e.g. {rows[ID][rows[ID].duplicated()].iloc[0]!r}): name a column that identifies a row")
stratify = split.get("stratify") or None
if stratify is not None and stratify not in have:
    sys.exit(f"split.stratify: {stratify!r} is not a column of raw table {table} (it has {have[:10]})")

try:
    train, test = train_test_split(rows, test_size=split["test_size"], random_state=split["random_state"],
                                   stratify=rows[stratify] if stratify else None)
except ValueError as e:
    if "empty" in str(e) or not stratify:
        field, fix = "split.test_size", "choose a test_size that leaves both parts rows"
    else:
        field, fix = "split.stratify", "every class needs 2 rows or more on each side: drop split.stratify, or raise split.test_size"
    sys.exit(f"{field}: the {len(rows)} rows of {table} cannot be split with test_size {split['test_size']}{' stratified on ' + stratify if stratify else ''} ({e}): {fix}")
if len(train) < 2 or len(test) < 1:
    sys.exit(f"split.test_size: {split['test_size']} leaves {len(train)} train and {len(test)} test rows of {len(rows)}: choose a test_size that leaves both parts rows")

sample = test[[ID]].copy()
for column, value in cfg["sample"]:
    sample[column] = value

if split.get("images"):
    src, folder, ext = split["images"], public / cfg["images_folder"], cfg["image_ext"]
    folder.mkdir(parents=True, exist_ok=True)
    want = {f"{i}{ext}" for i in rows[ID].astype(str)}
    path = raw / src
    found = {}
    if path.is_dir():
        # The images sit in the folder or in one folder below it (as a zip extracted keeps them).
        for p in list(path.iterdir()) + [q for d in path.iterdir() if d.is_dir() for q in d.iterdir()]:
            if p.name in want and p.is_file():
                found[p.name] = p
        for name, p in found.items():
            shutil.copyfile(p, folder / name)
    elif path.is_file():
        try:
            with zipfile.ZipFile(path) as z:
                for m in z.infolist():
                    name = PurePosixPath(m.filename).name
                    if not m.is_dir() and name in want and name not in found:
                        found[name] = m
                        with z.open(m) as f, open(folder / name, "wb") as out:
                            shutil.copyfileobj(f, out)
        except (zipfile.BadZipFile, OSError) as e:
            sys.exit(f"split.images: raw file {src} is not a readable zip: {e}")
    else:
        sys.exit(f"split.images: {src} is missing from {raw}: name the raw zip or folder of the images (Kaggle's train.zip, say)")
    absent = [f"{i}{ext}" for i in rows[ID].astype(str) if f"{i}{ext}" not in found]
    if absent:
        sys.exit(f"split.images: {src} lacks the images of {len(absent)} of {len(want)} rows (first: {absent[:3]}): each row of {table} needs <{ID}>{ext} (inputs.image_ext is {ext!r})")

train.to_csv(public / files["train"], index=False)
test.drop(columns=TARGETS).to_csv(public / files["test"], index=False)
sample.to_csv(public / files["sample_submission"], index=False)
test.to_csv(private / files["answers"], index=False)
