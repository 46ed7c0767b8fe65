# Splits Kaggle's raw spooky-author-identification train as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0. The answers are one-hot over the fixed classes EAP, HPL, MWS
# (id, EAP, HPL, MWS as 0/1); the public test drops the author; the sample submission is the
# answers with Kaggle's constant probabilities. Kaggle ships train.csv inside train.zip (MLE-bench
# extracts it): either is read, train.csv first.
import io
import sys
import zipfile
from pathlib import Path, PurePosixPath

import pandas as pd
from sklearn.model_selection import train_test_split

raw, public, private = (Path(p) for p in sys.argv[1:4])
ID, TEXT, TARGET = "id", "text", "author"
CLASSES = ["EAP", "HPL", "MWS"]
PRIOR = {"EAP": 0.403493538995863, "HPL": 0.287808366106543, "MWS": 0.308698094897594}


def train_source():
    if (raw / "train.csv").is_file():
        return raw / "train.csv", "train.csv"
    packed = raw / "train.zip"
    if not packed.is_file():
        sys.exit(f"raw file train.csv is missing from {raw} (and so is Kaggle's train.zip holding it): "
                 "download the competition's files from Kaggle")
    try:
        with zipfile.ZipFile(packed) as z:
            inside = [m for m in z.namelist() if PurePosixPath(m).name == "train.csv"]
            if not inside:
                sys.exit(f"raw file train.zip holds no train.csv (it has {z.namelist()[:5]})")
            return io.BytesIO(z.read(inside[0])), "train.csv (in train.zip)"
    except (zipfile.BadZipFile, OSError) as e:
        sys.exit(f"raw file train.zip is not a readable zip: {e}")


source, name = train_source()
try:
    # MLE-bench runs pandas >= 2.2, whose default missing-value strings include "None".
    old_train = pd.read_csv(source, float_precision="round_trip", na_values=["None"])
except Exception as e:  # pandas raises several parser errors
    sys.exit(f"raw file {name} is not a readable CSV: {e}")
lacking = [c for c in (ID, TEXT, TARGET) if c not in old_train.columns]
if lacking:
    sys.exit(f"raw file {name} has no {lacking} column (it has {list(old_train.columns)[:6]}): is {raw} the spooky-author-identification download?")
if len(old_train) < 2:
    sys.exit(f"raw file {name} has {len(old_train)} rows: too few to split")
if old_train[ID].duplicated().any():
    sys.exit(f"raw file {name} has duplicate ids, e.g. {old_train[ID][old_train[ID].duplicated()].iloc[0]!r}")
unknown = sorted(set(old_train[TARGET].astype(str)) - set(CLASSES))
if unknown:
    sys.exit(f"raw file {name} has authors {unknown[:5]} besides {CLASSES}")

new_train, new_test = train_test_split(old_train, test_size=0.1, random_state=0)

answers = pd.DataFrame({ID: new_test[ID]})
for c in CLASSES:
    answers[c] = (new_test[TARGET] == c).astype(int)
sample = answers.copy()
for c in CLASSES:
    sample[c] = PRIOR[c]

new_train.to_csv(public / "train.csv", index=False)
new_test.drop(columns=[TARGET]).to_csv(public / "test.csv", index=False)
sample.to_csv(public / "sample_submission.csv", index=False)
answers.to_csv(private / "test.csv", index=False)
