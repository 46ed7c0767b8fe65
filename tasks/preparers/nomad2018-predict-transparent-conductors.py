# Splits Kaggle's raw nomad2018-predict-transparent-conductors train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0, then ids renumbered 1, 2, ... separately
# in the new train and the new test (in split order). The private answers are the whole new test
# rows (features and both targets); the public test drops the targets; the sample submission
# predicts 0.1779 and 1.8892 everywhere. Each row's geometry follows it: the raw train geometry of
# old id i becomes public/{train|test}/<new id>/geometry.xyz. Only the geometry.xyz files are used
# (the raw archive also holds a stray train/757/tmp_geometry.xyz).
# Runs after common.py (args, raw_file, read_raw_csv, split, constant_sample, write_prepared).
import tarfile
from pathlib import PurePosixPath

raw, public, private = args()
TARGETS = ["formation_energy_ev_natom", "bandgap_energy_ev"]
GEOMETRY = "geometry_xyz.tar.gz"

old_train = read_raw_csv(raw, "train.csv", ["id"] + TARGETS, "nomad2018-predict-transparent-conductors",
                         unique="id", na_values=None)

# Read the raw train geometries first, so a broken archive fails before anything is written.
archive = raw_file(raw, GEOMETRY, "it must hold train/<id>/geometry.xyz for every train id")
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

new_train, new_test = split(old_train, 0.1)
new_train, new_test = new_train.copy(), new_test.copy()
renumber = {}
for name, frame in (("train", new_train), ("test", new_test)):
    mapping = {old: new for new, old in enumerate(frame["id"], start=1)}
    renumber[name] = mapping
    frame["id"] = frame["id"].map(mapping)

write_prepared(public, private, train=new_train, test=new_test.drop(columns=TARGETS),
               sample=constant_sample(new_test, "id", {TARGETS[0]: 0.1779, TARGETS[1]: 1.8892}), answers=new_test)
for name, mapping in renumber.items():
    for old, new in mapping.items():
        d = public / name / str(new)
        d.mkdir(parents=True, exist_ok=True)
        (d / "geometry.xyz").write_bytes(geometry[old])
