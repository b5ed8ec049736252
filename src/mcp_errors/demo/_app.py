"""The desk as an ASGI app factory, for `serve --http PORT --workers N` (uvicorn's workers).

uvicorn starts each worker in a new process and calls `make_app()` there with no
arguments, so `serve` passes the desk's configuration through one environment variable.
Every replica is stateless (`stateless_http=True`): any replica can answer any request,
which is what a load balancer in front of them needs.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict
from typing import Any, Final

from starlette.applications import Starlette

from mcp_errors.demo._faults import FaultConfig
from mcp_errors.demo._server import DeskConfig, build_server

__all__ = ["CONFIG_ENV", "config_to_env", "make_app"]

CONFIG_ENV: Final = "MCP_ERRORS_DESK_CONFIG"
"""Environment variable holding the replicas' `DeskConfig` (JSON), set by `serve`."""


def config_to_env(config: DeskConfig, *, host: str) -> str:
    """`config` (and the host the replicas serve on) as the JSON `make_app` reads."""
    data: dict[str, Any] = asdict(config)
    data["db"] = str(config.db)
    data["faults"]["outages"] = sorted(config.faults.outages)
    data["host"] = host
    return json.dumps(data)


def make_app() -> Starlette:
    """One replica of the desk: the streamable-HTTP app of `build_server`, stateless.

    Reads its configuration from `MCP_ERRORS_DESK_CONFIG` (see `config_to_env`).
    """
    data = json.loads(os.environ[CONFIG_ENV])
    faults = FaultConfig.build(**data.pop("faults"))
    host = data.pop("host")
    server = build_server(DeskConfig(faults=faults, **data))
    return server.streamable_http_app(stateless_http=True, host=host)
