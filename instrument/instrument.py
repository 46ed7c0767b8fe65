# Static instrumenter: inserts the seven progress prints after the operations they announce,
# changing nothing else (lines are inserted; no existing line is touched).
#   python3 instrument.py < requests: one JSON request a line, {"op": "instrument", "program": ...}
#   or {"op": "verify", "original": ..., "instrumented": ...}; one JSON answer a line.
import ast
import json
import re
import os
import sys

MARKERS = ["imported packages", "loaded data", "defined model", "training loss:",
           "trained model", "testing loss:", "predicted test labels"]
LOAD_FUNCS = {"read_csv", "read_json", "read_parquet", "read_table", "loadtxt", "genfromtxt", "load"}
MODEL_RE = re.compile(r"(Classifier|Regressor|Regression|SVC|SVR|Pipeline|Analysis|NB|Boost\w*|"
                      r"KNeighbors\w*|make_pipeline|Ridge|Lasso|ElasticNet|CV)$")
TRANSFORMER_RE = re.compile(r"scaler|pca|encoder|vectori[sz]er|imputer|^le$|transformer|selector")
LOSS_FUNCS = {"log_loss", "mean_squared_error", "mean_absolute_error", "accuracy_score",
              "roc_auc_score", "cohen_kappa_score", "f1_score", "r2_score", "mean_squared_log_error"}


def call_names(node):
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name):
                yield f.id, n
            elif isinstance(f, ast.Attribute):
                yield f.attr, n


def names_in(node):
    return {n.id.lower() for n in ast.walk(node) if isinstance(n, ast.Name)}


def targets(stmt):
    if isinstance(stmt, ast.Assign):
        return [t.id for t in stmt.targets if isinstance(t, ast.Name)]
    if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) and isinstance(stmt.target, ast.Name):
        return [stmt.target.id]
    return []


def classify(stmt):
    """Returns [(marker, print-argument-or-None)] for one simple statement."""
    out = []
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return [("imported packages", None)]
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Expr)):
        return out
    calls = list(call_names(stmt))
    names = {n for n, _ in calls}
    if names & LOAD_FUNCS and targets(stmt):
        out.append(("loaded data", None))
    if targets(stmt) and any(MODEL_RE.search(n) and n[0].isupper() or n == "make_pipeline" for n in names):
        out.append(("defined model", None))
    fits = [c for n, c in calls if n == "fit" and isinstance(c.func, ast.Attribute)]
    if any(not TRANSFORMER_RE.search(ast.unparse(c.func.value).lower()) for c in fits):
        out.append(("trained model", None))
    loss = [c for n, c in calls if n in LOSS_FUNCS]
    tgt = targets(stmt)
    if loss and len(tgt) == 1:
        who = tgt[0].lower()
        args = names_in(loss[0])
        if "train" in who or "tr" in who.split("_"):
            out.append(("training loss:", tgt[0]))
        elif any(k in who for k in ("val", "valid", "test", "cv", "holdout")):
            out.append(("testing loss:", tgt[0]))
        elif any("train" in a or a.endswith("_tr") for a in args):
            out.append(("training loss:", tgt[0]))
        elif any(k in a for a in args for k in ("val", "test", "hold")):
            out.append(("testing loss:", tgt[0]))
    if names & {"predict", "predict_proba"} and any("test" in a for a in names_in(stmt)):
        out.append(("predicted test labels", None))
    return out


def blocks(tree):
    """Yields every statement list (module body, function bodies, loop bodies...)."""
    for node in ast.walk(tree):
        for field in ("body", "orelse", "finalbody"):
            seq = getattr(node, field, None)
            if isinstance(seq, list) and seq and isinstance(seq[0], ast.stmt):
                yield seq
        for h in getattr(node, "handlers", []) or []:
            yield h.body


