"""The release gates, shared by a fresh build and a prebuilt library with its record."""

from __future__ import annotations

from collections.abc import Sequence

from horon_bundle import codes
from horon_bundle.errors import Finding, Findings, Refused
from horon_bundle.evidence import Advertised
from horon_bundle.features import closure, proper
from horon_bundle.graph import Graph
from horon_bundle.qa_gate import QaProvider, find_qa_providers


def plugin_features(graph: Graph) -> tuple[str, ...]:
    """The plugin package's compiled features for the target: plugin.json `features`."""
    root = graph.root_package
    return proper(root.compiled.get("target", ()), root.feature_table)


def graph_findings(graph: Graph, *, claim: Sequence[str], channel: str,
                   patterns: Sequence[str]) -> tuple[list[QaProvider], list[Finding]]:
    """QA providers of the graph, and the findings: QA providers in a release, drift."""
    findings = Findings()
    providers = find_qa_providers(graph, patterns=patterns, claim=claim)
    if channel == "release":
        for provider in providers:
            findings.add(codes.GRAPH_QA_PROVIDER, f"{provider.reason}: {provider.chain}")
    root = graph.root_package
    compiled = set(plugin_features(graph))
    expected = closure(claim, root.feature_table)
    if compiled != expected:
        extra = sorted(compiled - expected)
        lacking = sorted(expected - compiled)
        findings.add(codes.FEATURES_DRIFT,
                     f"{root.name} compiled {sorted(compiled)}; the claim {list(claim)} closes to "
                     f"{sorted(expected)}" + (f" (extra: {extra})" if extra else "")
                     + (f" (missing: {lacking})" if lacking else ""))
    return providers, list(findings)


def judge_graph(graph: Graph, *, claim: Sequence[str], channel: str,
                patterns: Sequence[str]) -> list[QaProvider]:
    """Refuse a release graph with a QA provider (naming each chain) or with drift."""
    providers, findings = graph_findings(graph, claim=claim, channel=channel, patterns=patterns)
    if findings:
        raise Refused(findings)
    return providers


def advertised_findings(advertised: Advertised, *, features: Sequence[str],
                        plugin_id: str, who: str = "the library") -> list[Finding]:
    """Claimed = advertised; `who` names where the advertised metadata was read from."""
    findings = Findings()
    if tuple(advertised.features) != tuple(features):
        findings.add(codes.FEATURES_MISMATCH,
                     f"{who} advertises {list(advertised.features)}, plugin.json would "
                     f"list {list(features)} (compiled)")
    if advertised.plugin_id != plugin_id:
        findings.add(codes.ABI_METADATA,
                     f"{who} advertises plugin id {advertised.plugin_id!r}, declared "
                     f"{plugin_id!r}")
    if advertised.abi_major != 1:
        findings.add(codes.ABI_METADATA, f"{who} advertises ABI major "
                                         f"{advertised.abi_major}, bundles are ABI v1")
    if advertised.wire_schema != "horon.wire.v1":
        findings.add(codes.ABI_METADATA,
                     f"{who} advertises wire schema {advertised.wire_schema!r}")
    return list(findings)


def check_advertised(advertised: Advertised, *, features: Sequence[str], plugin_id: str) -> None:
    findings = advertised_findings(advertised, features=features, plugin_id=plugin_id)
    if findings:
        raise Refused(findings)
