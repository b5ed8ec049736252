"""Hypothesis strategies for text that must never reach an agent: secrets, paths, tracebacks."""

from __future__ import annotations

import string
import traceback

from hypothesis import strategies as st

# token68-like characters: what bearer tokens, API keys and generated passwords are made of.
# A digit and an upper-case letter keep a generated secret from spelling a word of the fixed
# output ("fieldErrors") or a lower-case hex errorId by chance.
SECRET_VALUES = st.text(alphabet=string.ascii_letters + string.digits + "-_.~", min_size=10, max_size=32).filter(
    lambda value: any(char.isdigit() for char in value) and any(char.isupper() for char in value)
)

SECRET_TEMPLATES = (
    "password={}",
    "Password = {}",
    "passwd: {}",
    "DB_PASSWORD={}",
    "pwd='{}'",
    '"api_key": "{}"',
    "X-Api-Key: {}",
    "apikey={}",
    "Authorization: Bearer {}",
    "authorization: basic {}",
    "bearer {}",
    "token={}",
    "GITHUB_TOKEN={}",
    "access_token: {}",
    "client_secret='{}'",
    "AWS_SECRET_ACCESS_KEY={}",
    "session_id={}",
    "postgresql://admin:{}@db.internal:5432/prod",
    "mysql+pymysql://root:{}@localhost/shop",
    "redis://:{}@cache:6379/0",
    "Server=db;User Id=sa;Password={};Database=shop",
    "https://api.example.com/v1/search?api_key={}&q=shoes",
    # A password containing `@`, several words, and the spellings of authorization headers.
    "postgres://admin:p@ss{}@db.example.com/prod",
    "password: correct horse {}",
    "Authorization: Token {}",
    "authorization=Token {}",
    "Authorization:token {}",
    "X-Amz-Signature={}",
    "Signature={}",
    "DefaultEndpointsProtocol=https;AccountName=shop;AccountKey={};EndpointSuffix=core.windows.net",
    "passphrase={}",
    "signing_key: {}",
)

FILLER = st.text(
    st.characters(codec="utf-8", exclude_categories=["Cs"]),
    max_size=40,
)


@st.composite
def texts_with_a_secret(draw: st.DrawFn) -> tuple[str, str]:
    """(text, secret): free text around one secret written in a common way."""
    secret = draw(SECRET_VALUES)
    template = draw(st.sampled_from(SECRET_TEMPLATES))
    before, after = draw(FILLER), draw(FILLER)
    return f"{before} {template.format(secret)} {after}", secret


PATH_SEGMENTS = st.text(alphabet=string.ascii_letters + string.digits + "_-.", min_size=1, max_size=12)


@st.composite
def absolute_paths(draw: st.DrawFn) -> str:
    """A Unix or Windows absolute path of at least two segments, or a `file:` URL."""
    segments = draw(st.lists(PATH_SEGMENTS, min_size=2, max_size=5))
    drive = draw(st.sampled_from("CDE"))
    return draw(
        st.sampled_from(
            [
                "/" + "/".join(segments),
                f"{drive}:\\" + "\\".join(segments),
                f"{drive}:/" + "/".join(segments),
                "file:///" + "/".join(segments),
            ]
        )
    )


@st.composite
def texts_with_a_path(draw: st.DrawFn) -> tuple[str, str]:
    path = draw(absolute_paths())
    return f"{draw(FILLER)} {path} {draw(FILLER)}", path


def a_traceback(message: str) -> str:
    """The text of a real traceback, as a careless tool might put into an error message."""
    try:
        raise RuntimeError(message)
    except RuntimeError as exc:
        return "".join(traceback.format_exception(exc))
