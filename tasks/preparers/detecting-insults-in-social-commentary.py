# Lays out Kaggle's raw detecting-insults-in-social-commentary files as MLE-bench does, without a
# split: train.csv is copied byte for byte to public/train.csv and test_with_solutions.csv (the
# labelled test, with its Usage column) to private/test.csv. From the labelled test come
# private/gold_submission.csv (Insult, Date, Comment), public/test.csv (Date, Comment) and
# public/sample_submission_null.csv (the gold submission with Insult 0). Rows are identified by
# their Comment text: the competition has no id column.
# Runs after common.py (args, raw_file, read_raw_csv).
import shutil

raw, public, private = args()
TASK = "detecting-insults-in-social-commentary"
COLUMNS = ["Insult", "Date", "Comment"]
LABELLED = DOWNLOAD + " (test_with_solutions.csv is the test set with its labels, released after the competition)"

# Both files are checked before anything is written; read with pandas' own missing values.
read_raw_csv(raw, "train.csv", COLUMNS, TASK, exact=True, min_rows=0, na_values=None)
labelled = read_raw_csv(raw, "test_with_solutions.csv", COLUMNS + ["Usage"], TASK, exact=True, min_rows=0, na_values=None,
                        source=raw_file(raw, "test_with_solutions.csv", LABELLED))

shutil.copyfile(raw / "train.csv", public / "train.csv")
shutil.copyfile(raw / "test_with_solutions.csv", private / "test.csv")

gold = labelled[COLUMNS]
gold.to_csv(private / "gold_submission.csv", index=False)
gold.drop(columns=["Insult"]).to_csv(public / "test.csv", index=False)
gold.assign(Insult=0).to_csv(public / "sample_submission_null.csv", index=False)
