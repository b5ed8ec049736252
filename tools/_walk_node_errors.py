"""The error classes of installed Node packages, read from their JavaScript (for tools/mine_exceptions.py).

A regex reader, not a parser, on purpose: the packages ship their code as CommonJS, ES modules,
TypeScript compiled to either, or one bundled file, and a JavaScript parser would have to be
installed and told each dialect apart. Every one of them keeps the few forms read here, token for
token, so a linear scan finds them in all of them alike:

- `class X extends Y {` (ES classes, compiled TypeScript), and the older `util.inherits(X, Y)`,
  `X.prototype = Object.create(Y.prototype)` and `Object.setPrototypeOf(X.prototype, Y.prototype)`;
- in a class's body (found by counting braces outside string literals): its `name`, the
  `code`, `status` or `statusCode` it declares (`this.code = 'ECONNABORTED'`, `status = 404`),
  and its message (`super('...')`, `this.message = '...'`);
- anywhere in the package: the literal message of each `new X('...')` of one of its classes
  (a template's `${...}` parts read as `{}`), and the error codes it names (`code: 'ERR_X'`,
  `exports.ER_X = 1045`), as a table of codes labelled by their words.

Reads files only (nothing is run), each once, in linear time; the same output shape as
tools/_walk_exceptions.py, so the same labeller reads both.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

MAX_MESSAGES = 8
MAX_CHARS = 240
MAX_FILE_BYTES = 4_000_000
MAX_TABLE = 3000

_CLASS = re.compile(r"\bclass\s+([A-Za-z_$][\w$]*)\s+extends\s+([A-Za-z_$][\w$.]*)[^{]{0,80}\{")
_INHERITS = re.compile(
    r"\binherits\(\s*([A-Za-z_$][\w$]*)\s*,\s*([A-Za-z_$][\w$.]*)\s*\)"
    r"|\b([A-Za-z_$][\w$]*)\.prototype\s*=\s*Object\.create\(\s*([A-Za-z_$][\w$.]*)\.prototype"
    r"|Object\.setPrototypeOf\(\s*([A-Za-z_$][\w$]*)\.prototype\s*,\s*([A-Za-z_$][\w$.]*)\.prototype"
)
_STRING = r"""('(?:[^'\\\n]|\\.){0,400}'|"(?:[^"\\\n]|\\.){0,400}"|`(?:[^`\\]|\\.){0,400}`)"""
_NEW = re.compile(r"\bnew\s+(?:[\w$]+\.)*([A-Z][\w$]*)\(\s*" + _STRING)
_SUPER = re.compile(r"\bsuper\(\s*" + _STRING)
_MESSAGE = re.compile(r"\b(?:this\.)?message\s*[=:]\s*" + _STRING)
_NAME = re.compile(r"\b(?:this\.)?name\s*[=:]\s*['\"]([A-Za-z_$][\w$]*)['\"]")
_CODE = re.compile(r"\b(?:this\.)?(?:code|errorCode)\s*[=:]\s*['\"]([A-Z][A-Z0-9_]{3,60})['\"]")
_STATUS = re.compile(r"\b(?:this\.)?(status|statusCode|httpStatusCode|httpStatus)\s*[=:]\s*([45]\d\d)\b")
_CODE_NAME = re.compile(r"""(?:\bcode\s*[:=]\s*|\bexports\.|\[\s*)['"]?(E[A-Z0-9]*_[A-Z0-9_]{3,60}|E[A-Z]{4,20})\b""")
_SKIPPED_FOLDERS = frozenset({"test", "tests", "__tests__", "example", "examples"})
_TEMPLATE_PART = re.compile(r"\$\{[^}]{0,200}\}")


def _unquote(token: str) -> str:
    body = token[1:-1]
    if token[0] == "`":
        body = _TEMPLATE_PART.sub("{}", body)
    return " ".join(body.replace("\\n", " ").replace("\\'", "'").replace('\\"', '"').split())[:MAX_CHARS]


