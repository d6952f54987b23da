"""GitHub Actions' expression language, the subset the library repo's workflows use, for the
workflow rehearsal (`workflow_rehearsal.py`).

No well-kept Python implementation exists on PyPI (searched 2026-12-01: only tree-sitter
grammars, which parse but do not evaluate; GitHub's own evaluator is the npm package
`@actions/expressions`, TypeScript). So this one follows GitHub's documentation, page
"Evaluate expressions in workflows and actions"
(https://docs.github.com/en/actions/reference/workflows-and-actions/expressions, source
github/docs `content/actions/reference/workflows-and-actions/expressions.md` at 0696ffeb):

- literals: `true`, `false`, `null`, numbers in JSON form (and `0x` hex), `'strings'` with `''`
  for a quote; a double-quoted string is an error;
- operators, loosest first: `||`, `&&`, `== !=`, `< <= > >=`, `!`, then `.prop`, `[index]`,
  `.*` / `[*]` object filters and calls; `&&` and `||` return an operand, not a boolean;
- loose equality: operands of different types are both cast to numbers (null 0, booleans 1/0,
  strings parsed as JSON numbers, '' 0, otherwise NaN; arrays and objects NaN); strings compare
  ignoring case; arrays and objects are equal only to themselves; NaN in `< > <= >=` is false;
- falsy: `false`, `0`, `-0`, `''`, `null` (and NaN); everything else is truthy;
- casts to string: null '', booleans 'true'/'false', numbers in decimal form;
- functions: contains, startsWith, endsWith (case-insensitive), format (`{N}`, `{{ }}`), join,
  toJSON (pretty-printed), fromJSON, case, and the status functions success, failure, always,
  cancelled (only where the caller allows them);
- context names and property names are case-insensitive (GitHub's contexts are
  case-insensitive dictionaries: `github.EVENT_NAME` works).

Checked against GitHub's own evaluator, `@actions/expressions` 0.3.61 (npm), on 92
expressions of the kinds above and of our workflows (2026-12-01): the same value for every one,
the same refusal for the 5 that are errors (only the messages differ). That comparison is not
part of the tests, which install nothing from npm but GitHub's OpenAPI description.

Which contexts an expression may name depends on where it stands (the "Context availability"
table of https://docs.github.com/en/actions/reference/workflows-and-actions/contexts); the
caller passes the allowed names and a name outside them is an error, as GitHub refuses such a
workflow before it runs. What this module does not implement (hashFiles, comparisons of
arrays or objects by anything but identity, the exponent form of very large numbers) raises
`ExpressionError` instead of guessing.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: An evaluated value: None, bool, float, str, list or dict (JSON's kinds; numbers are floats).
Value = Any

#: The status functions an `if:` may call; the caller answers them.
STATUS_FUNCTIONS = frozenset({"success", "failure", "always", "cancelled"})


class ExpressionError(Exception):
    """An expression GitHub would refuse (syntax, an unknown or unavailable name, a bad call),
    or one this subset does not implement."""


class Filtered(list[Value]):
    """The array an object filter (`x.*`) makes; a property or index applied to it applies to
    each element (`labels.*.name`)."""


@dataclass(frozen=True)
class _Token:
    kind: str  # "num", "str", "ident", "op", "end"
    text: str
    value: Value = None


_TOKEN = re.compile(
    r"""\s*(?:
      (?P<num>0x[0-9a-fA-F]+|-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?)
    | (?P<str>'(?:[^']|'')*')
    | (?P<ident>[A-Za-z_][A-Za-z0-9_-]*)
    | (?P<op>\|\||&&|==|!=|<=|>=|[<>!().,\[\]*])
    )""",
    re.VERBOSE,
)


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None:
            rest = text[pos:].lstrip()
            why = "double-quoted strings are not allowed" if rest.startswith('"') else "syntax"
            raise ExpressionError(f"unexpected {rest[:20]!r} in {text!r} ({why})")
        pos = m.end()
        if m.group("num") is not None:
            raw = m.group("num")
            number = float(int(raw, 16)) if raw.lower().startswith("0x") else float(raw)
            out.append(_Token("num", raw, number))
        elif m.group("str") is not None:
            raw = m.group("str")
            out.append(_Token("str", raw, raw[1:-1].replace("''", "'")))
        elif m.group("ident") is not None:
            out.append(_Token("ident", m.group("ident")))
        else:
            out.append(_Token("op", m.group("op")))
    out.append(_Token("end", ""))
    return out


# AST nodes are tuples: ("lit", v) ("ctx", name) ("prop", obj, name) ("index", obj, expr)
# ("star", obj) ("call", name, [args]) ("not", x) ("bin", op, left, right)
Node = tuple[Any, ...]


class _Parser:
    _LEVELS: tuple[tuple[str, ...], ...] = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="))

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = _tokens(text)
        self.i = 0

    def peek(self) -> _Token:
        return self.toks[self.i]

    def take(self, op: str | None = None) -> _Token:
        tok = self.toks[self.i]
        if op is not None and not (tok.kind == "op" and tok.text == op):
            raise ExpressionError(f"expected {op!r} at {tok.text or 'the end'!r} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.binary(0)
        if self.peek().kind != "end":
            raise ExpressionError(f"unexpected {self.peek().text!r} in {self.text!r}")
        return node

    def binary(self, level: int) -> Node:
        if level == len(self._LEVELS):
            return self.unary()
        node = self.binary(level + 1)
        while self.peek().kind == "op" and self.peek().text in self._LEVELS[level]:
            op = self.take().text
            node = ("bin", op, node, self.binary(level + 1))
        return node

    def unary(self) -> Node:
        if self.peek().kind == "op" and self.peek().text == "!":
            self.take()
            return ("not", self.unary())
        return self.postfix(self.primary())

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind in ("num", "str"):
            return ("lit", tok.value)
        if tok.kind == "op" and tok.text == "(":
            node = self.binary(0)
            self.take(")")
            return node
        if tok.kind == "ident":
            word = tok.text
            if word in ("true", "false"):
                return ("lit", word == "true")
            if word == "null":
                return ("lit", None)
            if self.peek().kind == "op" and self.peek().text == "(":
                self.take("(")
                args: list[Node] = []
                if not (self.peek().kind == "op" and self.peek().text == ")"):
                    args.append(self.binary(0))
                    while self.peek().kind == "op" and self.peek().text == ",":
                        self.take(",")
                        args.append(self.binary(0))
                self.take(")")
                return ("call", word, args)
            return ("ctx", word)
        raise ExpressionError(f"unexpected {tok.text or 'end'!r} in {self.text!r}")

    def postfix(self, node: Node) -> Node:
        while self.peek().kind == "op" and self.peek().text in (".", "["):
            if self.take().text == ".":
                tok = self.take()
                if tok.kind == "op" and tok.text == "*":
                    node = ("star", node)
                elif tok.kind == "ident":
                    node = ("prop", node, tok.text)
                else:
                    raise ExpressionError(f"bad property {tok.text!r} in {self.text!r}")
            elif self.peek().kind == "op" and self.peek().text == "*":
                self.take("*")
                self.take("]")
                node = ("star", node)
            else:
                index = self.binary(0)
                self.take("]")
                node = ("index", node, index)
        return node


def parse(text: str) -> Node:
    """The syntax tree of expression `text` (without `${{ }}`).

    Raises:
        ExpressionError: a syntax GitHub refuses.
    """
    return _Parser(text).parse()


def calls(node: Node) -> set[str]:
    """Names of the functions `node` calls (lower case), to see whether an `if:` calls a
    status function."""
    found: set[str] = set()
    stack = [node]
    while stack:
        item = stack.pop()
        if item[0] == "call":
            found.add(str(item[1]).lower())
            stack.extend(item[2])
        else:
            stack.extend(part for part in item[1:] if isinstance(part, tuple))
    return found


# -- values ---------------------------------------------------------------------------------


def normalize(value: Any) -> Value:
    """A JSON-like Python value with ints turned into floats (the language has one number
    type); tuples become lists."""
    if isinstance(value, bool) or value is None or isinstance(value, str | float):
        return value
    if isinstance(value, int):
        return float(value)
    if isinstance(value, Mapping):
        return {str(k): normalize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [normalize(v) for v in value]
    raise ExpressionError(f"a context holds {type(value).__name__}, not a JSON value")


def truthy(value: Value) -> bool:
    """GitHub's coercion to boolean (falsy: false, 0, -0, NaN, '', null)."""
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    if isinstance(value, float):
        return not (value == 0 or math.isnan(value))
    if isinstance(value, str):
        return value != ""
    return True


