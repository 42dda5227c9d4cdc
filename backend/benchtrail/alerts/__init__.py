"""Alerts raised by trail analysis, their triage, annotations on the version axis, and webhooks."""
