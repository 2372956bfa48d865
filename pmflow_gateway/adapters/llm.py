"""An OpenAI-compatible chat model over httpx, asked for JSON matching a schema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx


class ModelError(RuntimeError):
    """The model endpoint failed or answered with something that is not a completion."""


class OpenAIChatModel:
    """`POST {base_url}/chat/completions` with `response_format` json_schema, temperature 0."""

    def __init__(self, *, base_url: str, model: str, api_key: str | None = None,
                 client: httpx.AsyncClient | None = None) -> None:
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = client or httpx.AsyncClient()

    async def complete_json(
        self,
        messages: Sequence[dict[str, str]],
        *,
        schema: dict[str, Any],
        schema_name: str,
        timeout_s: float,
    ) -> str:
        body = {
            "model": self.model,
            "temperature": 0,
            "messages": list(messages),
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": schema_name, "schema": schema, "strict": False},
            },
        }
        try:
            response = await self._client.post(self._url, json=body, headers=self._headers,
                                               timeout=timeout_s)
            response.raise_for_status()
            content = response.json()["choices"][0]["message"]["content"]
        except httpx.TimeoutException as exc:
            raise TimeoutError(f"model call timed out after {timeout_s:.1f}s") from exc
        except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
            raise ModelError(f"model call failed: {exc!r}") from exc
        if not isinstance(content, str):
            raise ModelError("model returned no text content")
        return content

    async def aclose(self) -> None:
        await self._client.aclose()
