# Splits Kaggle's raw learning-agency-lab-automated-essay-scoring-2 train.csv as MLE-bench does:
# train_test_split with test_size=0.1 and random_state=0. The private answers (answers.csv) are
# the whole new test rows (essay_id, full_text, score); the public test drops score; the sample
# submission scores each essay with numpy's RandomState(42).randint(1, 7).
# Runs after common.py (args, read_raw_csv, split, write_prepared).
import numpy as np

raw, public, private = args()
ID, TARGET = "essay_id", "score"
COLUMNS = [ID, "full_text", TARGET]

old_train = read_raw_csv(raw, "train.csv", COLUMNS, "learning-agency-lab-automated-essay-scoring-2", exact=True, unique=ID)
new_train, answers = split(old_train, 0.1)
sample = answers[[ID]].copy()
sample[TARGET] = np.random.RandomState(42).randint(1, 7, size=len(sample))
write_prepared(public, private, train=new_train, test=answers.drop(columns=[TARGET]),
               sample=sample, answers=answers, answers_name="answers.csv")
