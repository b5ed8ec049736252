"""Capture a blind batch of real failure texts from sources tests/corpus/ does not have (issue 32).

Run with the throwaway venv tools/mine_exceptions.py installs (the libraries are there):

    python tools/collect_blind.py --out /tmp/blind.json     # with that venv's python

Every text is produced here, for real, against 127.0.0.1 only: libraries and CLIs pointed at a
closed port, local throwaway HTTP servers answering error statuses, malformed files, bad
arguments. Each capture keeps what an agent would read of it: an exception's `str()` (its
`repr()` when that is empty), or a command's stderr. Labels are given in a separate file by a
person *before* the batch is scored (tests/corpus/blind/), never here.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import http.server
import io
import json
import os
import socket
import subprocess
import sys
import tempfile
import threading
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CAPTURES: list[dict[str, Any]] = []


def closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


PORT = closed_port()
PIP_PYTHON = os.environ.get("PIP_PYTHON", "python3")
"""A Python that has pip (the throwaway venv of `uv venv` has none)."""


def text_of(error: BaseException) -> str:
    return str(error) or repr(error)


def capture(source: str, label: str, run: Callable[[], object]) -> None:
    try:
        run()
    except BaseException as error:  # every failure is what is captured
        CAPTURES.append({"source": source, "label": label, "text": text_of(error)[:2000],
                         "exception": f"{type(error).__module__}.{type(error).__qualname__}"})  # fmt: skip
        return
    CAPTURES.append({"source": source, "label": label, "text": None, "note": "did not fail"})


def command(source: str, label: str, argv: list[str], *, stdin: bytes | None = None, cwd: str | None = None) -> None:
    try:
        done = subprocess.run(argv, input=stdin, capture_output=True, timeout=30, cwd=cwd, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        CAPTURES.append({"source": source, "label": label, "text": None, "note": repr(error)})
        return
    text = (done.stderr or done.stdout).decode("utf-8", "replace").strip()
    CAPTURES.append({"source": source, "label": label, "text": text[:2000] if done.returncode else None,
                     "exit": done.returncode})  # fmt: skip


@contextlib.contextmanager
def http_server(status: int, body: bytes, headers: dict[str, str] | None = None) -> Iterator[str]:
    class Handler(http.server.BaseHTTPRequestHandler):
        def _answer(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            if length:
                self.rfile.read(length)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_PUT = do_DELETE = _answer  # noqa: N815

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def python_libraries(work: Path) -> None:
    import yaml

    capture("PyYAML", "unclosed flow", lambda: yaml.safe_load("a: [1, 2"))
    capture("PyYAML", "bad indentation", lambda: yaml.safe_load("a:\n  b: 1\n c: 2"))
    capture("PyYAML", "tab", lambda: yaml.safe_load("a:\n\tb: 1"))
    capture("PyYAML", "unknown tag", lambda: yaml.safe_load("!!python/object:os.system x"))
    capture("PyYAML", "duplicate anchor alias", lambda: yaml.safe_load("a: *missing"))

    import jsonschema

    schema = {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}, "s": {"enum": ["a", "b"]}},
              "required": ["n"], "additionalProperties": False}  # fmt: skip
    capture("jsonschema", "wrong type", lambda: jsonschema.validate({"n": "x"}, schema))
    capture("jsonschema", "below minimum", lambda: jsonschema.validate({"n": 0}, schema))
    capture("jsonschema", "not in enum", lambda: jsonschema.validate({"n": 1, "s": "c"}, schema))
    capture("jsonschema", "missing required", lambda: jsonschema.validate({}, schema))
    capture("jsonschema", "additional property", lambda: jsonschema.validate({"n": 1, "x": 2}, schema))

    import tomllib

    import toml

    capture("toml (PyPI)", "unclosed string", lambda: toml.loads('a = "x'))
    capture("toml (PyPI)", "duplicate key", lambda: toml.loads("a = 1\na = 2"))
    capture("tomllib", "bad value", lambda: tomllib.loads("a = @"))

    from lxml import etree

    capture("lxml", "mismatched tag", lambda: etree.fromstring(b"<a><b></a>"))
    capture("lxml", "empty document", lambda: etree.fromstring(b""))
    capture("lxml", "undefined entity", lambda: etree.fromstring(b"<a>&nope;</a>"))

    bad_gzip = work / "bad.gz"
    bad_gzip.write_bytes(b"not gzip at all")
    capture("Python gzip", "not gzip", lambda: gzip.decompress(b"not gzip at all"))
    capture("Python gzip", "truncated", lambda: gzip.decompress(gzip.compress(b"x" * 1000)[:20]))
    capture("Python zipfile", "not a zip", lambda: zipfile.ZipFile(io.BytesIO(b"nope")))

    import paramiko

    def ssh_connect() -> None:
        client = paramiko.SSHClient()
        client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
        client.connect("127.0.0.1", port=PORT, username="x", password="y", timeout=3)

    capture("paramiko", "closed port", ssh_connect)
    capture("paramiko", "bad key file", lambda: paramiko.RSAKey.from_private_key_file(str(bad_gzip)))
    capture("paramiko", "missing key file", lambda: paramiko.RSAKey.from_private_key_file(str(work / "none")))

    import pymysql

    capture("PyMySQL", "closed port", lambda: pymysql.connect(host="127.0.0.1", port=PORT, connect_timeout=3))
    import pymongo

    def mongo() -> None:
        client = pymongo.MongoClient(f"mongodb://127.0.0.1:{PORT}", serverSelectionTimeoutMS=800)
        client.admin.command("ping")

    capture("pymongo", "closed port", mongo)
    capture("pymongo", "bad URI", lambda: pymongo.MongoClient("mongodb://a:b:c@host:port"))
    capture("pymongo", "bad option", lambda: pymongo.MongoClient("mongodb://127.0.0.1/?nosuchoption=1&w=abc"))

    from kafka import KafkaProducer

    capture(
        "kafka-python", "no brokers", lambda: KafkaProducer(bootstrap_servers=f"127.0.0.1:{PORT}", max_block_ms=1500)
    )
    import pika

    capture(
        "pika",
        "closed port",
        lambda: pika.BlockingConnection(
            pika.ConnectionParameters("127.0.0.1", PORT, connection_attempts=1, socket_timeout=2)
        ),
    )
    import elasticsearch

    def es() -> None:
        elasticsearch.Elasticsearch(f"http://127.0.0.1:{PORT}", request_timeout=2, max_retries=0).info()

    capture("elasticsearch-py", "closed port", es)
    import ldap3

    capture(
        "ldap3",
        "closed port",
        lambda: ldap3.Connection(ldap3.Server("127.0.0.1", port=PORT, connect_timeout=2), auto_bind=True),
    )
    capture("ldap3", "bad filter", lambda: ldap3.Connection(ldap3.Server("127.0.0.1", port=PORT)).search("o=x", "bad"))
    import smtplib

    capture("smtplib", "closed port", lambda: smtplib.SMTP("127.0.0.1", PORT, timeout=2))
    import ftplib

    capture("ftplib", "closed port", lambda: ftplib.FTP().connect("127.0.0.1", PORT, timeout=2))

    import docker

    capture("docker SDK", "no daemon", lambda: docker.DockerClient(base_url=f"unix://{work}/docker.sock").ping())
    capture("docker SDK", "bad URL scheme", lambda: docker.DockerClient(base_url="gopher://x"))
    import kubernetes

    capture("kubernetes client", "no config", lambda: kubernetes.config.load_kube_config(config_file=str(work / "kc")))

    import boto3
    import botocore.config

    os.environ.pop("AWS_ACCESS_KEY_ID", None)
    os.environ["AWS_CONFIG_FILE"] = os.environ["AWS_SHARED_CREDENTIALS_FILE"] = str(work / "aws-none")
    os.environ["AWS_EC2_METADATA_DISABLED"] = "true"
    capture(
        "boto3",
        "no credentials",
        lambda: boto3.client("s3", region_name="us-east-1", endpoint_url=f"http://127.0.0.1:{PORT}").list_buckets(),
    )
    capture("boto3", "no region", lambda: boto3.client("sqs").list_queues())
    capture("boto3", "unknown service", lambda: boto3.client("nosuchservice", region_name="us-east-1"))
    capture(
        "boto3",
        "bad parameter",
        lambda: boto3.client(
            "s3", region_name="us-east-1", aws_access_key_id="a", aws_secret_access_key="b"
        ).get_object(Bucket="b"),
    )
    cfg = botocore.config.Config(connect_timeout=1, retries={"max_attempts": 0})
    capture(
        "boto3",
        "closed endpoint",
        lambda: boto3.client(
            "s3",
            region_name="us-east-1",
            aws_access_key_id="a",
            aws_secret_access_key="b",
            endpoint_url=f"http://127.0.0.1:{PORT}",
            config=cfg,
        ).list_buckets(),
    )

    import sqlalchemy

    capture("SQLAlchemy", "unknown dialect", lambda: sqlalchemy.create_engine("nosuchdb://x"))
    capture("SQLAlchemy", "bad URL", lambda: sqlalchemy.create_engine("this is not a url"))
    capture(
        "SQLAlchemy",
        "closed port",
        lambda: sqlalchemy.create_engine(
            f"mysql+pymysql://u:p@127.0.0.1:{PORT}/db", connect_args={"connect_timeout": 2}
        ).connect(),
    )

    import grpc

    def grpc_call() -> None:
        channel = grpc.insecure_channel(f"127.0.0.1:{PORT}")
        channel.unary_unary("/svc/Method")(b"", timeout=2)

    capture("grpcio", "closed port", grpc_call)

    import cassandra.cluster

    capture(
        "cassandra-driver",
        "closed port",
        lambda: cassandra.cluster.Cluster(["127.0.0.1"], port=PORT, connect_timeout=2).connect(),
    )
    import neo4j

    def neo() -> None:
        with neo4j.GraphDatabase.driver(f"bolt://127.0.0.1:{PORT}", auth=("a", "b"), connection_timeout=2) as d:
            d.verify_connectivity()

    capture("neo4j", "closed port", neo)
    capture("neo4j", "bad scheme", lambda: neo4j.GraphDatabase.driver("nosuch://127.0.0.1"))

    import websockets.sync.client

    capture(
        "websockets", "closed port", lambda: websockets.sync.client.connect(f"ws://127.0.0.1:{PORT}", open_timeout=2)
    )
    capture("websockets", "bad URI", lambda: websockets.sync.client.connect("http://127.0.0.1/x"))

    import pydantic

    class Order(pydantic.BaseModel):
        quantity: pydantic.PositiveInt
        email: str = pydantic.Field(pattern=r"^[^@]+@[^@]+$")

    capture("pydantic", "not positive", lambda: Order(quantity=0, email="a@b"))
    capture("pydantic", "pattern", lambda: Order(quantity=1, email="nope"))

    import marshmallow

    class Schema(marshmallow.Schema):
        age = marshmallow.fields.Integer(required=True)

    capture("marshmallow", "not an integer", lambda: Schema().load({"age": "old"}))
    capture("marshmallow", "unknown field", lambda: Schema().load({"age": 1, "x": 2}))

    import jwt

    capture(
        "PyJWT",
        "expired",
        lambda: jwt.decode(jwt.encode({"exp": 1}, "k", algorithm="HS256"), "k", algorithms=["HS256"]),
    )
    capture(
        "PyJWT",
        "bad signature",
        lambda: jwt.decode(jwt.encode({"a": 1}, "k", algorithm="HS256"), "other", algorithms=["HS256"]),
    )
    capture("PyJWT", "malformed", lambda: jwt.decode("not.a.token", "k", algorithms=["HS256"]))


def saas_sdks() -> None:
    import anthropic
    import openai

    cases = [
        (401, {"error": {"message": "Incorrect API key provided: sk-x.", "type": "invalid_request_error"}}),
        (429, {"error": {"message": "Rate limit reached for requests", "type": "requests"}}),
        (404, {"error": {"message": "The model `gpt-9` does not exist", "type": "invalid_request_error"}}),
    ]
    for status, body in cases:
        with http_server(status, json.dumps(body).encode()) as url:
            client = openai.OpenAI(api_key="sk-x", base_url=url, max_retries=0)
            capture("openai SDK", f"HTTP {status}", lambda c=client: c.models.list())
    for status, kind in ((401, "authentication_error"), (529, "overloaded_error"), (400, "invalid_request_error")):
        body = {"type": "error", "error": {"type": kind, "message": "x"}}
        with http_server(status, json.dumps(body).encode()) as url:
            client2 = anthropic.Anthropic(api_key="x", base_url=url, max_retries=0)
            capture("anthropic SDK", f"HTTP {status}", lambda c=client2: c.models.list())
    import slack_sdk

    for error in ("invalid_auth", "channel_not_found", "ratelimited"):
        with http_server(200, json.dumps({"ok": False, "error": error}).encode()) as url:
            capture("slack_sdk", error, lambda u=url: slack_sdk.WebClient(token="x", base_url=u + "/").auth_test())
    import github

    for status, message in ((401, "Bad credentials"), (404, "Not Found"), (403, "API rate limit exceeded")):
        with http_server(status, json.dumps({"message": message}).encode()) as url:
            capture("PyGithub", f"HTTP {status}", lambda u=url: github.Github(base_url=u, retry=None).get_repo("a/b"))
    import hvac

    with http_server(403, json.dumps({"errors": ["permission denied"]}).encode()) as url:
        capture("hvac (Vault)", "HTTP 403", lambda u=url: hvac.Client(url=u, token="x").secrets.kv.v2.read_secret("a"))
    capture(
        "hvac (Vault)", "closed port", lambda: hvac.Client(url=f"http://127.0.0.1:{PORT}", timeout=2).sys.is_sealed()
    )


def commands(work: Path) -> None:
    (work / "bad.json").write_text('{"a": 1,}')
    command("jq", "bad JSON", ["jq", ".", str(work / "bad.json")])
    command("jq", "bad filter", ["jq", ".a[", str(work / "bad.json")])
    command("jq", "missing file", ["jq", ".", str(work / "none.json")])
    command("curl", "closed port", ["curl", "-sS", f"http://127.0.0.1:{PORT}/"])
    command("curl", "bad scheme", ["curl", "-sS", "gopherz://x"])
    command("curl", "unknown option", ["curl", "--no-such-flag", "http://127.0.0.1"])
    command("curl", "unresolvable host", ["curl", "-sS", "http://no-such-host.invalid/"])
    with http_server(401, b'{"error":"unauthorized"}') as url:
        command("curl", "HTTP 401 with --fail", ["curl", "-sS", "--fail", url])
    with http_server(503, b"busy") as url:
        command("curl", "HTTP 503 with --fail", ["curl", "-sS", "--fail", url])
    command("OpenSSH client", "closed port", ["ssh", "-o", "BatchMode=yes", "-p", str(PORT), "127.0.0.1", "true"])
    command("OpenSSH client", "unknown option", ["ssh", "-Z", "127.0.0.1"])
    command(
        "OpenSSH client",
        "missing identity",
        ["ssh", "-o", "BatchMode=yes", "-F", str(work / "no-config"), "127.0.0.1", "-p", str(PORT)],
    )
    (work / "notgz.tar.gz").write_bytes(b"nope")
    command("GNU tar", "not gzip", ["tar", "xzf", str(work / "notgz.tar.gz"), "-C", str(work)])
    command("GNU tar", "missing archive", ["tar", "xf", str(work / "none.tar")])
    command("GNU tar", "unknown option", ["tar", "--frobnicate"])
    command("gzip", "not gzip", ["gzip", "-t", str(work / "notgz.tar.gz")])
    command("gzip", "missing file", ["gzip", "-d", str(work / "none.gz")])
    command("unzip", "not a zip", ["unzip", "-t", str(work / "notgz.tar.gz")])
    command("xz", "not xz", ["xz", "-t", str(work / "notgz.tar.gz")])
    command("OpenSSL CLI", "bad key", ["openssl", "rsa", "-in", str(work / "notgz.tar.gz"), "-noout"])
    command("OpenSSL CLI", "unknown command", ["openssl", "frobnicate"])
    command("OpenSSL CLI", "closed port", ["openssl", "s_client", "-connect", f"127.0.0.1:{PORT}"],
            stdin=b"")  # fmt: skip
    pip = [PIP_PYTHON, "-m", "pip"]
    command("pip", "unknown option", [*pip, "install", "--frobnicate"])
    command("pip", "missing requirements file", [*pip, "install", "-r", str(work / "none.txt")])
    command("pip", "bad requirement", [*pip, "install", "--no-index", "pkg===!bad"])
    command("pip", "not installable directory", [*pip, "install", "--no-index", str(work / "broken")])
    (work / "package.json").write_text('{"name": "x", "version": "1.0.0", "scripts": {}}')
    command("npm", "missing script", ["npm", "run", "nosuchscript"], cwd=str(work))
    command("npm", "unknown command", ["npm", "frobnicate"], cwd=str(work))
    (work / "broken").mkdir()
    (work / "broken" / "package.json").write_text("{ not json")
    command("npm", "broken package.json", ["npm", "install", "--offline"], cwd=str(work / "broken"))
    command("npm", "missing local package", ["npm", "install", "--offline", str(work / "nowhere")], cwd=str(work))


def batch_two(work: Path) -> None:
    """Blind batch 2: other libraries and tools, against the same kinds of failure."""
    import urllib3

    pool = urllib3.PoolManager(retries=False, timeout=2)
    capture("urllib3", "closed port", lambda: pool.request("GET", f"http://127.0.0.1:{PORT}/"))
    capture("urllib3", "bad scheme", lambda: pool.request("GET", "gopherz://x/"))
    import httplib2

    capture("httplib2", "closed port", lambda: httplib2.Http(timeout=2).request(f"http://127.0.0.1:{PORT}/"))
    capture("httplib2", "relative URI", lambda: httplib2.Http().request("no-scheme"))
    import minio

    capture("minio", "closed port", lambda: minio.Minio(f"127.0.0.1:{PORT}", "a", "b", secure=False).list_buckets())
    capture("minio", "bad bucket name", lambda: minio.Minio("127.0.0.1:9", "a", "b", secure=False).bucket_exists("A"))
    with http_server(403, b"<Error><Code>AccessDenied</Code><Message>Access Denied.</Message></Error>") as url:
        endpoint = url.removeprefix("http://")
        capture("minio", "HTTP 403", lambda: minio.Minio(endpoint, "a", "b", secure=False).list_buckets())
    import qdrant_client

    capture(
        "qdrant-client",
        "closed port",
        lambda: qdrant_client.QdrantClient(url=f"http://127.0.0.1:{PORT}", timeout=2).get_collections(),
    )
    import clickhouse_connect

    capture(
        "clickhouse-connect",
        "closed port",
        lambda: clickhouse_connect.get_client(host="127.0.0.1", port=PORT, connect_timeout=2),
    )
    import paho.mqtt.client as mqtt

    capture(
        "paho-mqtt", "closed port", lambda: mqtt.Client(mqtt.CallbackAPIVersion.VERSION2).connect("127.0.0.1", PORT)
    )
    import kombu

    capture(
        "kombu",
        "closed port",
        lambda: kombu.Connection(f"amqp://127.0.0.1:{PORT}//", connect_timeout=2).ensure_connection(max_retries=1),
    )
    capture("kombu", "unknown transport", lambda: kombu.Connection("nosuch://x").connect())
    import twilio.http.http_client
    import twilio.rest

    for status, body in (
        (401, {"code": 20003, "message": "Authenticate", "status": 401}),
        (404, {"code": 20404, "message": "The requested resource was not found", "status": 404}),
        (429, {"code": 20429, "message": "Too Many Requests", "status": 429}),
    ):
        with http_server(status, json.dumps(body).encode()) as url:

            class Local(twilio.http.http_client.TwilioHttpClient):
                base = url

                def request(self, method: str, uri: str, *args: Any, **kwargs: Any) -> Any:
                    uri = uri.replace("https://api.twilio.com", self.base)
                    return super().request(method, uri, *args, **kwargs)

            client = twilio.rest.Client("ACx", "token", http_client=Local())
            capture("twilio", f"HTTP {status}", lambda c=client: c.messages.list(limit=1))
    import notion_client

    for status, code in ((401, "unauthorized"), (404, "object_not_found"), (409, "conflict_error")):
        body = {"object": "error", "status": status, "code": code, "message": f"x {code}"}
        with http_server(status, json.dumps(body).encode()) as url:
            capture(
                "notion-client", f"HTTP {status}", lambda u=url: notion_client.Client(auth="x", base_url=u).users.me()
            )
    (work / "x.txt").write_text("plain")
    command("zstd", "not zstd", ["zstd", "-t", str(work / "x.txt")])
    command("zstd", "missing file", ["zstd", "-d", str(work / "none.zst")])
    command("bzip2", "not bzip2", ["bzip2", "-t", str(work / "x.txt")])
    command("ssh-keygen", "not a key", ["ssh-keygen", "-l", "-f", str(work / "x.txt")])
    command("ssh-keygen", "unknown option", ["ssh-keygen", "-Q", "-Z"])
    command("GNU make", "no rule", ["make", "-f", "/dev/null", "nosuchtarget"])
    command("GNU make", "missing makefile", ["make", "-f", str(work / "none.mk")])
    command("perl", "syntax error", ["perl", "-e", "print(;"])
    command("perl", "missing script", ["perl", str(work / "none.pl")])


# Blind batch 3: MCP servers from PyPI (uvx) and npm, driven through the real `mcp` client, and
# Node client libraries (tools/blind_node_errors.mjs). Run with the project's venv (it has `mcp`):
#     uv run python tools/collect_blind.py --batch 3 --out /tmp/blind3.json
BATCH3_PYPI = {
    "excel": "excel-mcp-server==2.2.2",
    "markitdown": "markitdown-mcp==0.0.1a8",
    "shell": "mcp-shell-server==1.1.14",
    "neo4j": "mcp-neo4j-cypher==0.6.0",
    "elasticsearch": "elasticsearch-mcp-server==2.1.6",
}
BATCH3_NPM = ("mongodb-mcp-server@3.0.4", "@modelcontextprotocol/server-gitlab@2025.4.25")
BATCH3_NODE_LIBRARIES = (
    "axios", "got", "superagent", "node-fetch", "pg", "mysql2", "mongodb", "ioredis", "redis", "amqplib", "kafkajs",
    "cassandra-driver", "tedious", "@elastic/elasticsearch", "@aws-sdk/client-s3", "@azure/storage-blob",
    "@google-cloud/storage", "ssh2", "ldapjs", "nodemailer", "basic-ftp", "@grpc/grpc-js", "dockerode", "ws", "ajv",
    "js-yaml", "yaml", "zod", "jsonwebtoken", "stripe", "openai", "@anthropic-ai/sdk", "@slack/web-api",
)  # fmt: skip


def npm_install(folder: Path, packages: tuple[str, ...]) -> None:
    if (folder / "node_modules").exists():
        return
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "package.json").write_text('{"private": true}')
    subprocess.run(["npm", "install", "--no-audit", "--no-fund", "--silent", *packages], cwd=folder, check=True)


async def drive_server(source: str, argv: list[str], calls: list[tuple[str, str, dict[str, Any]]],
                       *, env: dict[str, str] | None = None, cwd: str | None = None) -> None:  # fmt: skip
    """Start one MCP server over stdio with the real client and keep each failing call's text."""
    import anyio
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client
    from mcp.shared.exceptions import MCPError

    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **(env or {})}, cwd=cwd)
    print(f"{source}: {len(calls)} calls", file=sys.stderr, flush=True)
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            with anyio.fail_after(240):
                async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                    await client.list_tools()
                    for label, tool, arguments in calls:
                        entry: dict[str, Any] = {"source": source, "label": label, "tool": tool, "arguments": arguments}
                        try:
                            with anyio.fail_after(60):
                                result = await client.call_tool(tool, arguments)
                            texts = [block.text for block in result.content if getattr(block, "text", None)]
                            entry.update(text="\n".join(texts)[:2000] or None, isError=bool(result.is_error),
                                         structured=result.structured_content)  # fmt: skip
                        except MCPError as error:
                            entry.update(text=error.message, jsonrpc_code=error.code)
                        except TimeoutError:
                            entry.update(text=None, note="no answer within 60 s")
                        CAPTURES.append(entry)
        except Exception as error:  # a server that cannot start is reported, with its stderr
            errlog.seek(0)
            CAPTURES.append({"source": source, "label": "could not start", "text": None, "note": repr(error)[:300],
                             "stderr_tail": errlog.read().strip().splitlines()[-5:]})  # fmt: skip


