# Splits Kaggle's raw nomad2018-predict-transparent-conductors train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0, then ids renumbered 1, 2, ... separately
# in the new train and the new test (in split order). The private answers are the whole new test
# rows (features and both targets); the public test drops the targets; the sample submission
# predicts 0.1779 and 1.8892 everywhere. Each row's geometry follows it: the raw train geometry of
# old id i becomes public/{train|test}/<new id>/geometry.xyz. Only the geometry.xyz files are used
# (the raw archive also holds a stray train/757/tmp_geometry.xyz).
import sys
import tarfile
from pathlib import Path, PurePosixPath

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
TARGETS = ["formation_energy_ev_natom", "bandgap_energy_ev"]
GEOMETRY = "geometry_xyz.tar.gz"

train_csv = raw / "train.csv"
if not train_csv.is_file():
    sys.exit(f"raw file train.csv is missing from {raw}: download the competition's files from Kaggle")
try:
    old_train = pd.read_csv(train_csv, float_precision="round_trip")
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file train.csv is not a readable CSV: {e}")
for col in ["id"] + TARGETS:
    if col not in old_train.columns:
        sys.exit(f"raw file train.csv has no '{col}' column: is {raw} the nomad2018 download?")
if old_train["id"].duplicated().any():
    sys.exit("raw file train.csv has duplicate ids")

# Read the raw train geometries first, so a broken archive fails before anything is written.
archive = raw / GEOMETRY
if not archive.is_file():
    sys.exit(f"raw file {GEOMETRY} is missing from {raw}: it must hold train/<id>/geometry.xyz for every train id")
geometry = {}
try:
    with tarfile.open(archive, "r:*") as tar:
        for m in tar:
            parts = [p for p in PurePosixPath(m.name).parts if p not in (".", "/")]
            if m.isfile() and len(parts) == 3 and parts[0] == "train" and parts[2] == "geometry.xyz" and parts[1].isdigit():
                geometry[int(parts[1])] = tar.extractfile(m).read()
except (tarfile.TarError, OSError, EOFError) as e:
    sys.exit(f"raw file {GEOMETRY} is not a readable tar.gz archive: {e}")
absent = [i for i in old_train["id"] if i not in geometry]
if absent:
    sys.exit(f"raw file {GEOMETRY} lacks train/<id>/geometry.xyz for {len(absent)} train ids (first: {absent[:5]})")

new_train, new_test = train_test_split(old_train, test_size=0.1, random_state=0)
new_train, new_test = new_train.copy(), new_test.copy()
renumber = {}
for name, frame in (("train", new_train), ("test", new_test)):
    mapping = {old: new for new, old in enumerate(frame["id"], start=1)}
    renumber[name] = mapping
    frame["id"] = frame["id"].map(mapping)

new_train.to_csv(public / "train.csv", index=False)
new_test.to_csv(private / "test.csv", index=False)
new_test.drop(columns=TARGETS).to_csv(public / "test.csv", index=False)
for name, mapping in renumber.items():
    for old, new in mapping.items():
        d = public / name / str(new)
        d.mkdir(parents=True, exist_ok=True)
        (d / "geometry.xyz").write_bytes(geometry[old])

sample = pd.DataFrame({"id": new_test["id"], TARGETS[0]: 0.1779, TARGETS[1]: 1.8892})
sample.to_csv(public / "sample_submission.csv", index=False)
