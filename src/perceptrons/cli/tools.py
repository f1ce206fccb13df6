"""``perceptrons inspect``, ``export``, ``plot``, ``diagnose`` and ``demo``."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from perceptrons.cli._common import (
    EXIT_USAGE,
    UserError,
    check_options,
    check_outputs,
    confusion_path,
    curve_of,
    make_estimator,
    make_featurizer,
    read,
    say,
    train_with_curve,
)
from perceptrons.cli.tag import is_tagger
from perceptrons.linear._update_rules import RULES, UpdateRule

_HISTORY_LINES = 12


def _strongest_transitions(tagger: Any, k: int) -> dict[str, list[tuple[str, str, float]]]:
    """The ``k`` largest and smallest weights of ``transitions_``, as
    ``(previous tag or "<start>", tag, weight)``."""
    weights = tagger.transitions_
    before = [*(str(c) for c in tagger.classes_), "<start>"]
    order = np.argsort(weights, axis=None, kind="stable")
    rows, columns = np.unravel_index(order, weights.shape)
    pairs = [
        (before[r], str(tagger.classes_[c]), float(weights[r, c]))
        for r, c in zip(rows, columns, strict=True)
    ]
    return {
        "positive": [p for p in reversed(pairs[-k:]) if p[2] > 0],
        "negative": [p for p in pairs[:k] if p[2] < 0],
    }


def _update_rule(estimator: Any, rule: UpdateRule) -> dict[str, Any]:
    """What ``inspect`` says of an online learner's update rule: its name, family and
    paper, its constants as trained (the defaults where not given), its covariance."""
    given = estimator.get_params().get("update_params") or {}
    constants = {name: float(given.get(name, c.default)) for name, c in rule.constants.items()}
    covariance = estimator.get_params().get("covariance") if rule.covariance else None
    return {
        "name": rule.name,
        "summary": rule.summary,
        "cite": rule.cite,
        "family": rule.family,
        "constants": constants,
        "covariance": covariance,
    }


def cmd_inspect(args: argparse.Namespace) -> int:
    """A model file's algorithm, settings, classes, history and heaviest features."""
    from perceptrons.io import persist
    from perceptrons.io.prepare import split_model

    model = persist.load(args.model, core=True)  # the core: no scikit-learn imported
    meta = persist.describe(args.model)
    featurizer, estimator = split_model(model)
    tagger = is_tagger(estimator)
    coef = estimator.__dict__.get("coef_")
    sparse = sp.issparse(coef)
    # What the model's state says (a tagger's coef_ is sparse by design, not sparsified).
    sparsified = bool(meta.get("state", {}).get("sparsified", False))
    result = {
        "model": args.model,
        "algorithm": type(estimator).__name__,
        "library_version": meta.get("library_version"),
        "created": meta.get("created"),
        "hyperparameters": estimator.get_params(),
        "classes": [str(c) for c in estimator.classes_],
        "features": int(estimator.n_features_in_),
        "featurizer": featurizer.get_params() if featurizer is not None else None,
        "history": getattr(estimator, "history_", []),
        "resumable": meta.get("resumable", True),
        "stored_sparse": meta.get("sparse_arrays", {}),
        "sparsified": sparsified,
        "nonzero_weights": int(coef.nnz if sparse else np.count_nonzero(coef))
        if coef is not None
        else None,
        "top_features": None if tagger else _named_top_features(model, featurizer, args),
    }
    if coef is not None:
        result["nonzero_fraction"] = result["nonzero_weights"] / max(
            coef.shape[0] * coef.shape[1], 1
        )
    # The online learners' history records the nonzero weights after every epoch.
    per_epoch = [r["n_nonzero"] for r in result["history"] if "n_nonzero" in r]
    if per_epoch:
        result["nonzero_weights_per_epoch"] = per_epoch
    update = result["hyperparameters"].get("update")
    if isinstance(update, str) and update in RULES:
        result["update_rule"] = _update_rule(estimator, RULES[update])
    if tagger:
        # A tagger's features are fingerprints without names: show its templates and
        # its strongest tag transitions instead.
        result["templates"] = list(estimator.featurizer_.templates_)
        result["transitions"] = _strongest_transitions(estimator, args.top)
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    print(f"{args.model}: {result['algorithm']} (perceptrons {result['library_version']})")
    print(
        "hyperparameters: " + ", ".join(f"{k}={v!r}" for k, v in result["hyperparameters"].items())
    )
    if "update_rule" in result:
        rule = result["update_rule"]
        constants = ", ".join(f"{k}={v:g}" for k, v in rule["constants"].items())
        print(
            f"update rule: {rule['name']}, {rule['summary']} ({rule['cite']}; {rule['family']}"
            + (f"; {constants}" if constants else "")
            + (f"; {rule['covariance']} covariance" if rule["covariance"] else "")
            + ")"
        )
    print(f"classes ({len(result['classes'])}): {', '.join(result['classes'])}")
    print(f"features: {result['features']:,}", end="")
    if featurizer is not None:
        settings = featurizer.get_params()
        print(" from text: " + ", ".join(f"{k}={v!r}" for k, v in settings.items()))
    else:
        print()
    stored = ", ".join(
        f"{name} ({nnz:,} nonzeros)" for name, nnz in result["stored_sparse"].items()
    )
    print("stored sparse: " + (stored or "none (every array dense)"))
    if coef is not None:
        form = "sparse (sparsified)" if sparsified else "sparse" if sparse else "dense"
        total = coef.shape[0] * coef.shape[1]
        print(
            f"weights in memory: {form}, {result['nonzero_weights']:,} of {total:,} nonzero "
            f"({result['nonzero_fraction']:.2%})"
        )
    if not hasattr(estimator, "partial_fit"):
        resumable = "not applicable (trained on all the data at once: fit starts afresh)"
    elif result["resumable"]:
        resumable = "yes (partial_fit continues exactly)"
    else:
        resumable = (
            "no (saved with resumable=False or pruned: it predicts; training needs a new fit)"
        )
    print("resumable: " + resumable)
    history = result["history"]
    print("training history:" + ("" if history else " none (trained by counting)"))
    # A batch solver's history has one record per iteration, hundreds of them.
    shown = history if len(history) <= _HISTORY_LINES else [*history[:2], None, *history[-6:]]
    for record in shown:
        if record is None:
            print(f"  ... {len(history) - 8} more ...")
        else:
            print("  " + ", ".join(f"{k} {v}" for k, v in record.items()))
    if tagger:
        print(f"templates ({len(result['templates'])}): {', '.join(result['templates'])}")
        print("strongest transitions (previous tag -> tag):")
        for sign in ("positive", "negative"):
            pairs = result["transitions"][sign]
            print(
                f"  {'+' if sign == 'positive' else '-'} "
                + ", ".join(f"{before} -> {after} ({w:+.3g})" for before, after, w in pairs)
            )
        return 0
    if result["top_features"] is None:
        print(f"top features: none (a {estimator.kernel!r} kernel has no weights per feature)")
        return 0
    for entry in result["top_features"]:
        print(f"class {entry['class']}:")
        print("  + " + ", ".join(f"{n} ({w:+.3g})" for n, w in entry["positive"]))
        print("  - " + ", ".join(f"{n} ({w:+.3g})" for n, w in entry["negative"]))
    if _unnamed(featurizer) and not args.names_from:
        print(
            "(hashed features are shown as #column: the model keeps no names; "
            "--names-from DATA recovers them from text data, or train with --hashed-names)"
        )
    return 0


