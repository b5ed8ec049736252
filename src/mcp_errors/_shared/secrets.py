"""Find secrets in text: credentials by their shape, and the values of secret-named keys.

The secret scanner the sanitiser (`_shared/sanitize.py`) redacts with and the checker's leak
finder judges with, on one list (docs/wire-format.md documents it): PEM private-key blocks;
well-known token shapes (`_TOKENS`); the password of `scheme://user:password@host` (the last
`@` before the host ends it, so a password containing `@` goes whole); `Bearer`/`Basic`
credentials; and the value after a secret-named key (`is_secret_name`) written `key=value`,
`key: value`, as JSON or as an XML element. A value that is prose (`token: expired`) or a
placeholder (`password=${PASSWORD}`) is no credential.

Every scan is linear in the text's length: patterns start only where a run of their
characters starts, and the key/value scan resumes after each value it redacts, so hostile
text (`a=a=a=...`) cannot make it quadratic.

Example:
    ```python
    from mcp_errors._shared.secrets import has_secret, redact_secrets

    said = "login failed: password=hunter2 for ada"
    assert redact_secrets(said) == "login failed: password=[REDACTED] for ada"
    assert has_secret(said) and not has_secret("password: required")
    ```
"""

from __future__ import annotations

import functools
import itertools
import re
from collections.abc import Iterator
from typing import Final

__all__ = ["REDACTED", "has_secret", "is_secret_name", "redact_secrets"]

REDACTED: Final = "[REDACTED]"
"""What a secret is replaced with."""

# A PEM private key, to its END line, or to the end of the text when that was cut off.
_PRIVATE_KEY: Final = re.compile(
    r"(?s)-----BEGIN (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----"
    r"(?:.*?-----END (?:[A-Z0-9]+ ){0,4}PRIVATE KEY(?: BLOCK)?-----|.*)"
)
# Well-known token shapes, redacted whole. A match starts only where a run of token
# characters starts.
_TOKENS: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    # OpenAI, Anthropic (sk-proj-..., sk-ant-api03-...): a random run of 20 or more somewhere,
    # so that a SKU of short groups (sk-2024-01-15-blue) is not one.
    r"sk-(?=[A-Za-z0-9_-]*?[A-Za-z0-9_]{20})[A-Za-z0-9_-]+"
    r"|[sr]k_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|whsec_[A-Za-z0-9]{20,}"  # Stripe webhook secrets
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"  # AWS access key ids
    r"|gh[pousr]_[A-Za-z0-9]{20,}"  # GitHub tokens
    r"|github_pat_[A-Za-z0-9_]{22,}"  # GitHub fine-grained tokens
    r"|glpat-[A-Za-z0-9_-]{20,}"  # GitLab personal access tokens
    r"|AIza[0-9A-Za-z_-]{35}"  # Google API keys
    r"|xox[abeprs]-[A-Za-z0-9-]{10,}"  # Slack tokens
    r"|xapp-\d-[A-Za-z0-9-]{10,}"  # Slack app-level tokens
    r"|T[A-Z0-9]{8,12}/[AB][A-Z0-9]{8,12}/[A-Za-z0-9]{20,}"  # Slack webhook URLs' secret path
    r"|\d{17,20}/[A-Za-z0-9_-]{60,}"  # Discord webhook URLs' id and token
    r"|hv[sbr]\.[A-Za-z0-9_-]{20,}"  # HashiCorp Vault tokens
    r"|npm_[A-Za-z0-9]{36}"  # npm tokens
    r"|pypi-[A-Za-z0-9_-]{50,}"  # PyPI tokens
    r"|hf_[A-Za-z0-9]{30,}"  # Hugging Face tokens
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"  # SendGrid keys
    r"|eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*"  # JWTs, unsigned ones (`alg: none`) too
    r")"
)
# The password of `scheme://user:password@host`: up to the last `@` before the path, so
# that a password containing `@` is redacted whole; a password containing `/` ends at the
# first `@` (a port and a path, `host:8080/users/ada@example.com`, are not a password).
_USERINFO: Final = re.compile(
    r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://[^\s:/?#@]*:)([^\s/?#]+|(?!\d+/)[^\s?#@]{1,200})@"
)
# Authorization schemes written without a key name; the credential must look like one
# (`_looks_random`), so that "Basic subscription" and "bearer bonds" stay words.
_SCHEME_CREDENTIAL: Final = re.compile(r"(?i)(?<![A-Za-z0-9_-])((?:bearer|basic)\s+)([A-Za-z0-9._~+/=-]{8,})")

