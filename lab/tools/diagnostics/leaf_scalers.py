# Which scaling makes leaf's logistic regression win: for each transform and C, the 5-fold
# stratified out-of-fold log loss on the prepared public train, the test log loss of the refit,
# and both after the answer's calibration (probabilities raised to the power that minimises the
# out-of-fold loss, renormalised). Runs in the sandbox image (the host has no numpy):
#   docker run --rm -v <data-dir>/leaf-classification:/d:ro -v $PWD/lab/tools/diagnostics:/b:ro \
#     mlerl-sandbox:bookworm python3 /b/leaf_scalers.py /d power,standard,log1p 1,10,100,1000
# It reads the private test answers: a diagnostic of the platform's choices, never a run's input.
import sys, time, numpy as np, pandas as pd, warnings
warnings.filterwarnings("ignore")
from sklearn import preprocessing, linear_model, model_selection
from sklearn.metrics import log_loss
d = sys.argv[1]
tr = pd.read_csv(d + "/prepared/public/train.csv")
te = pd.read_csv(d + "/prepared/public/test.csv")
ans = pd.read_csv(d + "/prepared/private/test.csv")
classes = sorted(tr.species.unique())
y = np.array([classes.index(s) for s in tr.species])
X = tr.drop(columns=["id", "species"]).values
Xt = te.drop(columns=["id"]).values
ans = ans.set_index("id").loc[te.id]
yt = np.array([classes.index(c) for c in ans[classes].idxmax(axis=1)])
def tf(name, A, B):
    if name == "standard": s = preprocessing.StandardScaler().fit(A); return s.transform(A), s.transform(B)
    if name == "power": s = preprocessing.PowerTransformer().fit(A); return s.transform(A), s.transform(B)
    if name == "log1p":
        A, B = np.log1p(A), np.log1p(B); s = preprocessing.StandardScaler().fit(A); return s.transform(A), s.transform(B)
    return A, B
def cal(p, pw):
    q = np.clip(p, 1e-15, 1) ** pw; return q / q.sum(1, keepdims=True)
skf = model_selection.StratifiedKFold(5, shuffle=True, random_state=0)
for t in sys.argv[2].split(","):
    for C in [float(c) for c in sys.argv[3].split(",")]:
        t0 = time.time()
        oof = np.zeros((len(y), len(classes)))
        for a, b in skf.split(X, y):
            A, B = tf(t, X[a], X[b])
            m = linear_model.LogisticRegression(C=C, max_iter=2000).fit(A, y[a])
            oof[b] = m.predict_proba(B)
        A, B = tf(t, X, Xt)
        m = linear_model.LogisticRegression(C=C, max_iter=2000).fit(A, y)
        pt = m.predict_proba(B)
        pws = np.arange(0.5, 3.01, 0.05)
        pw = pws[np.argmin([log_loss(y, cal(oof, p), labels=range(len(classes))) for p in pws])]
        print(f"{t:9s} C={C:<7g} oof={log_loss(y, oof, labels=range(len(classes))):.4f} test={log_loss(yt, pt, labels=range(len(classes))):.4f} pw={pw:.2f} cal_oof={log_loss(y, cal(oof,pw), labels=range(len(classes))):.4f} cal_test={log_loss(yt, cal(pt,pw), labels=range(len(classes))):.4f} acc={(pt.argmax(1)==yt).mean():.3f} {time.time()-t0:.0f}s", flush=True)
