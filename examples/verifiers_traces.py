"""hud-gym rollouts as verifiers 0.4 ``Trace`` records (``verifiers.v1``), scored by verifiers' rules.

A GRPO group of G rollouts of one task runs concurrently (same seed); each becomes a ``Trace``
with its messages, ``rewards["hud"]``, ``timing`` and, for a failed run, ``ok=False`` and its error
in verifiers' ``Error`` shape (never a reward). The traces are written as verifiers' JSON records,
which a verifiers-based trainer loads with ``verifiers.v1.WireTrace``. The policy here is a
scripted one that answers right half of the time and crashes once (a model-server outage).

Needs verifiers >= 0.4 (``make install`` puts it in ``.venv-verifiers``, whose openai pin differs).

Run: ``.venv-verifiers/bin/python examples/verifiers_traces.py --group 8 --out runs/verifiers``
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from hud_gym import ResponseAction


def main(argv: list[str] | None = None) -> list[dict[str, Any]]:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--task", default="qa-basic/capital-france")
    parser.add_argument("--group", type=int, default=8)
    parser.add_argument("--out", type=Path, default=Path("runs/verifiers"))
    args = parser.parse_args(argv)

    from verifiers.v1.utils.format import format_mean

    from hud_gym.wrappers.integrations.verifiers_v1 import verifiers_group_traces

    calls = 0

    def policy(observation: dict, history: list, task: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise RuntimeError("model server unreachable")
        return ResponseAction(text="Paris" if calls % 2 else "Lyon")

    traces = asyncio.run(verifiers_group_traces(args.task, policy, args.group, seed=0, max_concurrent=1))
    args.out.mkdir(parents=True, exist_ok=True)
    records = [trace.to_record() for trace in traces]
    with open(args.out / "traces.jsonl", "w") as file:
        for record in records:
            file.write(json.dumps(record) + "\n")
    for trace in traces:
        error = f"{trace.errors[0].type}: {trace.errors[0].message}" if trace.errors else ""
        print(
            f"ok={trace.ok!s:5} stop={trace.stop_condition:16} rewards={ {k: r.score for k, r in trace.rewards.items()} } {error}"
        )
    print(
        f"reward (verifiers' mean over non-errored traces, raw mean in parens): {format_mean(traces, lambda t: t.reward)}"
    )
    return records


if __name__ == "__main__":
    main()