# A key and its separator (`key=`, `key: `, JSON's `"key": `, JSON escaped in a string
# `\"key\":`, Ruby's and PHP's `key => `), or a command line's `--key value`; whether the key
# names a secret is decided in Python (`is_secret_name`), and only then is its value read.
_KEY: Final = re.compile(
    r"(?<![A-Za-z0-9_-])(?:([A-Za-z0-9_-]++)(?:\\?[\"'])?[ \t]*(=>|[=:])(\s*)"
    r"|--([A-Za-z][A-Za-z0-9_-]*)[ \t]+(?=[^\s-]))"
)
# The value after a secret-named key: a quoted string (also JSON-escaped); after a spaced
# separator (`password: correct horse battery staple`) or an authorization key
# (`Authorization:Token abc`), the words of the clause up to the first word of prose; else
# one word (`password=hunter2`).
_QUOTED_VALUE: Final = re.compile(r"\"[^\"\n]*\"?|'[^'\n]*'?")
_ESCAPED_QUOTED_VALUE: Final = re.compile(r"\\\"(?:[^\"\\\n]|\\[^\"\n])*(?:\\\"|$)")
_CLAUSE_WORD: Final = re.compile(r"[^\s,;&)\]}\"]+")
_WORD_VALUE: Final = re.compile(r"[^\s,;&]+")
# An XML element whose name is a secret's (`<password>...</password>`, `<ApiKey>`).
_XML_ELEMENT: Final = re.compile(r"<([A-Za-z_][\w.:-]{0,60})(?:\s[^<>]{0,200})?>([^<]*)</")

_REDACT_PASSWORD: Final = r"\g<1>" + REDACTED + "@"


def _secret_values(text: str) -> Iterator[tuple[int, int]]:
    """The spans of the credentials after secret-named keys in `text`, in order, not overlapping.

    A value that is prose (`api_token: must be 20+ characters`, `Invalid token: it expired`)
    or a placeholder (`password=None`, `token: ${API_TOKEN}`) is no credential. Each value is
    read once: the scan resumes after a credential, and prose is judged by its first word.
    """
    position = 0
    while (key := _KEY.search(text, position)) is not None:
        position = key.end()
        flag = key.group(4)
        name = flag or key.group(1)
        if not is_secret_name(name) and not _is_url_secret(text, key) and not _is_qualified_key(text, key):
            # Only the key is consumed: a pair inside a harmless value (`url: ...?token=...`)
            # is still found.
            continue
        spaced = flag is None and (bool(key.group(3)) or _is_authorization(name))
        span = _credential(text, key.end(), clause=spaced)
        if span is not None:
            yield span
            position = span[1]


def _credential(text: str, start: int, *, clause: bool) -> tuple[int, int] | None:
    """The span of the credential a secret-named key's value at `start` holds, if it holds one."""
    if text.startswith(("'", '"'), start):
        value = _QUOTED_VALUE.match(text, start)
        inside = value.group()[1:] if value is not None else ""
    elif text.startswith('\\"', start):
        value = _ESCAPED_QUOTED_VALUE.match(text, start)
        inside = value.group()[2:] if value is not None else ""
    elif clause:
        return _clause_credential(text, start)
    else:
        value = _WORD_VALUE.match(text, start)
        inside = value.group() if value is not None else ""
    if value is None or not _is_credential_start(inside):
        return None
    return start, value.end()


def _clause_credential(text: str, start: int) -> tuple[int, int] | None:
    # The clause's words up to its end (a line end, `,;&)]}"`, a sentence's full stop) or to
    # its first word of prose: `hunter2 was rejected` is a credential and what was said of it.
    first = _CLAUSE_WORD.match(text, start)
    if first is None:
        return None
    word = first.group()
    if word.lower() in _SCHEME_WORDS:
        # `Authorization: Bearer <value>`: the scheme is a credential's only with one after it.
        after = _CLAUSE_WORD.match(text, first.end() + 1) if text[first.end() : first.end() + 1] == " " else None
        if after is None or not _looks_random(after.group().strip(_VALUE_EDGES)):
            return None
    elif not _is_credential_start(word) or (_next_word_start(text, first.end()) and not _starts_phrase(word)):
        return None
    end = position = start
    while (word_match := _CLAUSE_WORD.match(text, position)) is not None:
        found = word_match.group()
        if end > start and _is_prose(found):
            break
        end = word_match.end()
        if found.endswith(".") and (end == len(text) or text[end].isspace()):
            end -= 1  # a full stop ends the sentence, and is not the credential's
            break
        position = _next_word_start(text, end)
        if not position:
            break
    return (start, end) if end > start else None


def _next_word_start(text: str, end: int) -> int:
    """Where the clause's next word starts after a word ending at `end`; 0 when the clause ends there."""
    gap = end
    while gap < len(text) and text[gap] in " \t":
        gap += 1
    return gap if end < gap < len(text) and _CLAUSE_WORD.match(text, gap) is not None else 0


