# Splits Kaggle's raw plant-pathology-2020-fgvc7 train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0, then images renamed in split order: the new train's become
# Train_0, Train_1, ... and the new test's Test_0, Test_1, ... Each raw images/<old>.jpg of the
# raw train is copied to public/images/<new>.jpg (Kaggle's own unlabelled Test_*.jpg are not).
# The private answers are the renamed new test rows (image_id and the four 0/1 labels); the public
# test is image_id alone; the sample submission gives each class 0.25.
import shutil
import sys
from pathlib import Path

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID = "image_id"
CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]

path = raw / "train.csv"
if not path.is_file():
    sys.exit(f"raw file train.csv is missing from {raw}: download the competition's files from Kaggle")
try:
    # MLE-bench runs pandas >= 2.2, whose default missing-value strings include "None".
    old_train = pd.read_csv(path, float_precision="round_trip", na_values=["None"])
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file train.csv is not a readable CSV: {e}")
if set(old_train.columns) != set([ID] + CLASSES):
    sys.exit(f"raw file train.csv has columns {list(old_train.columns)[:6]}, expected {[ID] + CLASSES}: is {raw} the plant-pathology-2020-fgvc7 download?")
if len(old_train) < 2:
    sys.exit(f"raw file train.csv has {len(old_train)} rows: too few to split")
ids = old_train[ID].astype(str)
if old_train[ID].duplicated().any():
    sys.exit(f"raw file train.csv has duplicate image ids, e.g. {ids[old_train[ID].duplicated()].iloc[0]!r}")
odd = [i for i in ids if not i.startswith("Train_")]
if odd:
    sys.exit(f"raw file train.csv has image ids not starting with Train_: {odd[:5]}")

# The images sit in images/; a zip flattened on extraction leaves them at the top of the folder.
images = raw / "images"
if not images.is_dir():
    if not (raw / f"{ids.iloc[0]}.jpg").is_file():
        sys.exit(f"raw folder images/ is missing from {raw}: it must hold <image_id>.jpg for every train.csv row")
    images = raw
absent = [i for i in ids if not (images / f"{i}.jpg").is_file()]
if absent:
    sys.exit(f"raw folder {images.name}/ lacks {len(absent)} train images (first: {[a + '.jpg' for a in absent[:5]]})")

new_train, answers = train_test_split(old_train, test_size=0.1, random_state=0)
new_train, answers = new_train.copy(), answers.copy()
rename = {old: f"Train_{i}" for i, old in enumerate(new_train[ID].unique())}
rename.update({old: f"Test_{i}" for i, old in enumerate(answers[ID].unique())})
new_train[ID] = new_train[ID].map(rename)
answers[ID] = answers[ID].map(rename)
new_test = answers[[ID]].copy()
sample = answers[[ID]].copy()
for c in CLASSES:
    sample[c] = 0.25

(public / "images").mkdir(parents=True, exist_ok=True)
for old in old_train[ID]:
    shutil.copyfile(images / f"{old}.jpg", public / "images" / f"{rename[old]}.jpg")

answers.to_csv(private / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
new_test.to_csv(public / "test.csv", index=False)
new_train.to_csv(public / "train.csv", index=False)