_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def to_number(value: Value) -> float:
    """GitHub's cast to number (null 0, true 1, false 0, strings as JSON numbers with '' 0,
    otherwise NaN)."""
    if value is None:
        return 0.0
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, float):
        return value
    if isinstance(value, str):
        text = value.strip()
        if text == "":
            return 0.0
        if _JSON_NUMBER.fullmatch(text):
            return float(text)
        if re.fullmatch(r"0x[0-9a-fA-F]+", text):
            return float(int(text, 16))
        return math.nan
    return math.nan


def to_string(value: Value) -> str:
    """GitHub's cast to string (null '', booleans 'true'/'false', numbers in decimal form).

    Raises:
        ExpressionError: an array or object (GitHub does not convert them), or a number this
            subset cannot format as GitHub would (NaN, infinities, 1e15 and above).
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value) or abs(value) >= 1e15:
            raise ExpressionError(f"formatting the number {value!r} is not implemented")
        if value == int(value):
            return str(int(value))
        return format(value, ".15g")
    if isinstance(value, str):
        return value
    raise ExpressionError("an array or object cannot be turned into a string")


def _kind(value: Value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "object"


def loose_equal(a: Value, b: Value) -> bool:
    """`a == b` as GitHub compares (see the module docstring)."""
    ka, kb = _kind(a), _kind(b)
    if ka == kb:
        if ka == "string":
            return bool(a.casefold() == b.casefold())
        if ka == "object":
            return a is b
        return bool(a == b)
    return to_number(a) == to_number(b)


def _less(a: Value, b: Value) -> bool | None:
    """a < b, or None when either side is NaN (every relational comparison is then false)."""
    if _kind(a) == _kind(b) == "string":
        return bool(a.casefold() < b.casefold())
    x, y = to_number(a), to_number(b)
    if math.isnan(x) or math.isnan(y):
        return None
    return x < y


def _compare(op: str, a: Value, b: Value) -> bool:
    if op == "<":
        return _less(a, b) is True
    if op == ">":
        return _less(b, a) is True
    if op == "<=":
        lt = _less(a, b)
        return lt is not None and (lt or loose_equal(a, b))
    lt = _less(b, a)
    return lt is not None and (lt or loose_equal(a, b))


def _lookup(obj: Value, key: str) -> Value:
    if isinstance(obj, Filtered):
        out = Filtered()
        for item in obj:
            if isinstance(item, dict):
                found = _lookup(item, key)
                if found is not None:
                    out.append(found)
        return out
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        folded = key.casefold()
        for name, item in obj.items():
            if name.casefold() == folded:
                return item
    return None


def _index(obj: Value, index: Value) -> Value:
    if isinstance(obj, Filtered):
        return Filtered(x for x in (_index(item, index) for item in obj) if x is not None)
    if isinstance(obj, list):
        number = to_number(index)
        if math.isnan(number) or number != int(number) or not 0 <= number < len(obj):
            return None
        return obj[int(number)]
    if isinstance(obj, dict):
        return _lookup(obj, to_string(index))
    return None


def _star(obj: Value) -> Value:
    if isinstance(obj, Filtered):
        out = Filtered()
        for item in obj:
            if isinstance(item, list):
                out.extend(item)
            elif isinstance(item, dict):
                out.extend(item.values())
        return out
    if isinstance(obj, list):
        return Filtered(obj)
    if isinstance(obj, dict):
        return Filtered(obj.values())
    return Filtered()


def _format(template: str, args: Sequence[Value]) -> str:
    out: list[str] = []
    i = 0
    while i < len(template):
        c = template[i]
        if template.startswith("{{", i):
            out.append("{")
            i += 2
        elif template.startswith("}}", i):
            out.append("}")
            i += 2
        elif c == "{":
            end = template.find("}", i)
            digits = template[i + 1 : end] if end > 0 else ""
            if not digits.isdigit() or int(digits) >= len(args):
                raise ExpressionError(f"format: bad placeholder in {template!r}")
            out.append(to_string(args[int(digits)]))
            i = end + 1
        elif c == "}":
            raise ExpressionError(f"format: lone '}}' in {template!r}")
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _to_json(value: Value) -> str:
    def plain(v: Value) -> Any:
        if isinstance(v, float) and v == int(v) and abs(v) < 1e15:
            return int(v)
        if isinstance(v, list):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        return v

    return json.dumps(plain(value), indent=2)


def _contains(search: Value, item: Value) -> bool:
    if isinstance(search, list):
        return any(loose_equal(x, item) for x in search)
    return to_string(item).casefold() in to_string(search).casefold()


@dataclass(frozen=True)
class Scope:
    """What an expression may see: the contexts (name -> value), which of them its place in
    the workflow allows, and the answers of the status functions (None: not allowed here)."""

    contexts: Mapping[str, Value]
    allowed: frozenset[str]
    status: Callable[[str], bool] | None = None


def evaluate(text: str, scope: Scope) -> Value:
    """The value of expression `text` (without `${{ }}`).

    Raises:
        ExpressionError: see the class.
    """
    return _eval(parse(text), scope, text)


def _eval(node: Node, scope: Scope, text: str) -> Value:
    kind = node[0]
    if kind == "lit":
        return node[1]
    if kind == "ctx":
        name = str(node[1]).lower()
        if name not in scope.allowed:
            raise ExpressionError(
                f"context {name!r} is not available here (allowed: "
                f"{', '.join(sorted(scope.allowed))}) in {text!r}"
            )
        return scope.contexts.get(name)
    if kind == "prop":
        return _lookup(_eval(node[1], scope, text), node[2])
    if kind == "index":
        return _index(_eval(node[1], scope, text), _eval(node[2], scope, text))
    if kind == "star":
        return _star(_eval(node[1], scope, text))
    if kind == "not":
        return not truthy(_eval(node[1], scope, text))
    if kind == "bin":
        op = node[1]
        left = _eval(node[2], scope, text)
        if op == "&&":
            return _eval(node[3], scope, text) if truthy(left) else left
        if op == "||":
            return left if truthy(left) else _eval(node[3], scope, text)
        right = _eval(node[3], scope, text)
        if op == "==":
            return loose_equal(left, right)
        if op == "!=":
            return not loose_equal(left, right)
        return _compare(op, left, right)
    if kind == "call":
        return _call(str(node[1]), node[2], scope, text)
    raise AssertionError(node)


def _call(name: str, arg_nodes: list[Node], scope: Scope, text: str) -> Value:
    fn = name.lower()
    if fn in STATUS_FUNCTIONS:
        if scope.status is None:
            raise ExpressionError(f"{name}() is not available here in {text!r}")
        if arg_nodes:
            raise ExpressionError(f"{name}() takes no arguments in {text!r}")
        return scope.status(fn)
    if fn == "case":
        if len(arg_nodes) < 3 or len(arg_nodes) % 2 == 0:
            raise ExpressionError(f"case() takes pairs and a default in {text!r}")
        for pred, val in zip(arg_nodes[:-1:2], arg_nodes[1::2], strict=True):
            if _eval(pred, scope, text) is True:
                return _eval(val, scope, text)
        return _eval(arg_nodes[-1], scope, text)
    args = [_eval(a, scope, text) for a in arg_nodes]

    def arity(low: int, high: int) -> None:
        if not low <= len(args) <= high:
            raise ExpressionError(f"{name}() takes {low}..{high} arguments in {text!r}")

    if fn == "contains":
        arity(2, 2)
        return _contains(args[0], args[1])
    if fn == "startswith":
        arity(2, 2)
        return to_string(args[0]).casefold().startswith(to_string(args[1]).casefold())
    if fn == "endswith":
        arity(2, 2)
        return to_string(args[0]).casefold().endswith(to_string(args[1]).casefold())
    if fn == "format":
        if len(args) < 2:
            raise ExpressionError(f"format() needs a string and a value in {text!r}")
        return _format(to_string(args[0]), args[1:])
    if fn == "join":
        arity(1, 2)
        sep = to_string(args[1]) if len(args) == 2 else ","
        if isinstance(args[0], list):
            return sep.join(to_string(x) for x in args[0])
        return to_string(args[0])
    if fn == "tojson":
        arity(1, 1)
        return _to_json(args[0])
    if fn == "fromjson":
        arity(1, 1)
        try:
            return normalize(json.loads(to_string(args[0])))
        except json.JSONDecodeError as e:
            raise ExpressionError(f"fromJSON: {e} in {text!r}") from None
    raise ExpressionError(f"function {name}() is not implemented here ({text!r})")


# -- templates: `${{ }}` inside YAML values ---------------------------------------------------

_EMBEDDED = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def render(value: Any, scope: Scope) -> Value:
    """A workflow value with its `${{ }}` expressions evaluated: a string that is one whole
    expression keeps the expression's type (a list for a matrix, a boolean for `with:`); a
    string with text around expressions becomes a string; lists and mappings are rendered
    item by item; other YAML scalars are returned as JSON-like values."""
    if isinstance(value, str):
        whole = _EMBEDDED.fullmatch(value.strip())
        if whole and "${{" not in whole.group(1):
            return evaluate(whole.group(1), scope)
        return _EMBEDDED.sub(lambda m: to_string(evaluate(m.group(1), scope)), value)
    if isinstance(value, Mapping):
        return {str(k): render(v, scope) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, scope) for v in value]
    return normalize(value)


def render_string(value: Any, scope: Scope) -> str:
    """`render` cast to a string, as GitHub puts a value into `env:` (YAML booleans and numbers
    become their text: `true`, `3`)."""
    rendered = render(value, scope)
    return to_string(rendered)


def condition(text: Any, scope: Scope) -> tuple[bool, str]:
    """An `if:` decided as GitHub decides it: the text is an expression (with or without
    `${{ }}` around all of it; text around a `${{ }}` makes it a string, which is truthy when not
    empty); without a status function in it, `success() &&` is put in front.

    Returns:
        (whether it holds, the expression as evaluated, for the transcript).
    """
    if isinstance(text, bool):
        text = "true" if text else "false"
    raw = str(text).strip()
    whole = _EMBEDDED.fullmatch(raw)
    if whole and "${{" not in whole.group(1):
        raw = whole.group(1).strip()
    elif "${{" in raw:
        return truthy(render(raw, scope)), raw
    node = parse(raw)
    if not calls(node) & STATUS_FUNCTIONS:
        if scope.status is not None and not scope.status("success"):
            return False, f"success() && ({raw})"
        return truthy(_eval(node, scope, raw)), raw
    return truthy(_eval(node, scope, raw)), raw
