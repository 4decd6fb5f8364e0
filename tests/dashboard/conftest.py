"""Two projects, two members, stored traffic with hostile strings: what every dashboard test starts from.

ann belongs to alpha only, ben to beta only. Alpha's traffic (service "alpha-svc") carries a tenant and a
route full of markup; beta's (service "beta-svc") carries names that must never show up on alpha's pages.
"""
from datetime import timedelta

import pytest
from django.contrib.auth.models import User

from analysis.rollups.materialize import materialize
from tests import factories as f
from tests import stored

HOSTILE_TENANT = '<script>alert("tenant")</script>'
HOSTILE_ROUTE = "/v1/chat\"'><img src=x onerror=alert(1)>"
BETA_SECRET = "beta-secret-tenant"
START, END = f.BASE - timedelta(minutes=5), f.BASE + timedelta(hours=1)
WINDOW = {"start": "2026-01-05T09:55:00Z", "end": "2026-01-05T11:00:00Z"}


@pytest.fixture
def members(alpha, beta):
    """{"ann": (user, alpha project, alpha key), "ben": (user, beta project, beta key)}."""
    ann = User.objects.create_user("ann", password="pw-ann")
    ben = User.objects.create_user("ben", password="pw-ben")
    alpha[0].members.add(ann)
    beta[0].members.add(ben)
    return {"ann": (ann, *alpha), "ben": (ben, *beta)}


@pytest.fixture
def traffic(members, ingest):
    """Alpha: 40 attempts (20 of the hostile tenant on the hostile route); beta: 10 of BETA_SECRET. Materialized."""
    _, alpha, alpha_key = members["ann"]
    _, beta, beta_key = members["ben"]

    def build():
        alpha_spans = [f.attempt(t_queue_ms=10.0 + i, tenant=HOSTILE_TENANT if i % 2 else "acme",
                                 route=HOSTILE_ROUTE if i % 2 else "/v1/chat/completions") for i in range(40)]
        beta_spans = [f.attempt(t_queue_ms=500.0, tenant=BETA_SECRET, route="/v1/beta-only") for _ in range(10)]
        ingest(alpha_key, f.request(*alpha_spans, service="alpha-svc"))
        ingest(beta_key, f.request(*beta_spans, service="beta-svc"))
        for project in (alpha, beta):
            materialize(project.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    stored.once("dashboard_traffic", (alpha, beta), build)  # built once per worker, copied for the next tests
    return {"alpha": alpha, "beta": beta}


@pytest.fixture
def ann_client(client, members):
    client.force_login(members["ann"][0])
    return client


@pytest.fixture
def send(members, ingest):
    """send(*spans): alpha's service "alpha-svc", ingested and materialized."""
    _, alpha, key = members["ann"]

    def go(*spans):
        ingest(key, f.request(*spans, service="alpha-svc"))
        materialize(alpha.pk, START - timedelta(hours=1), END + timedelta(hours=1))
    return go


@pytest.fixture
def ann(client, members, clickhouse):
    """ann's session on a page that needs no traffic (the filter bar still reads the empty ClickHouse tables)."""
    client.force_login(members["ann"][0])
    return client


@pytest.fixture
def ben(members, clickhouse):
    from django.test import Client

    c = Client()
    c.force_login(members["ben"][0])
    return c