def batch_three(work: Path) -> None:
    """Blind batch 3: seven MCP servers (five from PyPI, two from npm) and Node client libraries."""
    import anyio

    def pypi(name: str, *command: str) -> tuple[str, list[str]]:
        spec = BATCH3_PYPI[name]
        return f"{spec} (MCP server, PyPI via uvx)", ["uvx", "--from", spec, *command]

    books = work / "books"
    books.mkdir()
    (books / "notes.xlsx").write_text("this is plain text, not a workbook")
    (books / "notes.txt").write_text("plain")

    async def servers() -> None:
        source, argv = pypi("excel", "excel-mcp-server", "stdio")
        await drive_server(source, argv, [
            ("create a workbook", "create_workbook", {"path": str(books / "sales.xlsx")}),
            ("missing workbook", "describe_workbook", {"path": str(books / "missing.xlsx")}),
            ("not a workbook", "describe_workbook", {"path": str(books / "notes.xlsx")}),
            ("wrong extension", "describe_workbook", {"path": str(books / "notes.txt")}),
            ("existing workbook", "create_workbook", {"path": str(books / "sales.xlsx")}),
            ("missing sheet", "describe_sheet", {"path": str(books / "sales.xlsx"), "sheet": "Nope"}),
            ("bad range", "read_range", {"path": str(books / "sales.xlsx"), "sheet": "Sheet1", "range": "A0:ZZ"}),
            ("bad sheet name", "create_sheet", {"path": str(books / "sales.xlsx"), "new_name": "bad/name"}),
            ("outside the folder", "describe_workbook", {"path": "/etc/passwd.xlsx"}),
        ], cwd=str(books))  # fmt: skip
        with http_server(404, b"<h1>Not Found</h1>") as missing, http_server(500, b"boom") as broken:
            source, argv = pypi("markitdown", "markitdown-mcp")
            (work / "broken.docx").write_bytes(b"PK\x03\x04 not really a docx")
            await drive_server(source, argv, [
                ("missing file", "convert_to_markdown", {"uri": f"file://{work}/missing.pdf"}),
                ("closed port", "convert_to_markdown", {"uri": f"http://127.0.0.1:{PORT}/report.pdf"}),
                ("unknown scheme", "convert_to_markdown", {"uri": "gopher://example/x"}),
                ("HTTP 404", "convert_to_markdown", {"uri": f"{missing}/report.pdf"}),
                ("HTTP 500", "convert_to_markdown", {"uri": f"{broken}/report.pdf"}),
                ("corrupt docx", "convert_to_markdown", {"uri": f"file://{work}/broken.docx"}),
            ])  # fmt: skip
        source, argv = pypi("shell", "mcp-shell-server")
        await drive_server(source, argv, [
            ("command not allowed", "shell_execute", {"command": ["rm", "-rf", str(work / "x")]}),
            ("missing file", "shell_execute", {"command": ["cat", str(work / "none.txt")]}),
            ("unknown option", "shell_execute", {"command": ["ls", "--frobnicate"]}),
            ("empty command", "shell_execute", {"command": []}),
            ("missing directory", "shell_execute", {"command": ["ls"], "directory": str(work / "nowhere")}),
            ("timeout", "shell_execute", {"command": ["sleep", "5"], "timeout": 1}),
        ], env={"ALLOW_COMMANDS": "ls,cat,echo,sleep"})  # fmt: skip
        source, argv = pypi("neo4j", "mcp-neo4j-cypher", "--db-url", f"bolt://127.0.0.1:{PORT}")
        await drive_server(source, argv, [
            ("closed port", "read_neo4j_cypher", {"query": "MATCH (n) RETURN n LIMIT 1"}),
            ("write in the read tool", "read_neo4j_cypher", {"query": "CREATE (n:Order {id: 1})"}),
            ("schema, closed port", "get_neo4j_schema", {}),
        ], env={"NEO4J_USERNAME": "neo4j", "NEO4J_PASSWORD": "x"})  # fmt: skip
        source, argv = pypi("elasticsearch", "elasticsearch-mcp-server")
        await drive_server(source, argv, [
            ("closed port", "list_indices", {}),
            ("closed port, get", "get_document", {"index": "orders", "id": "1"}),
        ], env={"ELASTICSEARCH_HOSTS": f"http://127.0.0.1:{PORT}"})  # fmt: skip
        product = {"X-Elastic-Product": "Elasticsearch"}
        for status, kind, reason, call in (
            (401, "security_exception", "missing authentication credentials", ("HTTP 401", "list_indices", {})),
            (
                404,
                "index_not_found_exception",
                "no such index [orders]",
                ("HTTP 404", "get_index", {"index": "orders"}),
            ),
        ):
            body = json.dumps({"error": {"type": kind, "reason": reason}, "status": status}).encode()
            with http_server(status, body, product) as url:
                await drive_server(source, argv, [call], env={"ELASTICSEARCH_HOSTS": url})
        with http_server(200, b'{"not": "elasticsearch"}') as url:
            await drive_server(
                source, argv, [("not Elasticsearch", "list_indices", {})], env={"ELASTICSEARCH_HOSTS": url}
            )

        bin_dir = npm_dir / "node_modules" / ".bin"
        mongo_timeout = "serverSelectionTimeoutMS=1500"
        mongo = f"{BATCH3_NPM[0]} (MCP server, npm)"
        await drive_server(mongo, [str(bin_dir / "mongodb-mcp-server")], [
            ("not connected", "find", {"connectionId": "default", "database": "shop", "collection": "orders"}),
            ("bad scheme", "connect", {"connectionString": "mongo://127.0.0.1/shop"}),
            ("closed port", "connect", {"connectionString": f"mongodb://127.0.0.1:{PORT}/shop?{mongo_timeout}"}),
        ], env={"MDB_MCP_TELEMETRY": "disabled"})  # fmt: skip
        gitlab = f"{BATCH3_NPM[1]} (MCP server, npm)"
        file_call = {"project_id": "group/app", "file_path": "README.md", "ref": "main"}
        gitlab_argv = [str(bin_dir / "mcp-server-gitlab")]
        token = {"GITLAB_PERSONAL_ACCESS_TOKEN": "x"}
        closed_api = {**token, "GITLAB_API_URL": f"http://127.0.0.1:{PORT}/api/v4"}
        await drive_server(gitlab, gitlab_argv, [("closed port", "get_file_contents", file_call)], env=closed_api)
        for status, body in (
            (401, {"message": "401 Unauthorized"}),
            (403, {"message": "403 Forbidden"}),
            (404, {"message": "404 File Not Found"}),
            (429, {"message": "Retry later"}),
            (500, {"message": "500 Internal Server Error"}),
        ):
            with http_server(status, json.dumps(body).encode()) as url:
                api = {**token, "GITLAB_API_URL": f"{url}/api/v4"}
                await drive_server(gitlab, gitlab_argv, [(f"HTTP {status}", "get_file_contents", file_call)], env=api)

    # BLIND3_NPM / BLIND3_NODE: folders where the packages are installed already (else a fresh npm install).
    npm_dir = Path(os.environ.get("BLIND3_NPM") or work / "npm")
    node_dir = Path(os.environ.get("BLIND3_NODE") or work / "node")
    npm_install(npm_dir, BATCH3_NPM)
    anyio.run(servers)
    npm_install(node_dir, BATCH3_NODE_LIBRARIES)
    script = Path(__file__).resolve().parent / "blind_node_errors.mjs"
    done = subprocess.run(["node", str(script), str(PORT), str(work)], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "NODE_PATH": str(node_dir / "node_modules")}, check=False)  # fmt: skip
    try:
        CAPTURES.extend(json.loads(done.stdout))
    except ValueError:
        CAPTURES.append({"source": "blind_node_errors.mjs", "label": "part failed", "text": None,
                         "note": done.stderr[-500:]})  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--batch", type=int, default=1, choices=(1, 2, 3))
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="blind-") as temp:
        work = Path(temp)
        parts = {
            1: (lambda: python_libraries(work), saas_sdks, lambda: commands(work)),
            2: (lambda: batch_two(work),),
            3: (lambda: batch_three(work),),
        }[options.batch]
        for part in parts:
            try:
                part()
            except Exception as error:  # a part that cannot run is reported, not fatal
                CAPTURES.append({"source": "collector", "label": "part failed", "text": None, "note": repr(error)})
    options.out.write_text(json.dumps(CAPTURES, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    captured = [entry for entry in CAPTURES if entry.get("text")]
    print(f"{len(captured)} texts from {len({entry['source'] for entry in captured})} sources; "
          f"{len(CAPTURES) - len(captured)} did not fail or could not run")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
