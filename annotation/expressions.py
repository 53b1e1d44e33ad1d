"""Small safe expressions for derived fields, acceptance rules and required-if conditions.

An expression is parsed with :mod:`ast` and walked node by node against a whitelist; nothing is
ever passed to ``eval``. Supported: numbers, strings, ``True/False/None``, names of answers,
``+ - * / // %``, comparisons (chained too), ``and/or/not``, ``x if c else y``, ``in`` with a
literal tuple/list, and the functions below. A name whose answer is missing (``None``) makes
arithmetic return ``None`` rather than fail, so a derived field of an incomplete answer is
``None``.

Sizes are capped (issue 12: ``"x" * 1000000000`` exhausted a worker's memory): a text constant
holds at most :data:`MAX_TEXT` characters and a number at most :data:`MAX_NUMBER` in size;
repeating a text or list constant with ``*`` and formatting text with ``%`` are refused when the
expression is compiled, and any text or list an evaluation would make longer than
:data:`MAX_SEQUENCE` makes the expression ``None`` instead.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from collections.abc import Set as AbstractSet
from functools import lru_cache
from typing import Any

from core.values import text_problem


class ExpressionError(ValueError):
    """An expression is not in the allowed language or names something unknown."""


MAX_TEXT = 1_000  # characters of a text constant
MAX_NUMBER = 10**18  # magnitude of a number constant
MAX_SEQUENCE = 10_000  # characters / elements of a text or list an evaluation makes


def _mean(values: Iterable[Any]) -> float | None:
    vals = [v for v in values if v is not None]
    return sum(vals) / len(vals) if vals else None


def _count(values: Iterable[Any], target: Any) -> int:
    return sum(1 for v in values if v == target)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "mean": _mean,
    "sum": lambda values: sum(v for v in values if v is not None),
    "min": min,
    "max": max,
    "len": len,
    "count": _count,
    "all": all,
    "any": any,
    "abs": abs,
    "round": round,
}

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


class _Missing(Exception):
    """Raised inside evaluation when an operand is None; the whole expression is None."""


class Expression:
    """A compiled expression. ``names`` is the set of answer names it reads."""

    def __init__(self, source: str, allowed_names: Iterable[str] | None = None) -> None:
        self.source = source
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError as exc:
            raise ExpressionError(f"cannot parse expression {source!r}: {exc.msg}") from None
        self.names: set[str] = set()
        self._check(tree.body)
        if allowed_names is not None:
            unknown = self.names - set(allowed_names)
            if unknown:
                raise ExpressionError(f"expression {source!r} refers to unknown name(s): {', '.join(sorted(unknown))}")
        self._tree = tree.body

    def _check(self, node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            v = node.value
            if not isinstance(v, (int, float, str, bool, type(None))):
                raise ExpressionError(f"constant of type {type(v).__name__} not allowed")
            if isinstance(v, str) and len(v) > MAX_TEXT:
                raise ExpressionError(f"a text constant may hold at most {MAX_TEXT} characters")
            # a derived field's text is stored with the answer: "\udc00" in the source would put
            # a lone surrogate there (issue 37), a NUL one that PostgreSQL refuses
            problem = text_problem(v, what="a text constant") if isinstance(v, str) else None
            if problem:
                raise ExpressionError(problem)
            if isinstance(v, (int, float)) and not isinstance(v, bool) and abs(v) > MAX_NUMBER:
                raise ExpressionError(f"a number constant may be at most {MAX_NUMBER:.0e} in size")
        elif isinstance(node, ast.Name):
            if node.id not in FUNCTIONS:
                self.names.add(node.id)
        elif isinstance(node, ast.BinOp):
            if type(node.op) not in _BINOPS:
                raise ExpressionError(f"operator {type(node.op).__name__} not allowed")
            if isinstance(node.op, ast.Mult) and (_sequence_literal(node.left) or _sequence_literal(node.right)):
                raise ExpressionError("repeating a text or a list with * is not allowed")
            if isinstance(node.op, ast.Mod) and _sequence_literal(node.left):
                raise ExpressionError("formatting text with % is not allowed")
            self._check(node.left)
            self._check(node.right)
        elif isinstance(node, ast.UnaryOp):
            if not isinstance(node.op, (ast.Not, ast.USub, ast.UAdd)):
                raise ExpressionError(f"operator {type(node.op).__name__} not allowed")
            self._check(node.operand)
        elif isinstance(node, ast.BoolOp):
            for v in node.values:
                self._check(v)
        elif isinstance(node, ast.Compare):
            for op in node.ops:
                if type(op) not in _CMPOPS:
                    raise ExpressionError(f"comparison {type(op).__name__} not allowed")
            self._check(node.left)
            for c in node.comparators:
                self._check(c)
        elif isinstance(node, ast.IfExp):
            self._check(node.test)
            self._check(node.body)
            self._check(node.orelse)
        elif isinstance(node, (ast.Tuple, ast.List)):
            for elt in node.elts:
                self._check(elt)
        elif isinstance(node, ast.Call):
            if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                raise ExpressionError("only the functions " + ", ".join(sorted(FUNCTIONS)) + " may be called")
            if node.keywords:
                raise ExpressionError("keyword arguments are not allowed")
            for a in node.args:
                self._check(a)
        else:
            raise ExpressionError(f"{type(node).__name__} is not allowed in an expression")

    def option_reads(self, name: str) -> frozenset[str] | None:
        """The options of the list answer ``name`` (a checklist) this expression reads, when it
        reads ``name`` only as ``count(name, '<option>')``; None when it reads the list any other
        way (``len(name)``, ``name == [...]``), i.e. as a whole. Lets a reader tell whether a
        derived field depends only on some flags (``judges.decides``)."""
        options: set[str] = set()
        whole = False

        def walk(node: ast.AST) -> None:
            nonlocal whole
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "count"
                and len(node.args) == 2
                and isinstance(node.args[0], ast.Name)
                and node.args[0].id == name
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
            ):
                options.add(node.args[1].value)
                return
            if isinstance(node, ast.Name) and node.id == name:
                whole = True
                return
            for child in ast.iter_child_nodes(node):
                walk(child)

        walk(self._tree)
        return None if whole else frozenset(options)

    def reads_undecided(self, undecided: AbstractSet[str], partial: Mapping[str, AbstractSet[str]]) -> bool:
        """Whether this expression reads a name in ``undecided``, or a list in ``partial``
        (checklist -> the flags decided) other than through ``count`` of decided flags: whether
        its value, for a judge deciding only part of a rubric, is not that judge's decision."""
        if self.names & undecided:
            return True
        for name in self.names & partial.keys():
            read = self.option_reads(name)
            if read is None or not read <= partial[name]:
                return True
        return False

    def evaluate(self, context: Mapping[str, Any]) -> Any:
        try:
            return self._eval(self._tree, context)
        except _Missing:
            return None
        except (TypeError, ValueError, ZeroDivisionError):
            return None

    def _eval(self, node: ast.AST, ctx: Mapping[str, Any]) -> Any:
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.Name):
            if node.id in FUNCTIONS:
                return FUNCTIONS[node.id]
            return ctx.get(node.id)
        if isinstance(node, ast.BinOp):
            left, right = self._eval(node.left, ctx), self._eval(node.right, ctx)
            if left is None or right is None:
                raise _Missing
            _check_size(node.op, left, right)
            return _BINOPS[type(node.op)](left, right)
        if isinstance(node, ast.UnaryOp):
            val = self._eval(node.operand, ctx)
            if isinstance(node.op, ast.Not):
                return not val
            if val is None:
                raise _Missing
            return -val if isinstance(node.op, ast.USub) else +val
        if isinstance(node, ast.BoolOp):
            if isinstance(node.op, ast.And):
                result: Any = True
                for v in node.values:
                    result = self._eval(v, ctx)
                    if not result:
                        return result
                return result
            result = False
            for v in node.values:
                result = self._eval(v, ctx)
                if result:
                    return result
            return result
        if isinstance(node, ast.Compare):
            left = self._eval(node.left, ctx)
            for op, comp in zip(node.ops, node.comparators, strict=True):
                right = self._eval(comp, ctx)
                if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)) and (left is None or right is None):
                    raise _Missing
                if not _CMPOPS[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.IfExp):
            return self._eval(node.body if self._eval(node.test, ctx) else node.orelse, ctx)
        if isinstance(node, ast.Tuple):
            return tuple(self._eval(e, ctx) for e in node.elts)
        if isinstance(node, ast.List):
            return [self._eval(e, ctx) for e in node.elts]
        if isinstance(node, ast.Call):
            func = FUNCTIONS[node.func.id]  # type: ignore[union-attr]
            args = [self._eval(a, ctx) for a in node.args]
            if any(a is None for a in args):
                raise _Missing
            return func(*args)
        raise ExpressionError(f"{type(node).__name__} is not allowed")  # pragma: no cover - _check guards


def _sequence_literal(node: ast.AST) -> bool:
    return isinstance(node, (ast.List, ast.Tuple)) or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    """ValueError (the expression is then None) before an operation on answers would make a text
    or list longer than MAX_SEQUENCE, or format text."""
    seqs = (str, list, tuple)
    if isinstance(op, ast.Mult):
        seq, n = (left, right) if isinstance(left, seqs) else (right, left)
        if isinstance(seq, seqs) and isinstance(n, int) and len(seq) * max(n, 0) > MAX_SEQUENCE:
            raise ValueError("the result would be too large")
    elif isinstance(op, ast.Add) and isinstance(left, seqs) and isinstance(right, seqs):
        if len(left) + len(right) > MAX_SEQUENCE:
            raise ValueError("the result would be too large")
    elif isinstance(op, ast.Mod) and isinstance(left, str):
        raise ValueError("formatting text with % is not allowed")


@lru_cache(maxsize=512)
def compile_expression(source: str) -> Expression:
    return Expression(source)
