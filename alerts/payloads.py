"""What a webhook receives: Slack Block Kit messages, and signed JSON bodies."""
import hashlib
import hmac
import json

from analysis.wording import fmt

HEADER_MAX = 150  # Slack's limit on a header block's text
FIELDS_MAX = 10   # and on the fields of a section


def escape(text) -> str:
    """Slack mrkdwn control characters; the rest is shown as is (no <!channel> from a tenant name)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def slack_message(summary: dict) -> dict:
    """Block Kit message from a summary: title, verdict, numbers {label: value}, unit, url, context. The numbers
    "value" and "threshold" read in the summary's unit ("25.7 s", "75%"); others are shown as given."""
    title = str(summary.get("title") or "latency_obs notification")
    verdict = summary.get("verdict")
    numbers = summary.get("numbers") or {}
    blocks = [{"type": "header", "text": {"type": "plain_text", "text": title[:HEADER_MAX], "emoji": True}}]
    section = {"type": "section", "text": {"type": "mrkdwn",
                                          "text": f"*Verdict:* `{escape(verdict)}`" if verdict else escape(title)}}
    if numbers:
        section["fields"] = [{"type": "mrkdwn", "text": f"*{escape(k)}*\n{escape(_shown(k, v, summary.get('unit')))}"}
                             for k, v in list(numbers.items())[:FIELDS_MAX]]
    blocks.append(section)
    if summary.get("url"):
        blocks.append({"type": "actions", "elements": [{
            "type": "button", "text": {"type": "plain_text", "text": summary.get("button") or "Open diagnosis"},
            "url": summary["url"], "action_id": "open_diagnosis"}]})
    if summary.get("context"):
        blocks.append({"type": "context", "elements": [{"type": "mrkdwn", "text": escape(summary["context"])}]})
    fallback = f"{title}: {verdict}" if verdict else title  # shown in notifications
    return {"text": escape(fallback), "blocks": blocks}


def _shown(key: str, value, unit: str | None) -> str:
    measured = key in ("value", "threshold") and unit is not None and isinstance(value, (int, float))
    return fmt(value, unit) if measured and not isinstance(value, bool) else str(value)


def json_body(event: str, data, delivery_id: str) -> bytes:
    """Stable bytes (sorted keys, no spaces), so receivers may verify the signature over exactly this. The
    delivery id is in the body as well as in a header so that it is signed: a receiver dropping repeats by id
    cannot be fooled into dropping a fresh notification."""
    return json.dumps({"event": event, "id": delivery_id, "data": data}, sort_keys=True, separators=(",", ":"),
                      default=str).encode()


def signature(secret: str, body: bytes, timestamp: int | str) -> str:
    # the timestamp is signed too, so a captured request cannot be replayed later with a new one
    mac = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def json_headers(secret: str, event: str, body: bytes, timestamp: int) -> dict:
    return {
        "Content-Type": "application/json",
        "X-LatencyObs-Event": event,
        "X-LatencyObs-Timestamp": str(timestamp),
        "X-LatencyObs-Signature": signature(secret, body, timestamp),
    }
