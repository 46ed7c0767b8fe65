# Splits Kaggle's raw spooky-author-identification train as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0. The answers are one-hot over the fixed classes EAP, HPL, MWS
# (id, EAP, HPL, MWS as 0/1); the public test drops the author; the sample submission is the
# answers with Kaggle's constant probabilities. Kaggle ships train.csv inside train.zip (MLE-bench
# extracts it): either is read, train.csv first.
# Runs after common.py (args, raw_file, read_raw_csv, split, write_prepared).
import io
import zipfile
from pathlib import PurePosixPath

raw, public, private = args()
ID, TEXT, TARGET = "id", "text", "author"
CLASSES = ["EAP", "HPL", "MWS"]
PRIOR = {"EAP": 0.403493538995863, "HPL": 0.287808366106543, "MWS": 0.308698094897594}


def train_source():
    packed = raw / "train.zip"
    if (raw / "train.csv").is_file() or not packed.is_file():
        return raw_file(raw, "train.csv", DOWNLOAD + " (Kaggle's train.zip, which holds it, is missing too)"), "train.csv"
    try:
        with zipfile.ZipFile(packed) as z:
            inside = [m for m in z.namelist() if PurePosixPath(m).name == "train.csv"]
            if not inside:
                sys.exit(f"raw file train.zip holds no train.csv (it has {z.namelist()[:5]})")
            return io.BytesIO(z.read(inside[0])), "train.csv (in train.zip)"
    except (zipfile.BadZipFile, OSError) as e:
        sys.exit(f"raw file train.zip is not a readable zip: {e}")


source, name = train_source()
old_train = read_raw_csv(raw, name, [ID, TEXT, TARGET], "spooky-author-identification", source=source, unique=ID)
unknown = sorted(set(old_train[TARGET].astype(str)) - set(CLASSES))
if unknown:
    sys.exit(f"raw file {name} has authors {unknown[:5]} besides {CLASSES}")

new_train, new_test = split(old_train, 0.1)
answers = pd.DataFrame({ID: new_test[ID]})
for c in CLASSES:
    answers[c] = (new_test[TARGET] == c).astype(int)
sample = answers.copy()
for c in CLASSES:
    sample[c] = PRIOR[c]
write_prepared(public, private, train=new_train, test=new_test.drop(columns=[TARGET]), sample=sample, answers=answers)
