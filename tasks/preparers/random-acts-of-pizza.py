# Splits Kaggle's raw random-acts-of-pizza train.json as MLE-bench does: train_test_split of the
# record list with Kaggle's own test share (len(test) / (len(train) + len(test)), i.e. 1631/5671)
# and random_state=0. The new test keeps only the fields of Kaggle's test.json; the answers are
# request_id and requester_received_pizza as 0/1; the sample submission predicts 0 everywhere.
# JSON is written like json.dump(..., indent=4), CSV like pandas' to_csv(index=False).
# Runs after common.py (args, raw_file, split).
import json

raw, public, private = args()
ID, LABEL = "request_id", "requester_received_pizza"


def load(name):
    path = raw_file(raw, name)
    try:
        with open(path) as f:
            records = json.load(f)
    except ValueError as e:
        sys.exit(f"raw file {name} is not valid JSON ({e}): is {raw} the random-acts-of-pizza download?")
    if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
        sys.exit(f"raw file {name} must be a non-empty JSON list of request objects")
    fields = set(records[0])
    if any(set(r) != fields for r in records):
        sys.exit(f"raw file {name}: the records do not all have the same fields")
    return records


old_train, old_test = load("train.json"), load("test.json")
for col in (ID, LABEL):
    if col not in old_train[0]:
        sys.exit(f"raw file train.json has no '{col}' field: is {raw} the random-acts-of-pizza download?")
test_fields = list(old_test[0])
if ID not in test_fields or LABEL in test_fields:
    sys.exit(f"raw file test.json must have '{ID}' and no '{LABEL}': is it Kaggle's unlabelled test.json?")
lacking = [f for f in test_fields if f not in old_train[0]]
if lacking:
    sys.exit(f"raw file test.json has fields train.json lacks: {lacking[:5]}")

test_share = len(old_test) / (len(old_train) + len(old_test))
new_train, new_test = split(old_train, test_share)

with open(public / "train.json", "w") as f:
    json.dump(new_train, f, indent=4)
with open(public / "test.json", "w") as f:
    json.dump([{k: r[k] for k in test_fields} for r in new_test], f, indent=4)

answers = pd.DataFrame({ID: [r[ID] for r in new_test], LABEL: [int(r[LABEL]) for r in new_test]})
answers.to_csv(private / "test.csv", index=False)
sample = answers.assign(**{LABEL: 0})
sample.to_csv(public / "sampleSubmission.csv", index=False)
