# Splits Kaggle's raw plant-pathology-2020-fgvc7 train.csv as MLE-bench does: train_test_split with
# test_size=0.1 and random_state=0, then images renamed in split order: the new train's become
# Train_0, Train_1, ... and the new test's Test_0, Test_1, ... Each raw images/<old>.jpg of the
# raw train is copied to public/images/<new>.jpg (Kaggle's own unlabelled Test_*.jpg are not).
# The private answers are the renamed new test rows (image_id and the four 0/1 labels); the public
# test is image_id alone; the sample submission gives each class 0.25.
# Runs after common.py (args, read_raw_csv, split, constant_sample, write_prepared).
import shutil

raw, public, private = args()
ID = "image_id"
CLASSES = ["healthy", "multiple_diseases", "rust", "scab"]

old_train = read_raw_csv(raw, "train.csv", [ID] + CLASSES, "plant-pathology-2020-fgvc7", exact="any order", unique=ID)
ids = old_train[ID].astype(str)
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

new_train, answers = split(old_train, 0.1)
new_train, answers = new_train.copy(), answers.copy()
rename = {old: f"Train_{i}" for i, old in enumerate(new_train[ID].unique())}
rename.update({old: f"Test_{i}" for i, old in enumerate(answers[ID].unique())})
new_train[ID] = new_train[ID].map(rename)
answers[ID] = answers[ID].map(rename)

(public / "images").mkdir(parents=True, exist_ok=True)
for old in old_train[ID]:
    shutil.copyfile(images / f"{old}.jpg", public / "images" / f"{rename[old]}.jpg")

write_prepared(public, private, train=new_train, test=answers[[ID]].copy(),
               sample=constant_sample(answers, ID, dict.fromkeys(CLASSES, 0.25)), answers=answers)
