"""Tenants by credential: the tokens file, the constant-time lookup and the rebinding guard's
Host list for each kind of bind address."""

from __future__ import annotations

import argparse
import hashlib
from pathlib import Path

import pytest

from pmflow_gateway.agent_tools.access import AccessConfigError, TenantTokens, rebinding_guard
from pmflow_gateway.agent_tools.serve import cmd_mcp
from pmflow_gateway.settings import Settings

ACME = "acme-token-5b0c2f4e0d7e4a36"
RIVAL = "rival-token-0d7e4a369d1e8f3f"


def tokens_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tokens.toml"
    path.write_text(text, encoding="utf-8")
    return path


async def test_a_token_names_its_tenant_whether_kept_plain_or_as_a_digest(
        tmp_path: Path) -> None:
    digest = hashlib.sha256(RIVAL.encode()).hexdigest()
    tokens = TenantTokens.load(tokens_file(tmp_path, (
        f'[[tokens]]\ntenant = "acme"\ntoken = "{ACME}"\n\n'
        f'[[tokens]]\ntenant = "rival"\nsha256 = "{digest}"\n')))
    assert (tokens.tenant_for(ACME), tokens.tenant_for(RIVAL)) == ("acme", "rival")
    assert tokens.tenant_for(ACME[:-1]) is None and tokens.tenant_for("") is None
    assert tokens.tenants == {"acme", "rival"}
    access = await tokens.verify_token(ACME)
    assert access is not None and access.client_id == "acme" and ACME not in access.token
    assert await tokens.verify_token("guess") is None


@pytest.mark.parametrize("text", [
    "", '[[tokens]]\ntenant = "acme"\ntoken = "short"\n',
    f'[[tokens]]\ntoken = "{ACME}"\n', '[[tokens]]\ntenant = "acme"\nsha256 = "zz"\n',
    f'[[tokens]]\ntenant = "acme"\ntoken = "{ACME}"\nsha256 = "{"0" * 64}"\n', "not toml [",
])
def test_an_unusable_tokens_file_is_refused_at_start(tmp_path: Path, text: str) -> None:
    with pytest.raises(AccessConfigError):
        TenantTokens.load(tokens_file(tmp_path, text))


def test_the_rebinding_guard_stays_on_for_every_bind_address() -> None:
    local = ["127.0.0.1:*", "localhost:*", "[::1]:*"]
    for host in ("127.0.0.1", "0.0.0.0", "::", "10.0.0.5"):
        guard = rebinding_guard(host, [])
        assert guard.enable_dns_rebinding_protection
        assert guard.allowed_hosts[:3] == local
    assert rebinding_guard("10.0.0.5", []).allowed_hosts[3:] == ["10.0.0.5:*"]
    assert rebinding_guard("0.0.0.0", []).allowed_hosts == local
    named = rebinding_guard("0.0.0.0", ["gateway.corp.example:443"])
    assert named.allowed_hosts == ["gateway.corp.example:443"]
    assert "https://gateway.corp.example:443" in named.allowed_origins


def test_http_without_a_tokens_file_does_not_start(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = argparse.Namespace(http=8765, host="127.0.0.1", kafka=None, demo=False)
    assert cmd_mcp(args, Settings(agent_tokens_file=None)) == 2
    assert "PMFLOW_AGENT_TOKENS_FILE" in capsys.readouterr().err
    broken = tokens_file(tmp_path, '[[tokens]]\ntenant = "acme"\ntoken = "short"\n')
    assert cmd_mcp(args, Settings(agent_tokens_file=broken)) == 2
