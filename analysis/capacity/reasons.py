"""Why a worksheet field is None, and what a number assumes: the worksheet's `reasons` and `notes`."""
from dataclasses import replace

from analysis.capacity.types import Capacity, Scope

PRICE_SETTING = "GPU_HOUR_PRICE_USD"


def explained(sheet: Capacity, route: str = "") -> Capacity:
    """`sheet` with a reason for each None field of the service and of each region, and its notes."""
    reasons = _scope_reasons(sheet.worksheet, sheet)
    if not sheet.regions:
        reasons["regions"] = "no cloud.region resource attribute on the service's spans or engine metrics"
    curve = sheet.latency_vs_load
    if curve is not None and curve.knee_load is None and curve.reason:
        reasons["knee_load"] = curve.reason
    regions = [replace(r, reasons=_scope_reasons(r, sheet)) for r in sheet.regions]
    return replace(sheet, worksheet=replace(sheet.worksheet, reasons=reasons), reasons=reasons, regions=regions,
                   notes=_notes(sheet, route))


def _scope_reasons(scope: Scope, sheet: Capacity) -> dict:
    checks = {
        "peak_rps": "no request began in the window",
        "mean_rps": "fewer than two requests began in the window",
        "tokens_in": "no run carries an input token count (gen_ai.usage.input_tokens)",
        "tokens_out": "no run carries an output token count (gen_ai.usage.output_tokens; failed runs have none)",
        "batching_factor": ("no scheduler or engine running gauge in the window (no admission instants on the "
                            "attempts, no vllm:num_requests_running or equivalent)" if sheet.batching_source is None
                            else f"no busy minute in the {sheet.batching_source}'s data"),
        "gpu_hours": "no instance had traffic or engine metrics in the window",
        "cost_per_1k_requests_usd": (f"no GPU-hour price configured (set {PRICE_SETTING})"
                                     if sheet.gpu_hour_price_usd is None else "no requests or no GPU-hours"),
    }
    values = {"tokens_in": scope.tokens_in.mean, "tokens_out": scope.tokens_out.mean}
    return {name: why for name, why in checks.items() if values.get(name, getattr(scope, name, None)) is None}


def _notes(sheet: Capacity, route: str) -> list[str]:
    notes = []
    assumed = sheet.gpus.get("sources", {}).get("assumed 1")
    if assumed:
        notes.append(f"{assumed} instance(s) report no GPUs (no DCGM gpu label, no gpu.count resource attribute): "
                     f"1 GPU each assumed in gpu_hours")
    if any(r.region == "" for r in sheet.regions):
        notes.append("instances without cloud.region are counted under region null (unknown)")
    if sheet.batching_source == "engine running gauge":
        notes.append("batching factor from the engine's running gauge (samples above 0): the traces carry no "
                     "admission instants")
    if route:
        notes.append(f"route {route}: instances, GPU-hours and the batching factor are those of the instances that "
                     f"served it, shared with the service's other routes")
    return notes
