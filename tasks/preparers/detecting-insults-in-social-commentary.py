# Lays out Kaggle's raw detecting-insults-in-social-commentary files as MLE-bench does, without a
# split: train.csv is copied byte for byte to public/train.csv and test_with_solutions.csv (the
# labelled test, with its Usage column) to private/test.csv. From the labelled test come
# private/gold_submission.csv (Insult, Date, Comment), public/test.csv (Date, Comment) and
# public/sample_submission_null.csv (the gold submission with Insult 0). Rows are identified by
# their Comment text: the competition has no id column.
import shutil
import sys
from pathlib import Path

import pandas as pd

raw, public, private = (Path(p) for p in sys.argv[1:4])
WANT = {
    "train.csv": ["Insult", "Date", "Comment"],
    "test_with_solutions.csv": ["Insult", "Date", "Comment", "Usage"],
}

frames = {}
for name, cols in WANT.items():
    path = raw / name
    if not path.is_file():
        sys.exit(f"raw file {name} is missing from {raw}: download the competition's files from Kaggle"
                 + (" (test_with_solutions.csv is the test set with its labels, released after the competition)" if name != "train.csv" else ""))
    try:
        frames[name] = pd.read_csv(path, float_precision="round_trip")
    except Exception as e:  # pandas raises several parser errors
        sys.exit(f"raw file {name} is not a readable CSV: {e}")
    if list(frames[name].columns) != cols:
        sys.exit(f"raw file {name} has columns {list(frames[name].columns)[:6]}, expected {cols}: is {raw} the insults download?")

shutil.copyfile(raw / "train.csv", public / "train.csv")
shutil.copyfile(raw / "test_with_solutions.csv", private / "test.csv")

gold = frames["test_with_solutions.csv"][["Insult", "Date", "Comment"]]
gold.to_csv(private / "gold_submission.csv", index=False)
gold.drop(columns=["Insult"]).to_csv(public / "test.csv", index=False)
gold.assign(Insult=0).to_csv(public / "sample_submission_null.csv", index=False)