def instrument(src):
    tree = ast.parse(src)
    lines = src.splitlines(keepends=True)
    # marker -> (block, statement, arg) for the LAST matching statement of the FIRST block in
    # which the marker's operation appears (in source order), except loss markers: every one.
    chosen = {}
    inserts = []  # (end_line, indent, text)
    first_block = {}
    for block in sorted(blocks(tree), key=lambda b: b[0].lineno):
        for stmt in block:
            for marker, arg in classify(stmt):
                if marker.endswith("loss:"):
                    inserts.append((stmt, marker, arg))
                    continue
                if marker not in first_block:
                    first_block[marker] = id(block)
                if first_block[marker] == id(block):
                    chosen[marker] = (stmt, marker, arg)
    inserts += list(chosen.values())
    out_inserts = []
    for stmt, marker, arg in inserts:
        start = lines[stmt.lineno - 1]
        indent = start[: len(start) - len(start.lstrip())]
        if len(indent) != stmt.col_offset:
            continue  # a one-line compound statement: no safe line to insert after
        end = stmt.end_lineno
        text = f"print({marker!r}, flush=True)" if arg is None else f"print({marker!r}, {arg}, flush=True)"
        out_inserts.append((end, indent, text, marker))
    # Insert bottom-up so earlier line numbers stay valid; stable for equal lines.
    for end, indent, text, _ in sorted(out_inserts, key=lambda x: x[0], reverse=True):
        prev = lines[end - 1]
        if not prev.endswith("\n"):
            lines[end - 1] = prev + "\n"
        lines.insert(end, indent + text + "\n")
    inserted = [m for _, _, _, m in sorted(out_inserts, key=lambda x: x[0])]
    return "".join(lines), inserted


def is_marker_print(stmt):
    """A print of a marker, optionally followed by plain values (a name such as the loss,
    an attribute, a subscript or a constant) and flush=...: nothing that could compute or
    change anything, so removing it cannot change the program."""
    if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
        return False
    c = stmt.value
    if not (isinstance(c.func, ast.Name) and c.func.id == "print" and c.args
            and isinstance(c.args[0], ast.Constant) and c.args[0].value in MARKERS):
        return False
    plain = (ast.Name, ast.Attribute, ast.Subscript, ast.Constant)
    if not all(isinstance(a, plain) for a in c.args[1:]):
        return False
    for a in c.args[1:]:
        if any(isinstance(n, ast.Call) for n in ast.walk(a)):
            return False
    return all(k.arg == "flush" and isinstance(k.value, ast.Constant) for k in c.keywords)


class Strip(ast.NodeTransformer):
    def generic_visit(self, node):
        super().generic_visit(node)
        for field in ("body", "orelse", "finalbody"):
            seq = getattr(node, field, None)
            if isinstance(seq, list) and seq and isinstance(seq[0], ast.stmt):
                kept = [s for s in seq if not is_marker_print(s)]
                setattr(node, field, kept or [ast.Pass()])
        return node


def count_markers(tree):
    return sum(1 for n in ast.walk(tree) if isinstance(n, ast.stmt) and is_marker_print(n))


def verify(orig_src, instr_src):
    orig, instr = ast.parse(orig_src), ast.parse(instr_src)
    n_orig = count_markers(orig)
    if count_markers(instr) < n_orig:
        return "the instrumented program lost marker prints the original had"
    a = ast.dump(Strip().visit(orig))
    b = ast.dump(Strip().visit(instr))
    if a != b:
        return "removing the inserted prints does not give back the original program"
    return None


def handle(req):
    if req.get("op") == "instrument":
        src = req["program"]
        try:
            out, inserted = instrument(src)
        except SyntaxError as e:
            # A program that does not parse cannot be instrumented; it runs as written and fails.
            return {"program": src, "inserted": [], "note": f"not instrumented: syntax error line {e.lineno}"}
        return {"program": out, "inserted": inserted}
    if req.get("op") == "verify":
        try:
            why = verify(req["original"], req["instrumented"])
        except SyntaxError as e:
            why = f"syntax error line {e.lineno}"
        return {"ok": why is None, "reason": why or ""}
    return {"error": f"unknown op {req.get('op')!r}"}


def main():
    # One JSON request per line on stdin, one JSON answer per line on stdout: the worker keeps
    # this process for its lifetime, so no sample pays for a Python start-up.
    for line in sys.stdin:
        try:
            answer = handle(json.loads(line))
        except RecursionError:
            answer = {"error": "the program is nested too deeply to analyse"}
        except Exception as e:  # never let one program stop the server
            answer = {"error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    try:
        main()
    except (KeyboardInterrupt, BrokenPipeError):
        # Ctrl-C in the terminal, or the worker going away: the Go side reports it; a
        # traceback here would only bury that message.
        os._exit(130)
