"""Run inside the throwaway environment by tools/mine_exceptions.py: the exception classes of installed libraries.

Standard library only (it runs in a venv that has none of this project). Reads the source with
`ast`, imports nothing: for each distribution named on the command line (and for a list of the
standard library's client modules), every class whose bases make it an exception candidate,
with its bases' names, its docstring's first line, its class attributes that hold a message or
a status, and the literal messages raised with it anywhere in the distribution; and the
module-level message tables (`{ERR_X: "message"}`). Prints JSON on stdout.
"""

from __future__ import annotations

import ast
import importlib.metadata
import json
import sys
import sysconfig
from pathlib import Path
from typing import Any

MESSAGE_ATTRIBUTES = frozenset(
    {
        "message", "msg", "default_message", "default_detail", "detail", "description", "msg_template",
        "template", "errmsg", "reason", "error_message", "default_msg", "fmt", "_fmt", "MESSAGE",
        "message_template", "default_reason", "title", "summary",
    }
)  # fmt: skip
STATUS_ATTRIBUTES = frozenset(
    {"status_code", "code", "http_status", "status", "grpc_status_code", "status_int", "error_code", "http_code"}
)
STDLIB_MODULES = (
    "socket", "ssl", "ftplib", "smtplib", "imaplib", "poplib", "http/client", "urllib/error", "json/decoder",
    "gzip", "zipfile", "tarfile", "shutil", "subprocess", "configparser", "csv", "xml/etree/ElementTree",
    "email/errors", "tomllib/_parser", "asyncio/exceptions", "concurrent/futures/_base", "netrc", "lzma",
    "bz2", "binascii", "base64", "uuid", "ipaddress", "urllib/request", "zoneinfo/_common", "zoneinfo/_zoneinfo",
    "getopt", "argparse", "plistlib", "mailbox", "shelve", "dbm/__init__", "sqlite3/__init__", "wave",
)  # fmt: skip
MAX_MESSAGES = 8
MAX_CHARS = 240