def _starts_phrase(word: str) -> bool:
    """Whether the first of several words after a secret-named label starts a credential.

    A word that looks generated (`hunter2`, `Winter2024!`) does, and so does a lower-case word
    (a passphrase: `correct horse battery staple`); a capitalised word or an acronym starts a
    sentence (`Rotation pending`, `SSO via Okta only`), a number followed by words is a count or
    a value echoed back (`12345 is not of type 'string'`), and `SameSite=None` is a pair of its own.
    """
    word = word.strip(_VALUE_EDGES)
    if "=" in word or word.isdigit():
        return False
    if any(char.isdigit() for char in word) or not word.isalpha():
        return True
    return word.islower() or (word.isupper() and len(word) >= 12)  # an acronym is short


def _is_prose(word: str) -> bool:
    word = word.strip(_VALUE_EDGES).lower()
    return word in _PROSE_WORDS or (len(word) > 4 and word.endswith(("ed", "ing")))


def _is_credential_start(value: str) -> bool:
    """Whether a secret-named key's value starts with a credential, rather than prose or a placeholder."""
    first = value.split(None, 1)[0] if value.strip() else ""
    if first.startswith(("<", "${", "{{")):
        return False  # a template: `<your token here>`, `${API_KEY}`, `{{ token }}`
    word = first.strip(_VALUE_EDGES)
    # Shorter than 4 characters: a count or a version (`pass=3`, `Signature=v1`), not a secret.
    return len(word) >= 4 and word.lower() not in _PROSE_WORDS and _PLACEHOLDER.fullmatch(word) is None


def _is_qualified_key(text: str, key: re.Match[str]) -> bool:
    # "Invalid API key: ..." names its secret in two words, of which only `key` is the label's.
    return (key.group(1) or "").lower() == "key" and _KEY_QUALIFIER.search(
        text, max(0, key.start() - 12), key.start()
    ) is not None


_KEY_QUALIFIER: Final = re.compile(r"(?i)\b(?:api|access|secret|private|signing|master|encryption|license)[ _-]$")


def _is_url_secret(text: str, key: re.Match[str]) -> bool:
    # `key` and `code` are secrets only as a URL's query parameters (`?key=...`, OAuth's
    # `?code=...`): elsewhere "key=order-17" is a database's duplicate key.
    return (
        key.group(2) == "="
        and key.group(1).lower() in _URL_SECRET_PARAMETERS
        and key.start() > 0
        and text[key.start() - 1] in "?&"
    )


_URL_SECRET_PARAMETERS: Final = frozenset({"key", "code"})
# Words that start prose, not a credential: function words, and what error texts say of a
# credential (`required`, `expired`, `missing`) or of its value (`None`, `empty`).
_PROSE_WORDS: Final = frozenset(
    """a an the is are was were be been being am it its this that these those there here not no nor never
    must should shall can cannot could will would may might has have had does do did to of for in on at by
    with without from as and or but if than then because when while after before until since only also too
    very please you your we our they their which who what where how why so such any all each every some more
    less least most per must required missing invalid expired expires revoked empty wrong incorrect rejected
    denied needed needs need expected unknown malformed mismatch mismatched unauthorized forbidden blank
    absent none null nil undefined unset hidden redacted masked omitted provided accepted ok valid true false
    yes enabled disabled contains length characters minimum maximum format supplied given present changed
    updated reset sent received used reused verified failed failure error see use try field value header
    parameter argument longer shorter short long weak set""".split()  # noqa: SIM905  # words read best as words
)
# Placeholders: masks (`***`, `xxxx`), templates (`<your-key>`, `${API_KEY}`, `{{token}}`, `%s`).
_PLACEHOLDER: Final = re.compile(r"[*•xX#.]+|<[^<>]*>|\$\{?[A-Z_][A-Z0-9_]*\}?|\{\{[^{}]*\}\}|%[sd]")
_VALUE_EDGES: Final = "\"'.,;:()[]{}\\"
_SCHEME_WORDS: Final = frozenset({"bearer", "basic", "token", "digest", "bot", "apikey"})


def _redact_secret_values(text: str) -> str:
    parts: list[str] = []
    done = 0
    for start, end in _secret_values(text):
        parts += (text[done:start], REDACTED)
        done = end
    return "".join(parts) + text[done:] if parts else text


def _redact_xml_secret(match: re.Match[str]) -> str:
    if not _is_xml_secret(match):
        return match.group()
    return match.group()[: match.start(2) - match.start()] + REDACTED + "</"


def _is_xml_secret(match: re.Match[str]) -> bool:
    return is_secret_name(match.group(1).rpartition(":")[2]) and _is_credential_start(match.group(2))


def _redact_scheme_credential(match: re.Match[str]) -> str:
    return match.group(1) + REDACTED if _looks_random(match.group(2)) else match.group()


