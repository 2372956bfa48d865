"""Third-party MCP servers from npm (tests/support/npm), installed by scripts/install into the
venv's `npm-tools`. A test that needs one and cannot have it skips, or, under
`PMFLOW_TEST_SERVICES=env` (CI), fails saying what is missing."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.services import mode_of

NPM_TOOLS = Path(sys.prefix) / "npm-tools" / "node_modules"


def npm_server(package: str, entry: str = "dist/cli.js") -> list[str]:
    """The command that starts `package`'s MCP server over stdio."""
    script = NPM_TOOLS / package / entry
    node = shutil.which("node")
    if node and script.is_file():
        return [node, str(script)]
    why = (f"{package} is not installed in {NPM_TOOLS.parent} (scripts/install runs npm ci)"
           if node else "node is not on PATH")
    if mode_of(os.environ) == "env":
        pytest.fail(f"PMFLOW_TEST_SERVICES=env but {why}")
    pytest.skip(why)