def _body_end(text: str, start: int, limit: int = 20_000) -> int:
    """The index after the brace that closes the one at `start`, skipping string literals (bounded)."""
    depth, at, end = 0, start, min(len(text), start + limit)
    while at < end:
        char = text[at]
        if char in "'\"`":
            close = text.find(char, at + 1)
            while close != -1 and text[close - 1] == "\\" and close < end:
                close = text.find(char, close + 1)
            at = end if close == -1 else close + 1
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                return at + 1
        at += 1
    return end


def package_files(root: Path) -> list[tuple[Path, str]]:
    files = []
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root)
        parts = relative.parts
        if "node_modules" in parts or set(parts) & _SKIPPED_FOLDERS:
            continue
        if path.suffix not in (".js", ".cjs", ".mjs") or path.name.endswith((".min.js", ".d.ts")):
            continue
        if path.is_file() and path.stat().st_size <= MAX_FILE_BYTES:
            files.append((path, str(relative.with_suffix("")).replace("/", ".")))
    return files


def walk_package(root: Path) -> dict[str, Any]:
    classes: dict[str, dict[str, Any]] = {}
    raises: dict[str, list[str]] = {}
    codes: dict[str, str] = {}
    for path, module in package_files(root):
        text = path.read_text(encoding="utf-8", errors="replace")
        for found in _CLASS.finditer(text):
            name, base = found.group(1), found.group(2)
            body = text[found.end() - 1 : _body_end(text, found.end() - 1)]
            entry = classes.setdefault(name, {"module": module, "class": name, "bases": [], "messages": [],
                                              "statuses": {}})  # fmt: skip
            if base not in entry["bases"]:
                entry["bases"].append(base)
            for pattern in (_SUPER, _MESSAGE):
                for message in pattern.finditer(body):
                    words = _unquote(message.group(1))
                    if len(words) >= 6 and words not in entry["messages"] and len(entry["messages"]) < MAX_MESSAGES:
                        entry["messages"].append(words)
            for code in _CODE.finditer(body):
                entry["statuses"].setdefault("code", f"attr:{code.group(1)}")
                codes.setdefault(code.group(1), module)
            for status in _STATUS.finditer(body):
                entry["statuses"].setdefault(status.group(1), f"int:{status.group(2)}")
        for found in _INHERITS.finditer(text):
            pair = [group for group in found.groups() if group]
            name, base = pair[0], pair[1].removesuffix(".prototype")
            entry = classes.setdefault(name, {"module": module, "class": name, "bases": [], "messages": [],
                                              "statuses": {}})  # fmt: skip
            if base not in entry["bases"]:
                entry["bases"].append(base)
        for found in _NEW.finditer(text):
            words = _unquote(found.group(2))
            if len(words) >= 8:
                raises.setdefault(found.group(1), []).append(words)
        for found in _CODE_NAME.finditer(text):
            codes.setdefault(found.group(1), module)
    for entry in classes.values():
        for words in raises.get(entry["class"], []):
            if words not in entry["messages"] and len(entry["messages"]) < MAX_MESSAGES:
                entry["messages"].append(words)
    tables = [{"module": module, "key": code, "message": code} for code, module in sorted(codes.items())]
    return {"classes": [classes[name] for name in sorted(classes)], "tables": tables[:MAX_TABLE]}


def walk(node_modules: Path, packages: tuple[str, ...]) -> list[dict[str, Any]]:
    """Each named package's classes and codes, as `{"library": "npm:<name>", "version", "classes", "tables"}`."""
    found = []
    for name in packages:
        root = node_modules / name
        try:
            version = json.loads((root / "package.json").read_text(encoding="utf-8"))["version"]
        except (OSError, ValueError, KeyError):
            continue
        found.append({"library": f"npm:{name}", "version": version, **walk_package(root)})
    return found