# The words of a name: `_`/`-` separated, camelCase, or an all-caps run (`PGPASSWORD`).
_NAME_WORDS: Final = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")
_SECRET_WORDS: Final = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "pw",
        "passphrase",
        "secret",
        "token",
        "apikey",
        "auth",
        "authorization",
        "credential",
        "credentials",
        "signature",
        "sig",
        "privatekey",
        "secretkey",
        "accesskey",
        "accountkey",
        "signingkey",
        "masterkey",
        "encryptionkey",
        "sessionid",
        "cookie",
    }
)
# Glued words that still end in a secret word: `pgpassword`, `accesstoken`, `clientsecret`.
_SECRET_ENDINGS: Final = ("password", "passwd", "passphrase", "token", "secret", "apikey")
# A name ending in one of these is about a secret, not one: `InvalidTokenError`, `tokenLimit`,
# `signature_version`, `token_uri`.
_NOT_SECRET_TAILS: Final = frozenset(
    {
        "error",
        "exception",
        "mismatch",
        "expired",
        "expiry",
        "limit",
        "count",
        "length",
        "size",
        "type",
        "version",
        "algorithm",
        "method",
        "name",
        "url",
        "uri",
        "endpoint",
        "scheme",
        "provider",
        "ref",
        "reference",
        "arn",
        "path",
        "file",
        "hint",
        "policy",
        "rotation",
    }
)
_AUTHORIZATION_WORDS: Final = frozenset({"auth", "authorization"})


@functools.lru_cache(maxsize=1024)
def is_secret_name(name: str) -> bool:
    """Whether an argument or field name usually holds a secret, e.g. `password` or `db_api_key`.

    Also inside longer or glued names (`DB_PASSWORD`, `X-Api-Key`, `accessToken`,
    `PGPASSWORD`, `AccountKey`, `X-Amz-Signature`), but not names about a secret
    (`InvalidTokenError`, `tokenLimit`) or that only contain the letters (`author`,
    `tokenizer`, `secretary`).

    Args:
        name: The last segment of a field path.

    Returns:
        True when its value must be redacted whole.
    """
    words = _words(name)
    if not words or words[-1] in _NOT_SECRET_TAILS:
        return False
    pairs = (first + second for first, second in itertools.pairwise(words))
    return any(word in _SECRET_WORDS or word.endswith(_SECRET_ENDINGS) for word in words) or any(
        pair in _SECRET_WORDS for pair in pairs
    )


@functools.lru_cache(maxsize=1024)
def _is_authorization(name: str) -> bool:
    """Whether a key is an authorization header, whose value starts with a scheme (`Token abc`)."""
    return not _AUTHORIZATION_WORDS.isdisjoint(_words(name))


def _words(name: str) -> list[str]:
    return [word.lower() for word in _NAME_WORDS.findall(name)]


def has_secret(text: str) -> bool:
    """Whether text holds a secret `find_leaks` would report: a private key, a token, a password."""
    return (
        _PRIVATE_KEY.search(text) is not None
        or _TOKENS.search(text) is not None
        or any(not match.group(2).startswith(REDACTED) for match in _USERINFO.finditer(text))
        or any(_looks_random(match.group(2)) for match in _SCHEME_CREDENTIAL.finditer(text))
        or any(True for _ in _secret_values(text))
        or ("</" in text and any(_is_xml_secret(match) for match in _XML_ELEMENT.finditer(text)))
    )


def _looks_random(word: str) -> bool:
    """Whether a word after `Bearer`/`Basic` is a credential: letters with digits, or mixed case
    no word has (`dXNlcjpwYXNz`); not `subscription` or `instruments`."""
    if len(word) < 8:
        return False
    if any(char.isdigit() for char in word) and any(char.isalpha() for char in word):
        return True
    upper = sum(char.isupper() for char in word)
    lower = sum(char.islower() for char in word)
    return len(word) >= 12 and upper >= 3 and lower >= 3 and upper * 5 >= len(word)


def redact_secrets(text: str) -> str:
    """`text` with every secret in it replaced by `[REDACTED]`, the rest as it was.

    Args:
        text: Text that may hold credentials (the sanitiser's bounded head of it).

    Returns:
        The text without secrets; `has_secret` is false of it.
    """
    text = _PRIVATE_KEY.sub(REDACTED, text)
    if "</" in text:
        text = _XML_ELEMENT.sub(_redact_xml_secret, text)
    text = _redact_secret_values(text)
    # Cheap tests first: most texts have no URL and no authorization scheme.
    if "://" in text and "@" in text:
        text = _USERINFO.sub(_REDACT_PASSWORD, text)
    lowered = text.lower()
    if "bearer" in lowered or "basic" in lowered:
        text = _SCHEME_CREDENTIAL.sub(_redact_scheme_credential, text)
    return _TOKENS.sub(REDACTED, text)
