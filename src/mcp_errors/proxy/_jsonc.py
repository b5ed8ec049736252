"""JSON with comments, read with where each value sits, so a file can be edited in place.

Hosts' configuration files are JSON; VS Code's `mcp.json` is JSONC (`//` and `/* */`
comments, trailing commas). `mcp-errors wrap` changes a few values and must leave every other
byte as it was, comments included, so it edits the text by the spans this parser records
rather than dumping a parsed document again. Linear in the text's length, with bounded size
and nesting.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Final

__all__ = ["Edit", "JsoncError", "Member", "Node", "apply_edits", "parse_jsonc"]

MAX_CHARS: Final = 4 * 1024 * 1024
MAX_DEPTH: Final = 64

_STRING: Final = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
_NUMBER: Final = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?")
_LITERALS: Final = {"true": True, "false": False, "null": None}


class JsoncError(ValueError):
    """The text is not JSON (with comments); the message gives the line and column."""


@dataclass
class Member:
    """One `"key": value` of an object: where its key starts, and its value."""

    key: str
    key_start: int
    value: Node


@dataclass
class Node:
    """A value and its span `text[start:end]`; an object's members or an array's items in order."""

    start: int
    end: int
    value: Any
    members: list[Member] = field(default_factory=list)
    items: list[Node] = field(default_factory=list)
    is_object: bool = False

    def member(self, key: str) -> Member | None:
        """The last member named `key` (as `json.loads` keeps the last of duplicates)."""
        found = [member for member in self.members if member.key == key]
        return found[-1] if found else None


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` with `new`."""

    start: int
    end: int
    new: str


def apply_edits(text: str, edits: list[Edit]) -> str:
    """`text` with `edits` (which must not overlap) applied."""
    parts: list[str] = []
    position = 0
    for edit in sorted(edits, key=lambda e: (e.start, e.end)):
        if edit.start < position:
            raise ValueError("overlapping edits")
        parts += [text[position : edit.start], edit.new]
        position = edit.end
    parts.append(text[position:])
    return "".join(parts)


def parse_jsonc(text: str) -> Node:
    """Parse `text` as JSON that may hold comments and trailing commas.

    Raises:
        JsoncError: If it is not, is over 4 MiB, or nests deeper than 64.
    """
    if len(text) > MAX_CHARS:
        raise JsoncError(f"the file is over {MAX_CHARS // (1024 * 1024)} MiB")
    parser = _Parser(text)
    node = parser.value(0)
    parser.skip()
    if parser.at < len(text):
        parser.fail("unexpected text after the document")
    return node


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def fail(self, what: str) -> None:
        line = self.text.count("\n", 0, self.at) + 1
        column = self.at - (self.text.rfind("\n", 0, self.at) + 1) + 1
        raise JsoncError(f"{what} at line {line}, column {column}")

    def skip(self) -> None:
        """Skip whitespace and comments."""
        text, size = self.text, len(self.text)
        while self.at < size:
            char = text[self.at]
            if char in " \t\r\n\ufeff":
                self.at += 1
            elif text.startswith("//", self.at):
                end = text.find("\n", self.at)
                self.at = size if end < 0 else end + 1
            elif text.startswith("/*", self.at):
                end = text.find("*/", self.at + 2)
                if end < 0:
                    self.fail("an unclosed /* comment")
                self.at = end + 2
            else:
                return

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            self.fail(f"nesting deeper than {MAX_DEPTH}")
        self.skip()
        start = self.at
        char = self.text[start : start + 1]
        if char == "{":
            return self.container(depth, start, is_object=True)
        if char == "[":
            return self.container(depth, start, is_object=False)
        if char == '"':
            text = self.string()
            return Node(start, self.at, text)
        match = _NUMBER.match(self.text, start)
        if match:
            self.at = match.end()
            return Node(start, self.at, json.loads(match.group()))
        for word, literal in _LITERALS.items():
            if self.text.startswith(word, start):
                self.at = start + len(word)
                return Node(start, self.at, literal)
        self.fail("expected a JSON value" if char else "unexpected end of file")
        raise AssertionError  # unreachable: fail raises

    def string(self) -> str:
        match = _STRING.match(self.text, self.at)
        if not match:
            self.fail("a malformed string")
            raise AssertionError
        self.at = match.end()
        return str(json.loads(match.group()))

    def container(self, depth: int, start: int, *, is_object: bool) -> Node:
        close = "}" if is_object else "]"
        node = Node(start, start, {} if is_object else [], is_object=is_object)
        self.at += 1
        while True:
            self.skip()
            if self.text.startswith(close, self.at):
                break
            if is_object:
                if not self.text.startswith('"', self.at):
                    self.fail("expected a key in quotes")
                key_start = self.at
                key = self.string()
                self.skip()
                if not self.text.startswith(":", self.at):
                    self.fail("expected ':'")
                self.at += 1
                child = self.value(depth + 1)
                node.members.append(Member(key, key_start, child))
                node.value[key] = child.value
            else:
                child = self.value(depth + 1)
                node.items.append(child)
                node.value.append(child.value)
            self.skip()
            if self.text.startswith(",", self.at):
                self.at += 1  # a trailing comma before the close is allowed (JSONC)
            elif not self.text.startswith(close, self.at):
                self.fail(f"expected ',' or '{close}'")
        self.at += 1
        node.end = self.at
        return node
