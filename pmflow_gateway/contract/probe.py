"""The external probe's metrics: what a short look-up found, in the five numbers PMFlow's route
gateway weighs before it decides a route. Read from the evidence the look-up collected and
from what the verifier kept of it, by the same rules the answer would use."""

from __future__ import annotations

from collections.abc import Sequence

from pmflow_gateway.contract.agreement import disagreement
from pmflow_gateway.contract.relevance import off_topic
from pmflow_gateway.contract.urls import site_of
from pmflow_gateway.contract.verify import evidence_text
from pmflow_gateway.schemas import ExternalEvidence, ExternalQueryPlan, ProbeMetrics

# The authority score (`contract.scoring.authority_score`) of a page on a preferred domain,
# or of an official site (.gov, .edu, .org) served over https.
TRUSTED_AUTHORITY = 0.7


def probe_metrics(plan: ExternalQueryPlan, collected: Sequence[ExternalEvidence],
                  kept: Sequence[ExternalEvidence]) -> ProbeMetrics:
    """`collected`: every page the look-up found; `kept`: those the verifier kept."""
    sites = list(dict.fromkeys(site_of(item.target_url) for item in kept))
    agree = len(sites) >= 2 and disagreement(
        plan, [(site_of(i.target_url), evidence_text(i)) for i in kept]) is None
    return ProbeMetrics(
        freshness_required=plan.freshness_required,
        trusted_domain_hit_count=sum(i.authority_score >= TRUSTED_AUTHORITY for i in collected),
        answerable_page_hit_count=len(kept),
        cross_source_agreement=1.0 if agree else 0.0,
        external_entity_hit=any(off_topic(plan, evidence_text(i)) is None for i in collected),
    )