def _unnamed(featurizer: Any) -> bool:
    """Whether the featurizer hashes without the names of its columns."""
    return featurizer is not None and featurizer._hashing and featurizer._hashed_names is None


def _named_top_features(model: Any, featurizer: Any, args: argparse.Namespace) -> Any:
    """:func:`~perceptrons.features.top_features`, the hashed columns of a model without
    names named from ``--names-from`` (``#column`` for those its terms do not reach)."""
    from perceptrons.inspection import top_features

    if not args.names_from:
        return top_features(model, args.top)
    if featurizer is None or not featurizer._hashing:
        raise UserError("--names-from names hashed text features; this model has none", EXIT_USAGE)
    texts = None
    if _unnamed(featurizer):  # else the model's own names
        from perceptrons.io.formats import read_data

        texts = read_data(args.names_from, labels=None).texts
        if texts is None:
            raise UserError(f"{args.names_from}: --names-from needs a text data file", EXIT_USAGE)
    return top_features(model, args.top, names_from=texts)


def cmd_export(args: argparse.Namespace) -> int:
    """A model file as an ONNX graph (:func:`perceptrons.io.onnx.to_onnx`), checked
    (unless ``--no-check``) and written atomically: a graph that fails the check is
    not written."""
    from perceptrons.io import onnx as onnx_export
    from perceptrons.io import persist
    from perceptrons.io.files import write_atomically
    from perceptrons.io.prepare import split_model

    check_outputs(args, [args.output])
    # The learner core (no scikit-learn imported), sparse where the model allows it: the
    # graph's dense weights are sized (and refused past ONNX's limit) before they are
    # formed, and the training state is not needed.
    model = persist.load(args.model, sparse=True, core=True)
    featurizer, estimator = split_model(model)
    if featurizer is not None and not args.classifier_only:
        raise UserError(
            f"{args.model}: a text model, whose featurization (tokenizer, feature hashing) "
            "has no ONNX operators; pass --classifier-only to export its classifier, which "
            "takes the feature vectors perceptrons makes from the text",
            EXIT_USAGE,
        )
    dtype = np.float32 if args.dtype == "float32" else np.float64
    try:
        graph = onnx_export.to_onnx(
            estimator, dtype=dtype, target_opset=args.opset, check=not args.no_check
        )
    except MemoryError as error:  # refused by the memory budget: the data's, not usage
        raise UserError(f"{args.model}: {error}") from error
    except ValueError as error:
        raise UserError(f"{args.model}: {error}", EXIT_USAGE) from error
    except ImportError as error:  # the onnx extra is not installed
        raise UserError(f"export: {error}", EXIT_USAGE) from error
    data = graph.SerializeToString()
    write_atomically(args.output, lambda handle: handle.write(data))
    outputs = ", ".join(output.name for output in graph.graph.output)
    say(
        args,
        f"{args.output}: {type(estimator).__name__}, input X of {estimator.n_features_in_} "
        f"{args.dtype} features, outputs {outputs} ({len(data):,} bytes"
        + (", unchecked)" if args.no_check else ", checked)"),
    )
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    """Learning curves of several algorithms (by default the three perceptrons), and a
    confusion matrix: the averaged perceptron's, else the first algorithm's."""
    from sklearn.metrics import confusion_matrix

    from perceptrons import plots
    from perceptrons.io.prepare import training_features

    check_options(args, args.algorithms, exempt=("seed",))  # --seed also splits the data
    confusion = args.confusion or confusion_path(args.output)
    check_outputs(args, [], plots=[args.output, confusion])
    plots.require_matplotlib()  # fail early, before training, when matplotlib is missing
    train = read(args, args.data, labels=True)
    dev = read(args, args.dev, labels=True) if args.dev else None
    if dev is None:
        train, dev = _hold_out(train, 0.2, args.seed)
    featurizer = make_featurizer(args, train.format) if train.texts is not None else None
    X, X_dev = training_features(train, dev, featurizer=featurizer)
    y, y_dev = train.y, dev.y
    curves, models = {}, {}
    for name in args.algorithms:
        estimator = models[name] = make_estimator(args, name, labels=y, text=featurizer is not None)
        records = train_with_curve(args, estimator, X, y, X_dev, y_dev, desc=name)
        curves[name] = curve_of(records)
        say(args, f"{name}: final dev error {curves[name]['dev_error'][-1]:.4f}")
    where = "held-out 20%" if not args.dev else args.dev
    written = [plots.learning_curves(curves, args.output, title=f"{args.data} (dev: {where})")]
    shown = "averaged" if "averaged" in models else args.algorithms[0]
    estimator = models[shown]
    matrix = confusion_matrix(y_dev, estimator.predict(X_dev), labels=estimator.classes_)
    title = "averaged perceptron" if shown == "averaged" else shown
    written.append(plots.confusion_matrix(matrix, estimator.classes_, confusion, title))
    say(args, "plots written to " + ", ".join(str(p) for p in written))
    return 0


