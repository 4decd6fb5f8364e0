"""Incidents: stretches where a service's latency left its own baseline (see docs/incidents.md).

baseline.py picks and summarises the baseline window, detection.py finds onsets and ends on per-minute series,
explain.py runs the flowchart on an incident's window against its baseline (verdict, causes, scope, path),
records.py stores and reconciles Incident rows and shapes them for the API.
"""
