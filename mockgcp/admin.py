"""mockgcp's own control endpoint: the fault rules of a running server.

``/_mockgcp/faults`` takes the rules the ``--faults`` file holds (a JSON or
YAML list; mockgcp.faults.parse_rules), so a test can start an outage and end
it without restarting the server:

* ``GET``: the rules in force, each with how many times it has fired;
* ``POST``: add rules (after those in force);
* ``PUT``: replace every rule;
* ``DELETE``: clear them.

Each answers 200 with ``{"faults": [...]}``, the rules in force afterwards; a
bad rule is 400 naming its index and key, and changes nothing. The path is no
API's (none has a host named ``_mockgcp``), its exchanges are not GCP traffic,
so they are not in the request log and no fault applies to them.
"""

from __future__ import annotations

from typing import Any

import yaml

from kccgen.mockgcp.errors import ApiError
from kccgen.mockgcp.faults import FaultSet, parse_rules

PATH = "/_mockgcp/faults"


def is_admin(path: str) -> bool:
    return path.rstrip("/") == PATH


def faults(fs: FaultSet, method: str, body: Any) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) for one request to the faults endpoint."""
    if method == "GET":
        return 200, {"faults": fs.describe()}
    if method == "DELETE":
        fs.clear()
        return 200, {"faults": []}
    if method not in ("POST", "PUT"):
        return 405, ApiError(405, f"{PATH} takes GET, POST, PUT or DELETE, not {method}", "METHOD_NOT_ALLOWED").body(False)
    raw = body
    if isinstance(body, str):  # not JSON: the YAML a --faults file may hold
        try:
            raw = yaml.safe_load(body)
        except yaml.YAMLError as e:
            return 400, ApiError(400, f"{PATH}: the body is neither JSON nor YAML: {' '.join(str(e).split())}").body(False)
    try:
        rules = parse_rules(raw, f"{method} {PATH}")
    except ValueError as e:
        return 400, ApiError(400, str(e)).body(False)
    if method == "PUT":
        fs.replace(rules)
    else:
        fs.extend(rules)
    return 200, {"faults": fs.describe()}
