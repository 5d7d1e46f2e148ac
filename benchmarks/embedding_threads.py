"""Batched puts with the packaged model against raw ``SentenceTransformer.encode``, by thread policy.

    python benchmarks/embedding_threads.py                 # three shapes, 3 rounds of 64 texts
    python benchmarks/embedding_threads.py --rounds 5 --texts 128 --shapes as-found,busy

Shapes of the machine:

* ``as-found``: the machine as it is (on a shared machine, not quiet: the load is printed);
* ``busy``: one spinning process per usable CPU runs beside it (started ``--settle`` seconds
  before, so that the 1-minute load average has seen them);
* ``torch-8``: as found, but torch is told to use 8 threads (``torch.set_num_threads(8)``, as
  ``OMP_NUM_THREADS=8`` would), more than the machine has.

Policies, each measured in every round, in a rotating order: ``raw`` is ``model.encode`` of the
texts (batch 64, normalised) with torch's count as the shape left it; the others put the same
number of new items (one ``batch`` of puts, the text indexed) into an ephemeral ``ChromaStore``
whose embedder is the same loaded model with ``num_threads`` = ``auto`` (the default: chosen per
call), ``1`` (the old default) or ``0`` (torch's count left alone). Each round uses texts no
policy has seen. The table gives texts/s and the ratio to ``raw`` of the same shape.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import build_corpus, table
from _locomo_data import DEFAULT_DATA
from langgraph.store.base import PutOp

SHAPES = ("as-found", "busy", "torch-8")
POLICIES: dict[str, int | None] = {"auto": None, "pinned-1": 1, "torch-default": 0}
SPIN = "import time\nend = time.time() + {seconds}\nwhile time.time() < end: pass"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--texts", type=int, default=64, help="texts per measurement")
    parser.add_argument("--settle", type=float, default=40.0, help="seconds busy before 'busy'")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    args = parser.parse_args(argv)
    shapes = [s for s in args.shapes.split(",") if s]
    if set(shapes) - set(SHAPES):
        parser.error(f"--shapes takes {', '.join(SHAPES)}")

    import torch

    from langgraph_episodic import ChromaStore
    from langgraph_episodic.embeddings import SentenceTransformerEmbeddings
    from langgraph_episodic.encode_threads import machine_now, usable_cpus

    per_shape = args.rounds * (1 + len(POLICIES)) * args.texts
    texts = build_corpus(per_shape * len(shapes) + 64, args.data).texts
    emb = SentenceTransformerEmbeddings().load()
    model = emb.model
    model.encode(texts[-64:], batch_size=64)  # warm up
    cpus = usable_cpus()
    print(f"{cpus} usable CPUs, torch {torch.__version__} default threads "
          f"{torch.get_num_threads()}; load average {fmt_load()}", flush=True)  # fmt: skip
    rows: list[list[str]] = []
    cursor = 0
    for shape in shapes:
        spinners: list[subprocess.Popen[bytes]] = []
        before = torch.get_num_threads()
        try:
            if shape == "busy":
                code = SPIN.format(seconds=args.settle + 600)
                spinners = [subprocess.Popen([sys.executable, "-c", code]) for _ in range(cpus)]
                time.sleep(args.settle)
            if shape == "torch-8":
                torch.set_num_threads(8)
            load_start = fmt_load()
            seconds = {p: 0.0 for p in ("raw", *POLICIES)}
            chosen: list[int] = []
            others: list[float] = []
            order = ["raw", *POLICIES]
            for r in range(args.rounds):
                for policy in order[r % len(order):] + order[: r % len(order)]:
                    part = texts[cursor : cursor + args.texts]
                    cursor += args.texts
                    seconds[policy] += measure(policy, part, model, emb, ChromaStore)
                    if policy == "auto":
                        chosen.append(emb.threads_for(len(part)))
                        seen = machine_now()
                        others.append(seen.others if seen.others is not None
                                      else max(0.0, (seen.load or 0.0) - seen.own))
            machine = machine_now()
            load_end = fmt_load()
        finally:
            torch.set_num_threads(before)
            for p in spinners:
                p.terminate()
                p.wait(timeout=10)
        n = args.rounds * args.texts
        raw = n / seconds["raw"]
        for policy in ("raw", *POLICIES):
            rate = n / seconds[policy]
            threads = {"raw": str(machine.torch_default), "pinned-1": "1",
                       "torch-default": str(machine.torch_default),
                       "auto": "/".join(str(c) for c in chosen)}[policy]  # fmt: skip
            seen_others = "/".join(f"{o:.2f}" for o in others) if policy == "auto" else ""
            rows.append([shape, policy, threads, seen_others, f"{rate:.1f}", f"{rate / raw:.2f}",
                         f"{load_start} -> {load_end}"])  # fmt: skip
        print(f"  {shape}: done, load {load_end}", flush=True)
    print()
    print(table(["shape", "policy", "threads", "others seen", "texts/s", "x raw", "load average (1/5/15 min)"], rows))
    return 0


def measure(policy: str, texts: list[str], model: Any, emb: Any, store_cls: Any) -> float:
    """Seconds to encode (``raw``) or to put ``texts`` under ``policy``."""
    if policy == "raw":
        started = time.perf_counter()
        model.encode(texts, batch_size=64, normalize_embeddings=True, convert_to_numpy=True,
                     show_progress_bar=False)  # fmt: skip
        return time.perf_counter() - started
    emb.num_threads = emb.query_threads = POLICIES[policy]
    store = store_cls.ephemeral(index={"dims": 384, "embed": emb, "fields": ["text"]})
    try:
        ops = [PutOp(("users", "u0", "memories"), f"k{i}", {"text": t}) for i, t in enumerate(texts)]
        started = time.perf_counter()
        store.batch(ops)
        return time.perf_counter() - started
    finally:
        store.close()


def fmt_load() -> str:
    return "/".join(f"{x:.1f}" for x in os.getloadavg())


if __name__ == "__main__":
    raise SystemExit(main())
