"""MLE-bench-style grading of submissions, written from MLE-bench's documented rules (not its
code), for grading/differential_test.go: the Go grader must agree on validity and score.

Input (stdin): a JSON list of {"task", "submission", "answers"}. Output (stdout): a JSON list of
{"valid": bool, "score": float or null, "reason": str}, one per input, in order.

As in MLE-bench: both files are read with pandas' read_csv (pandas 2's default missing-value
spellings, which Debian's pandas 1.5 lacks "None" of, are given explicitly); any exception while
grading makes the submission invalid (score None); a valid score is rounded to 5 decimals.
"""
import json
import math
import sys

import numpy as np
import pandas as pd
from sklearn.metrics import accuracy_score, log_loss, roc_auc_score

# pandas >= 2's default na_values.
NA = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
      "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null"]


class Invalid(Exception):
    pass


def read(path):
    return pd.read_csv(path, keep_default_na=False, na_values=NA)


def sorted_by(df, col):
    return df.sort_values(col).reset_index(drop=True)


def same_ids(sub, ans, col):
    if list(sub[col]) != list(ans[col]):
        raise Invalid("ids differ after sorting")


# ---- multi-class log loss over one-hot columns -------------------------------------------------

def log_loss_grade(sub, ans, classes, id_col, columns_rule, sum_rule):
    if columns_rule == "exact-set":  # leaf: exactly the id and the classes
        if set(sub.columns) != {id_col} | set(classes):
            raise Invalid("columns are not exactly the id and the classes")
    elif columns_rule == "shape":  # spooky: the answers' row count, id + one column per class
        if sub.shape != (len(ans), len(classes) + 1):
            raise Invalid("shape")
    else:  # lmsys: the id and the classes must be there, others may be too
        if any(c not in sub.columns for c in [id_col] + classes):
            raise Invalid("missing columns")
    if len(sub) != len(ans):
        raise Invalid("row count")
    sums = sub[classes].sum(axis=1)
    if sum_rule == "round6":
        ok = sums.round(6).eq(1).all()
    else:
        ok = np.all(np.isclose(sums, 1, atol=1e-6))
    if not ok:
        raise Invalid("rows do not sum to 1")
    if not ((sub[classes] >= 0) & (sub[classes] <= 1)).all().all():
        raise Invalid("probability outside [0, 1]")
    sub = sorted_by(sub[[id_col] + classes], id_col)
    ans = sorted_by(ans[[id_col] + classes], id_col)
    same_ids(sub, ans, id_col)
    y_true = ans[classes].to_numpy().argmax(axis=1)
    # Probabilities clipped at machine epsilon and each row renormalised (eps="auto").
    return log_loss(y_true, sub[classes].to_numpy(dtype=float), eps="auto", labels=list(range(len(classes))))


# ---- ROC AUC ------------------------------------------------------------------------------------

def auroc_grade(sub, ans, id_col, target):
    if id_col not in sub.columns or target not in sub.columns:
        raise Invalid("missing columns")
    if len(sub) != len(ans):
        raise Invalid("row count")
    pd.to_numeric(sub[target])  # text raises
    if sub[target].min() < 0 or sub[target].max() > 1:
        raise Invalid("scores must be probabilities in [0, 1]")
    sub, ans = sorted_by(sub, id_col), sorted_by(ans, id_col)
    same_ids(sub, ans, id_col)
    return roc_auc_score(ans[target].to_numpy(), sub[target].to_numpy())


def column_auroc_grade(sub, ans, id_col, classes):
    if len(sub) != len(ans):
        raise Invalid("row count")
    if set(sub.columns) != {id_col} | set(classes):
        raise Invalid("columns")
    sub, ans = sorted_by(sub, id_col), sorted_by(ans, id_col)
    same_ids(sub, ans, id_col)
    return float(np.mean([roc_auc_score(ans[c], sub[c]) for c in classes]))


# ---- word Jaccard -------------------------------------------------------------------------------

def jaccard_grade(sub, ans, id_col, target):
    if id_col not in sub.columns or target not in sub.columns:
        raise Invalid("missing columns")
    if len(sub) != len(ans):
        raise Invalid("row count")
    sub, ans = sorted_by(sub, id_col), sorted_by(ans, id_col)
    same_ids(sub, ans, id_col)
    preds = sub[target].fillna("").astype(str).tolist()
    truths = ans[target].fillna("").astype(str).tolist()
    scores = []
    for p, t in zip(preds, truths):
        a, b = set(t.lower().split()), set(p.lower().split())
        common = len(a & b)
        scores.append(common / (len(a) + len(b) - common))  # 0/0 raises: invalid
    return float(np.mean(scores))


# ---- accuracy -----------------------------------------------------------------------------------

def accuracy_grade(sub, ans, id_col, target):
    if len(sub) != len(ans):
        raise Invalid("row count")
    if target not in sub.columns or id_col not in sub.columns:
        raise Invalid("missing columns")
    sub, ans = sorted_by(sub, id_col), sorted_by(ans, id_col)
    if (sub[id_col].values != ans[id_col].values).any():
        raise Invalid("ids differ")
    return accuracy_score(ans[target].to_numpy(), sub[target].to_numpy())


def classes_of(ans, id_col):
    return [c for c in ans.columns if c != id_col]


GRADERS = {
    "leaf-classification": lambda s, a: log_loss_grade(s, a, classes_of(a, "id"), "id", "exact-set", "isclose"),
    "spooky-author-identification": lambda s, a: log_loss_grade(s, a, classes_of(a, "id"), "id", "shape", "isclose"),
    "lmsys-chatbot-arena": lambda s, a: log_loss_grade(
        s, a, ["winner_model_a", "winner_model_b", "winner_tie"], "id", "required", "round6"),
    "tabular-playground-series-may-2022": lambda s, a: auroc_grade(s, a, "id", "target"),
    "detecting-insults-in-social-commentary": lambda s, a: auroc_grade(s, a, "Comment", "Insult"),
    "random-acts-of-pizza": lambda s, a: auroc_grade(s, a, "request_id", "requester_received_pizza"),
    "plant-pathology-2020-fgvc7": lambda s, a: column_auroc_grade(
        s, a, "image_id", ["healthy", "multiple_diseases", "rust", "scab"]),
    "tweet-sentiment-extraction": lambda s, a: jaccard_grade(s, a, "textID", "selected_text"),
    "tabular-playground-series-dec-2021": lambda s, a: accuracy_grade(s, a, "Id", "Cover_Type"),
    "spaceship-titanic": lambda s, a: accuracy_grade(s, a, "PassengerId", "Transported"),
}


def grade(case):
    try:
        score = GRADERS[case["task"]](read(case["submission"]), read(case["answers"]))
        score = float(score)
        if math.isnan(score):
            return {"valid": False, "score": None, "reason": "NaN score"}
        return {"valid": True, "score": round(score, 5), "reason": ""}
    except Exception as e:  # MLE-bench: any exception in a grader makes the submission invalid
        return {"valid": False, "score": None, "reason": f"{type(e).__name__}: {e}"}


print(json.dumps([grade(c) for c in json.load(sys.stdin)]))