def _hold_out(data, test_size: float, seed: int):
    """A stratified split of a data set in two (what ``train_test_split`` gives)."""
    from sklearn.model_selection import train_test_split

    rows = train_test_split(
        np.arange(data.n_samples), test_size=test_size, random_state=seed, stratify=data.y
    )
    parts = []
    for index in rows:
        if data.texts is not None:
            parts.append(replace(data, texts=[data.texts[i] for i in index], y=data.y[index]))
        else:
            parts.append(replace(data, X=data.X[index], y=data.y[index]))
    return tuple(parts)


def cmd_diagnose(args: argparse.Namespace) -> int:
    """The perceptron's mistake bound on a data set, against its real mistakes."""
    from perceptrons.diagnostics import mistake_bound
    from perceptrons.io.prepare import training_features

    dataset = read(args, args.data, labels=True)
    featurizer = make_featurizer(args, dataset.format) if dataset.texts is not None else None
    X, _ = training_features(dataset, featurizer=featurizer)
    labels = np.unique(dataset.y)
    if args.positive is not None:
        known = {str(label): label for label in labels}
        if args.positive not in known:
            raise UserError(f"--positive {args.positive}: no such label in {args.data}")
        y = np.where(dataset.y == known[args.positive], args.positive, "rest")
    elif len(labels) > 2:
        raise UserError(
            f"{args.data} has {len(labels)} classes; the mistake bound is for two: pass "
            "--positive LABEL to diagnose one class against the rest",
            EXIT_USAGE,
        )
    else:
        y = dataset.y
    report = mistake_bound(
        X, y, fit_intercept=not args.no_intercept, C=args.C, max_epochs=args.epochs
    )
    print(report.to_json() if args.json else report.to_text())
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The bundled comparison: accuracy table and learning-curve PNG."""
    from perceptrons import demo

    check_outputs(args, [], plots=[Path(args.output_dir) / "perceptrons-demo.png"])
    return demo.run(output_dir=Path(args.output_dir), epochs=args.epochs, say=print)