def literal(node: ast.AST | None) -> str | None:
    """The literal words of a message expression: a string, an f-string's constant parts, a template."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = [
            value.value if isinstance(value, ast.Constant) and isinstance(value.value, str) else "{}"
            for value in node.values
        ]
        return "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        return literal(node.left)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
        and isinstance(node.func.value, ast.Constant)
    ):
        return literal(node.func.value)
    return None


def dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return f"{inner}.{node.attr}" if inner else node.attr
    if isinstance(node, ast.Subscript):  # Generic[T]
        return dotted(node.value)
    return None


def status_value(node: ast.AST | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, int) and not isinstance(node.value, bool):
        return f"int:{node.value}"
    if isinstance(node, ast.Constant) and isinstance(node.value, str) and len(node.value) <= 60:
        return f"str:{node.value}"
    name = dotted(node) if node is not None else None
    if name and "." in name:
        return f"attr:{name.rsplit('.', 1)[1]}"
    return None


def clean(text: str) -> str:
    return " ".join(text.split())[:MAX_CHARS]


def walk_file(path: Path, module: str, classes: dict[str, dict[str, Any]], raises: dict[str, list[str]],
              tables: list[dict[str, str]]) -> None:  # fmt: skip
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, RecursionError):
        return
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            bases = [name for name in (dotted(base) for base in node.bases) if name]
            doc = ast.get_docstring(node) or ""
            messages = [clean(doc.strip().split("\n\n")[0])] if doc.strip() else []
            statuses: dict[str, str] = {}
            for item in node.body:
                target, value = None, None
                if isinstance(item, ast.Assign) and len(item.targets) == 1 and isinstance(item.targets[0], ast.Name):
                    target, value = item.targets[0].id, item.value
                elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    target, value = item.target.id, item.value
                    if value is None and isinstance(item.annotation, ast.Subscript):  # Literal[429]
                        value = item.annotation.slice
                if target is None:
                    continue
                if target in MESSAGE_ATTRIBUTES:
                    text = literal(value)
                    if text and len(text.strip()) >= 6:
                        messages.append(clean(text))
                if target in STATUS_ATTRIBUTES:
                    found = status_value(value)
                    if found:
                        statuses[target] = found
            key = f"{module}.{node.name}"
            classes[key] = {
                "module": module, "class": node.name, "bases": bases, "messages": messages, "statuses": statuses,
            }  # fmt: skip
        elif isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            name = dotted(node.exc.func)
            text = literal(node.exc.args[0]) if node.exc.args else None
            if name and text and len(text.strip()) >= 8:
                raises.setdefault(name.rsplit(".", 1)[-1], []).append(clean(text))
        elif (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and any(word in node.targets[0].id for word in ("THROTTL", "TRANSIENT_ERROR", "RETRYABLE_ERROR"))
            and isinstance(node.value, ast.List | ast.Tuple | ast.Set)
        ):
            # A retry policy's own list of codes (botocore's _THROTTLED_ERROR_CODES, ...).
            for item in node.value.elts:
                if isinstance(item, ast.Constant) and isinstance(item.value, str):
                    tables.append({"module": module, "key": node.targets[0].id, "message": item.value, "code": "1"})
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict) and len(node.value.keys) >= 5:
            for dict_key, dict_value in zip(node.value.keys, node.value.values, strict=True):
                text = literal(dict_value)
                if isinstance(dict_key, ast.Name) and text and len(text) >= 12 and dict_key.id.isupper():
                    tables.append({"module": module, "key": dict_key.id, "message": clean(text)})


def walk(files: list[tuple[Path, str]]) -> dict[str, Any]:
    classes: dict[str, dict[str, Any]] = {}
    raises: dict[str, list[str]] = {}
    tables: list[dict[str, str]] = []
    for path, module in files:
        walk_file(path, module, classes, raises, tables)
    for found in classes.values():
        for text in raises.get(found["class"], []):
            if text not in found["messages"] and len(found["messages"]) < MAX_MESSAGES:
                found["messages"].append(text)
    return {"classes": list(classes.values()), "tables": tables[:400]}


def service_models(root: Path) -> list[dict[str, Any]]:
    """botocore's service models: each API's error shapes, with their HTTP status and documentation."""
    import gzip

    found = []
    for path in sorted(root.glob("botocore/data/*/*/service-2.json*")):
        raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
        service = path.parent.parent.name
        for name, shape in json.loads(raw).get("shapes", {}).items():
            if not shape.get("exception"):
                continue
            doc = " ".join(ast.literal_eval(repr(shape.get("documentation") or "")).replace("<p>", " ").split())
            doc = doc.replace("</p>", " ").split(". ")[0]
            status = (shape.get("error") or {}).get("httpStatusCode")
            found.append({
                "module": f"botocore.data.{service}", "class": name, "bases": [],
                "messages": [clean(doc)] if doc else [], "statuses": {"status_code": f"int:{status}"} if status else {},
            })  # fmt: skip
    return found


def distribution_files(name: str) -> tuple[str, list[tuple[Path, str]]]:
    dist = importlib.metadata.distribution(name)
    files = []
    for file in dist.files or ():
        if file.suffix == ".py" and "test" not in file.parts[0] and not any(p in ("tests", "test") for p in file.parts):
            module = ".".join(file.with_suffix("").parts).removesuffix(".__init__")
            files.append((Path(str(file.locate())), module))
    return dist.version, files


def main() -> None:
    out: dict[str, Any] = {"python": sys.version.split()[0], "libraries": []}
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    files = [(stdlib / f"{module}.py", module.replace("/", ".")) for module in STDLIB_MODULES]
    walked = walk([(path, module) for path, module in files if path.exists()])
    out["libraries"].append({"library": "python-stdlib", "version": out["python"], **walked})
    for name in sys.argv[1:]:
        try:
            version, files = distribution_files(name)
        except importlib.metadata.PackageNotFoundError:
            continue
        walked = walk(files)
        if name == "botocore" and files:
            site = Path(str(importlib.metadata.distribution(name).locate_file("")))
            walked["classes"] += service_models(site)
        out["libraries"].append({"library": name, "version": version, **walked})
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
