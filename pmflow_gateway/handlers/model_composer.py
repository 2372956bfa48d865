"""The model composer: a `ChatModel` writes `{answer, citations[]}` from numbered, cleaned
evidence; on a timeout, an error or bad output it falls back to the extractive composer."""

from __future__ import annotations

import asyncio
import json
from importlib import resources

from pydantic import BaseModel, ConfigDict, ValidationError

from pmflow_gateway.contract.text import asked_text, clean_sentences, clean_text, strip_invisible
from pmflow_gateway.handlers.composers import EXTRACTIVE, compose_extractive
from pmflow_gateway.ports import ChatModel, Composer, Draft
from pmflow_gateway.schemas import ExternalEvidence, ExternalQueryPlan


class ComposedAnswer(BaseModel):
    """The structured output the model must return."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    answer: str
    citations: list[int]


COMPOSED_ANSWER_SCHEMA = ComposedAnswer.model_json_schema()


def composer_prompt() -> str:
    return resources.files("pmflow_gateway").joinpath("prompts/composer.md").read_text("utf-8")


def evidence_block(items: list[ExternalEvidence], *, asked: str = "") -> str:
    """Numbered, cleaned evidence inside one delimited data block; no URLs are shown."""
    lines = ["<evidence>"]
    for n, item in enumerate(items, start=1):
        title = " ".join(clean_sentences(item.title, asked=asked))
        lines.append(f"[{n}] title: {title}")
        lines.append(f"    text: {clean_text(item.snippet, asked=asked)}")
    lines.append("</evidence>")
    return "\n".join(lines)


def composer_messages(question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence]) -> list[dict[str, str]]:
    fields = {"answer_contract": plan.answer_contract.value, "topic": plan.topic,
              "subject_entities": plan.subject_entities, "location_hint": plan.location_hint,
              "time_range_hint": plan.time_range_hint}
    user = (f"Question: {strip_invisible(question)}\n"
            f"Plan: {json.dumps(fields, ensure_ascii=False)}\n"
            f"Evidence items: 1..{len(items)}\n\n"
            f"{evidence_block(items, asked=asked_text(question, plan))}")
    return [{"role": "system", "content": composer_prompt()},
            {"role": "user", "content": user}]


def make_composer(model: ChatModel | None, *, timeout_s: float = 10.0) -> Composer:
    """What bootstrap wires: the model composer when a model is configured, else extractive."""
    return EXTRACTIVE if model is None else ModelComposer(model, timeout_s=timeout_s)


class ModelComposer:
    """A `ChatModel` writes the answer; any failure falls back to the extractive composer."""

    name = "model"

    def __init__(self, model: ChatModel, *, timeout_s: float = 10.0) -> None:
        self.model = model
        self.timeout_s = timeout_s

    async def compose(self, question: str, plan: ExternalQueryPlan,
                      items: list[ExternalEvidence], *, timeout_s: float) -> Draft:
        limit = min(self.timeout_s, timeout_s)
        try:
            # The outer timeout guards models whose client ignores its own timeout.
            async with asyncio.timeout(limit + 0.5):
                raw = await self.model.complete_json(
                    composer_messages(question, plan, items), schema=COMPOSED_ANSWER_SCHEMA,
                    schema_name="composed_answer", timeout_s=limit)
            parsed = ComposedAnswer.model_validate_json(raw)
        except TimeoutError:
            return self._fallback(question, plan, items, "model timeout")
        except ValidationError as exc:
            return self._fallback(question, plan, items,
                                  f"model output invalid: {exc.error_count()} error(s)")
        # ModelError (a refusal, a truncated output, an endpoint failure) and whatever another
        # ChatModel raises: a model failure degrades the answer to extractive, it never fails
        # the question; the reason says which.
        except Exception as exc:
            return self._fallback(question, plan, items,
                                  f"model error: {type(exc).__name__}: {exc}"[:200])
        answer = strip_invisible(parsed.answer).strip()
        if not answer:
            return self._fallback(question, plan, items, "model answer empty")
        return Draft(answer=answer, cited=parsed.citations, composer="model")

    @staticmethod
    def _fallback(question: str, plan: ExternalQueryPlan, items: list[ExternalEvidence],
                  why: str) -> Draft:
        draft = compose_extractive(question, plan, items)
        return Draft(answer=draft.answer, cited=draft.cited, composer="extractive",
                     note=f"model composer fell back: {why}")
