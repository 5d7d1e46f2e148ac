"""``/facts?user=L``: what the agent knows about a user, and since when.

Facts with a period (:mod:`langgraph_episodic.facts`), every version with what replaced or ended
it (with ``as_of=DATE`` also those true then); profile facts (``("user_profiles", L)``); entities
(``("entities", L)``). Each list is bounded (:data:`FACTS_CAP`, one page of the others).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from langgraph.store.base import BaseStore, Item
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from .._types import Namespace
from ..admin.browse import fact_state
from ..admin.transfer import namespace_page
from ..facts.recall import current_facts, fact_history, parse_as_of
from ..facts.records import FactRecord
from ..graph.profiles import UserFact
from ..kinds.namespaces import ENTITIES, USER_PROFILES
from . import data
from .access import requested_user
from .browse import offset_of
from .pages import render

FACTS_CAP = 500
"""Most fact versions read per namespace."""
AS_OF_K = 50
"""Most facts listed as true at a moment, per namespace."""
PAGE_SIZE = 50
"""Profile facts and entities per page."""


@dataclass(frozen=True)
class Version:
    key: str
    record: FactRecord

    @property
    def state(self) -> str:
        return fact_state(self.record)


@dataclass(frozen=True)
class Lineage:
    """One fact's versions, oldest first."""

    namespace: Namespace
    versions: tuple[Version, ...]


def histories(store: BaseStore, namespaces: list[Namespace]) -> list[Lineage]:
    """Every fact of these namespaces as its lineage of versions."""
    found: list[Lineage] = []
    for ns in namespaces:
        groups: dict[str, list[Version]] = {}
        for key, rec in fact_history(store, ns, limit=FACTS_CAP):
            groups.setdefault(rec.lineage, []).append(Version(key, rec))
        found.extend(Lineage(ns, tuple(v)) for v in groups.values())
    return found


def held_then(
    store: BaseStore, namespaces: list[Namespace], as_of: datetime
) -> list[tuple[Namespace, Version]]:
    """The facts that were true at ``as_of``, per namespace."""
    return [
        (ns, Version(key, rec))
        for ns in namespaces
        for key, rec in current_facts(store, ns, k=AS_OF_K, as_of=as_of)
    ]


@dataclass(frozen=True)
class Entity:
    key: str
    name: str
    description: str
    method: str


def _entity(item: Item) -> Entity:
    value = item.value
    return Entity(
        key=item.key,
        name=str(value.get("name", item.key)),
        description=str(value.get("description", value.get("text", ""))),
        method=str(value.get("method", "")),
    )


def _as_of(request: Request) -> datetime | None:
    raw = request.query_params.get("as_of", "").strip()
    if not raw:
        return None
    try:
        return parse_as_of(raw)  # a bare date is the start of that day, UTC
    except ValueError as error:
        raise HTTPException(400, str(error)) from None


def facts(request: Request) -> Response:
    label = requested_user(request)
    store = request.app.state.settings.store
    offset = offset_of(request)
    as_of = _as_of(request)
    namespaces = data.memory_namespace_list(store, label)
    profile_items, more_profile = namespace_page(store, (USER_PROFILES, label), offset, PAGE_SIZE)
    entity_items, more_entities = namespace_page(store, (ENTITIES, label), offset, PAGE_SIZE)
    return render(
        request, "facts.html", label=label, lineages=histories(store, namespaces),
        as_of=as_of, held=held_then(store, namespaces, as_of) if as_of else [],
        profile=[(UserFact.from_item(it), FactRecord.from_value(it.value)) for it in profile_items],
        entities=[_entity(it) for it in entity_items], offset=offset,
        more=more_profile or more_entities, page_size=PAGE_SIZE,
    )


routes = [Route("/facts", facts, name="facts")]
