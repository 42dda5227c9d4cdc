"""`notifications.deliver`: one signed webhook POST, retried with exponential backoff."""

from __future__ import annotations

from typing import Any

import httpx

from benchtrail.alerts import webhooks
from benchtrail.db_boundary import unit_of_work
from benchtrail.logging import log
from benchtrail_worker.policy import task

TIMEOUT_S = 10.0


@task("notifications.deliver", "default", soft_time_limit=60, time_limit=90,
      max_retries=webhooks.MAX_ATTEMPTS + 1)
def deliver(self: Any, delivery_id: int) -> str:
    with unit_of_work() as session:
        found = webhooks.delivery_for_update(session, delivery_id)
        if found is None:
            return "missing"
        delivery, hook = found
        if delivery.status != "pending":
            return delivery.status
        delivery.attempts += 1
        # The allow-list is checked again: it may have shrunk since the webhook was created.
        if not hook.enabled or not webhooks.allowed(hook.url):
            delivery.status = "failed"
            delivery.error = "webhook disabled" if not hook.enabled else "destination no longer in the allow-list"
            return delivery.status
        body = webhooks.body_bytes(delivery.payload)
        headers = {"Content-Type": "application/json", "User-Agent": "Benchtrail-Webhook/1",
                   webhooks.SIGNATURE_HEADER: webhooks.sign(hook.secret, body),
                   "X-Benchtrail-Event": "alert", "X-Benchtrail-Delivery": str(delivery.id)}
        try:
            # A client of its own per delivery (one request each): kept between deliveries it would hold
            # connections open to every receiver's host.
            response = httpx.post(hook.url, content=body, headers=headers, timeout=TIMEOUT_S)  # noqa: TID251
            delivery.response_code = response.status_code
            ok = response.is_success
            delivery.error = None if ok else f"HTTP {response.status_code}: {response.text[:300]}"
        except httpx.HTTPError as exc:
            ok = False
            delivery.error = f"{type(exc).__name__}: {exc}"
        if ok:
            delivery.status = "delivered"
        elif delivery.attempts >= webhooks.MAX_ATTEMPTS:
            delivery.status = "failed"
        status, attempts, error = delivery.status, delivery.attempts, delivery.error
    log.info("webhook delivery", delivery_id=delivery_id, status=status, attempts=attempts, error=error)
    if status == "pending":
        raise self.retry(countdown=min(2 ** attempts, 300))
    return status
