"""An OpenAI-compatible chat model over httpx, asked for JSON matching a schema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

_tracer = trace.get_tracer("pmflow_gateway.llm")


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
        # A GenAI client span (OpenTelemetry gen_ai conventions); no prompt content recorded.
        with _tracer.start_as_current_span(f"chat {self.model}", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": self.model, "gen_ai.request.temperature": 0.0,
                "gen_ai.output.type": "json"}) as span:
            try:
                response = await self._client.post(self._url, json=body, headers=self._headers,
                                                   timeout=timeout_s)
                response.raise_for_status()
                reply = response.json()
                content = reply["choices"][0]["message"]["content"]
            except httpx.TimeoutException as exc:
                span.set_attribute("error.type", "timeout")
                span.set_status(StatusCode.ERROR, "timeout")
                raise TimeoutError(f"model call timed out after {timeout_s:.1f}s") from exc
            except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(StatusCode.ERROR, str(exc)[:200])
                raise ModelError(f"model call failed: {exc!r}") from exc
            usage = reply.get("usage") if isinstance(reply, dict) else None
            if isinstance(usage, dict):
                span.set_attributes({
                    "gen_ai.usage.input_tokens": int(usage.get("prompt_tokens") or 0),
                    "gen_ai.usage.output_tokens": int(usage.get("completion_tokens") or 0)})
            if isinstance(reply, dict) and isinstance(reply.get("model"), str):
                span.set_attribute("gen_ai.response.model", reply["model"])
        if not isinstance(content, str):
            raise ModelError("model returned no text content")
        return content

    async def aclose(self) -> None:
        await self._client.aclose()
