"""The table of update rules, generated when the site is built from the one table the
library checks them against (:data:`perceptrons.linear._update_rules.RULES`): their names,
papers, constants with their defaults and intervals, and what each supports are never
hand-copied.

``.. update-rules::``
    One row per rule of ``RULES``, in the table's order. Option ``:families: confidence
    second-order`` keeps the rules of those families only, ``:exclude-families:
    perceptron romma`` leaves those out (a family added later is then shown).
"""

from __future__ import annotations

import math
from typing import ClassVar

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.application import Sphinx
from sphinx.util.docutils import SphinxDirective


def _bounds(constant) -> str:
    """The interval a constant must lie in, as inequalities (``> 0``, ``in [0, 1)``)."""
    low, high = math.isfinite(constant.low), math.isfinite(constant.high)
    if low and high:
        return f"in {constant.interval}"
    if low:
        return f"{'>' if constant.low_open else '≥'} {constant.low:g}"
    if high:
        return f"{'<' if constant.high_open else '≤'} {constant.high:g}"
    return "any finite number"


def _constants(rule) -> str:
    """The rule's constants as ``name`` = default (bounds): what it does."""
    if not rule.constants:
        return "none"
    return "; ".join(
        f"``{name}`` = {constant.default:g} ({_bounds(constant)})"
        + (f": {constant.doc}" if constant.doc else "")
        for name, constant in rule.constants.items()
    )


def _supports(rule) -> str:
    """What the rule takes beyond the plain fit."""
    parts = []
    if rule.uses_C:
        parts.append("the estimator's ``C``")
    parts.append("full covariance" if rule.covariance else "no full covariance")
    parts.append("weights" if rule.weighted else "no weights")
    parts.append("mixing" if rule.mixing is None else "no mixing")
    if rule.delta_trick:
        parts.append("the Δ trick")
    return ", ".join(parts)


class UpdateRules(SphinxDirective):
    has_content = False
    option_spec: ClassVar[dict] = {
        "families": directives.unchanged,
        "exclude-families": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        from perceptrons.linear._update_rules import RULES

        wanted = self.options.get("families")
        families = set(wanted.split()) if wanted else None
        excluded = set(self.options.get("exclude-families", "").split())
        rules = [
            r
            for r in RULES.values()
            if (families is None or r.family in families) and r.family not in excluded
        ]
        if not rules:
            raise self.error("update-rules: no rule is left to show")
        lines = [
            ".. list-table::",
            "   :header-rows: 1",
            "   :widths: 14 24 34 28",
            "",
            "   * - ``update=``",
            "     - rule (paper)",
            "     - constants (``update_params``)",
            "     - takes",
        ]
        for rule in rules:
            lines += [
                f'   * - ``"{rule.name}"``',
                f"     - {rule.summary} ({rule.cite})",
                f"     - {_constants(rule)}",
                f"     - {_supports(rule)}",
            ]
        container = nodes.container()
        self.state.nested_parse(StringList(lines, source="update-rules"), 0, container)
        return container.children


def setup(app: Sphinx) -> dict[str, object]:
    app.add_directive("update-rules", UpdateRules)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
