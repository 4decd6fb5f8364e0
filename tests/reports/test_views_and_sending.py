import json
import re
from datetime import datetime, timezone

from django.core.management import call_command
from django.test import Client

from alerts.delivery import send_due
from alerts.models import Delivery
from alerts.tasks import send_delivery
from reports import sending, tasks
from reports.models import ReviewSchedule, WeeklyReview
from tests.reports.conftest import HOSTILE_TENANT, WEEK2


def _url(week=WEEK2, **query):
    return f"/reviews/{week}/?" + "&".join(f"{k}={v}" for k, v in {"project": "alpha", **query}.items())


def test_review_page_list_and_download(weeks, ann_client):
    call_command("send_weekly_review", project="alpha", week=WEEK2)
    listing = ann_client.get("/reviews/?project=alpha").content.decode()
    assert f'href="/reviews/{WEEK2}/?project=alpha"' in listing
    page = ann_client.get(_url()).content.decode()
    assert 'data-chart="pct-0"' in page and HOSTILE_TENANT not in page and "&lt;script&gt;alert(" in page

    response = ann_client.get(_url(download=1))
    assert response["Content-Disposition"] == f'attachment; filename="latency-review-alpha-{WEEK2}.html"'
    html = response.content.decode()
    # one file: plotly.js inlined, no script or stylesheet fetched from anywhere
    assert "plotly.js v" in html and len(html) > 1_000_000
    assert re.findall(r"<script[^>]*\ssrc=", html) == [] and "<link" not in html
    assert HOSTILE_TENANT not in html and "<td>&lt;script&gt;alert(&quot;t&quot;)&lt;/script&gt;</td>" in html
    # chart data go through json_script, where < is \u003C
    spec = json.loads(re.search(r'<script id="ten-0" type="application/json">(.*?)</script>', html).group(1))
    assert spec["data"][0]["x"][0] == "&lt;script&gt;alert(\"t\")&lt;/script&gt;"


def test_other_projects_members_get_404(weeks, members):
    call_command("send_weekly_review", project="alpha", week=WEEK2)
    ben = Client()
    ben.force_login(members["ben"][0])
    assert ben.get(_url()).status_code == 404
    assert ben.get(_url(download=1)).status_code == 404
    assert ben.get("/reviews/?project=alpha").status_code == 404
    # his own project has no such week
    assert ben.get(f"/reviews/{WEEK2}/?project=beta").status_code == 404
    assert Client().get(_url()).status_code == 302  # anonymous: to the login page


def test_announcement_reaches_the_webhook(weeks, json_hook, receiver, django_capture_on_commit_callbacks):
    ReviewSchedule.objects.create(project=weeks, webhook=json_hook)
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        call_command("send_weekly_review", project="alpha", week=WEEK2)
    assert len(callbacks) == 1
    delivery = Delivery.objects.get(webhook=json_hook)
    send_delivery.apply(args=[delivery.id])
    delivery.refresh_from_db()
    assert delivery.status == "sent"
    body = json.loads(receiver.requests[0]["body"])
    assert body["event"] == "weekly_review"
    data = body["data"]
    assert data["title"] == f"Weekly latency review {WEEK2} (alpha)"
    assert data["url"].endswith(f"/reviews/{WEEK2}/?project=alpha")
    assert data["numbers"]["alpha-svc TTFT p95"] == "696 ms (+124%)"  # 695.5 vs 310


def test_an_announcement_made_by_the_cli_is_sent_by_the_sweeper(weeks, json_hook, receiver,
                                                                 django_capture_on_commit_callbacks):
    ReviewSchedule.objects.create(project=weeks, webhook=json_hook)
    # as in a CLI process: the commit hands the immediate try to Celery's in-memory broker (eager off), where
    # no worker listens; before the outbox, the delivery stayed pending for ever
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        call_command("send_weekly_review", project="alpha", week=WEEK2)
    assert len(callbacks) == 1
    delivery = Delivery.objects.get(webhook=json_hook)
    assert (delivery.status, delivery.attempts, receiver.requests) == ("pending", 0, [])

    # the sweeper of the running `up` (or of the production worker)
    assert send_due() == {"tried": 1, "sent": 1, "failed": 0, "pending": 0, "given_up": 0}
    [request] = receiver.requests
    assert request["headers"]["X-LatencyObs-Delivery"] == str(delivery.uuid)
    assert json.loads(request["body"])["event"] == "weekly_review"
    assert send_due()["tried"] == 0 and len(receiver.requests) == 1
    delivery.refresh_from_db()
    assert (delivery.status, delivery.attempts) == ("sent", 1)


def test_hourly_task_sends_due_schedules_once(weeks):
    ReviewSchedule.objects.create(project=weeks, weekday=0, hour=9, timezone="Europe/Berlin")
    monday_9_berlin = datetime(2026, 1, 19, 8, 30, tzinfo=timezone.utc)
    assert tasks.due(datetime(2026, 1, 19, 9, 30, tzinfo=timezone.utc)) == []  # 10:30 in Berlin
    [(schedule, week)] = tasks.due(monday_9_berlin)
    assert (schedule.project, week) == (weeks, WEEK2)
    sending.send(weeks, week)
    assert tasks.due(monday_9_berlin) == []  # already built
    assert WeeklyReview.objects.get(project=weeks).week == WEEK2
