"""An OpenAI-compatible chat model over httpx, asked for JSON matching a schema in strict mode.

Strict structured output takes a subset of JSON Schema: every property required, no extra
ones, no defaults. `strict_schema` turns a pydantic schema into that subset (an optional
field becomes nullable), and the reply's nulls for optional fields are dropped again, so the
caller validates against its own model and its defaults apply. A reply that is not a whole
answer (cut at the token limit, filtered, or a refusal) raises `ModelError` saying which:
the callers fall back to the rules path with that reason.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import httpx
from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode
from pydantic import SecretStr

_tracer = trace.get_tracer("pmflow_gateway.llm")
# Keywords strict mode refuses or ignores; the gateway validates bounds itself afterwards.
_UNSUPPORTED = ("default", "title", "maxLength", "minLength", "examples")


class ModelError(RuntimeError):
    """The model endpoint failed or answered with something that is not a completion."""


class ModelRefused(ModelError):
    """The model declined (a refusal, or a content filter stopped it)."""


class ModelTruncated(ModelError):
    """The model's output was cut off before it ended (`finish_reason: length`)."""


class OpenAIChatModel:
    """`POST {base_url}/chat/completions` with a strict `json_schema` response, temperature 0."""

    def __init__(self, *, base_url: str, model: str, api_key: SecretStr | str | None = None,
                 client: httpx.AsyncClient | None = None) -> None:
        self.model = model
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = SecretStr(api_key) if isinstance(api_key, str) else api_key
        self._client = client or httpx.AsyncClient()

    def __repr__(self) -> str:  # never the key
        return f"OpenAIChatModel(url={self._url!r}, model={self.model!r})"

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
                "json_schema": {"name": schema_name, "schema": strict_schema(schema),
                                "strict": True},
            },
        }
        # A GenAI client span (OpenTelemetry gen_ai conventions); no prompt content recorded.
        with _tracer.start_as_current_span(f"chat {self.model}", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
                "gen_ai.request.model": self.model, "gen_ai.request.temperature": 0.0,
                "gen_ai.output.type": "json"}) as span:
            try:
                response = await self._client.post(self._url, json=body, headers=self._headers(),
                                                   timeout=timeout_s)
                response.raise_for_status()
                reply = response.json()
                choice = reply["choices"][0]
                message = choice["message"]
            except httpx.TimeoutException as exc:
                span.set_attribute("error.type", "timeout")
                span.set_status(StatusCode.ERROR, "timeout")
                raise TimeoutError(f"model call timed out after {timeout_s:.1f}s") from exc
            except (httpx.HTTPError, KeyError, IndexError, TypeError, ValueError) as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(StatusCode.ERROR, str(exc)[:200])
                raise ModelError(f"model call failed: {exc!r}") from exc
            _record_response(span, reply, choice)
            try:
                content = _content(choice, message)
            except ModelError as exc:
                span.set_attribute("error.type", type(exc).__name__)
                span.set_status(StatusCode.ERROR, str(exc)[:200])
                raise
        return _without_optional_nulls(content, schema)

    def _headers(self) -> dict[str, str]:
        if self._api_key is None:
            return {}
        return {"Authorization": f"Bearer {self._api_key.get_secret_value()}"}

    async def aclose(self) -> None:
        await self._client.aclose()


def _content(choice: dict[str, Any], message: Any) -> str:
    """The reply's text, or why there is no whole answer in it."""
    refusal = message.get("refusal") if isinstance(message, dict) else None
    if isinstance(refusal, str) and refusal.strip():
        raise ModelRefused(f"the model refused: {' '.join(refusal.split())[:200]}")
    finish = choice.get("finish_reason")
    if finish == "content_filter":
        raise ModelRefused("the model's output was stopped by its content filter")
    if finish == "length":
        raise ModelTruncated("the model's output was cut off at its token limit")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str):
        raise ModelError("model returned no text content")
    return content


def _record_response(span: trace.Span, reply: Any, choice: dict[str, Any]) -> None:
    usage = reply.get("usage") if isinstance(reply, dict) else None
    if isinstance(usage, dict):
        span.set_attributes({
            "gen_ai.usage.input_tokens": int(usage.get("prompt_tokens") or 0),
            "gen_ai.usage.output_tokens": int(usage.get("completion_tokens") or 0)})
    if isinstance(reply, dict) and isinstance(reply.get("model"), str):
        span.set_attribute("gen_ai.response.model", reply["model"])
    if isinstance(choice.get("finish_reason"), str):
        span.set_attribute("gen_ai.response.finish_reasons", [choice["finish_reason"]])


def strict_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """`schema` as strict structured output accepts it: every object closed with all its
    properties required, an optional one nullable instead, unsupported keywords dropped."""
    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(item) for item in node]
        if not isinstance(node, dict):
            return node
        out = {key: ({name: walk(sub) for name, sub in value.items()}  # names, not keywords
                     if key in ("properties", "$defs") else walk(value))
               for key, value in node.items() if key not in _UNSUPPORTED}
        if "properties" in node:
            required = set(node.get("required", []))
            out["properties"] = {name: prop if name in required else _nullable(prop)
                                 for name, prop in out["properties"].items()}
            out["required"] = list(out["properties"])
            out["additionalProperties"] = False
        return out

    strict = walk(schema)
    assert isinstance(strict, dict)
    return strict


def _nullable(prop: dict[str, Any]) -> dict[str, Any]:
    options = prop.get("anyOf")
    if isinstance(options, list) and {"type": "null"} in options:
        return prop
    described = {k: v for k, v in prop.items() if k == "description"}
    inner = {k: v for k, v in prop.items() if k != "description"}
    return {**described, "anyOf": [inner, {"type": "null"}]}


def _without_optional_nulls(content: str, schema: dict[str, Any]) -> str:
    """The reply with a null dropped wherever the caller's schema has an optional field, so
    the caller's default applies as if the field were left out."""
    try:
        value = json.loads(content)
    except ValueError:
        return content  # not JSON at all: the caller reports it
    if not isinstance(value, dict):
        return content
    required = set(schema.get("required", []))
    kept = {k: v for k, v in value.items() if v is not None or k in required}
    return content if len(kept) == len(value) else json.dumps(kept, ensure_ascii=False)
