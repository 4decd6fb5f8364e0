"""The state of one group of an alert rule: ok -> pending -> firing -> ok, with re-notify while firing.

A group goes pending when first breached and fires once breached for the rule's for_seconds; a firing group
back under resolves. Each state change sends one message to the rule's webhooks ("alert.firing" on firing
and on each re-notify, "alert.resolved"), enqueued in the transaction that records the change, so evaluating
again at the same `now` sends nothing new. Knows no alert kind: alerts/rules.py passes the breach and the
message in.
"""
from collections.abc import Callable
from datetime import datetime, timedelta

from django.db import transaction

from alerts.delivery import enqueue
from alerts.models import AlertRule, AlertState


def advance(rule: AlertRule, state: AlertState, is_breached: bool, now: datetime,
            hold_seconds: int | None = None) -> str | None:
    """Apply one evaluation to `state` (saved by the caller); returns the event to send, if any. hold_seconds:
    how long pending lasts before firing (default rule.for_seconds; the incident kind holds by duration instead)."""
    if state.state == AlertState.OK:
        if not is_breached:
            return None
        state.state, state.since = AlertState.PENDING, now  # for_seconds 0 falls through to firing
    if state.state == AlertState.PENDING:
        if not is_breached:
            state.state, state.since = AlertState.OK, now  # never fired: nothing to resolve
            return None
        hold = rule.for_seconds if hold_seconds is None else hold_seconds
        if now - state.since < timedelta(seconds=hold):
            return None
        state.state, state.since, state.last_notified_at = AlertState.FIRING, now, now
        return "alert.firing"
    # firing
    if not is_breached:
        state.state, state.since, state.last_notified_at = AlertState.OK, now, now
        return "alert.resolved"
    if rule.renotify_seconds and now - state.last_notified_at >= timedelta(seconds=rule.renotify_seconds):
        state.last_notified_at = now
        return "alert.firing"
    return None


def record(rule: AlertRule, key: str, value, is_breached: bool, now: datetime,
           message: Callable[[str], dict], hold_seconds: int | None = None) -> str:
    """Move the stored state of the rule's group `key` by one evaluation at `now` (value kept as last_value) and,
    on a change, enqueue message(event) to each enabled webhook of the rule. Returns the group's new state."""
    AlertState.objects.get_or_create(rule=rule, group_key=key)
    with transaction.atomic():  # the row lock makes concurrent evaluations take turns
        state = AlertState.objects.select_for_update().get(rule=rule, group_key=key)
        event = advance(rule, state, is_breached, now, hold_seconds)
        state.last_value, state.last_evaluated_at = value, now
        state.save()
        if event:
            payload = message(event)
            for webhook in rule.webhooks.filter(enabled=True):
                enqueue(webhook, event, payload)
    return state.state
