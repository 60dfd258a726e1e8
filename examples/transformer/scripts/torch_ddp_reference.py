#!/usr/bin/env python3
"""The PyTorch DDP yardstick for transformer_ddp: the same model, data-parallel.

One process per GPU (torch.multiprocessing, NCCL), the model of torch_reference.py
wrapped in DistributedDataParallel with its default gradient buckets (reduced while
backward runs), bf16 autocast, AdamW. Each rank times its train steps with a pair of
CUDA events after a barrier; a step's time is the slowest rank's. Every configuration
becomes one JSON line, the single-GPU run of the same per-GPU batch first:

  {"size": "small", "ctx": 512, "batch_per_gpu": 4, "gpus": 2, "fast": true,
   "compile": false, "median_ms": ..., "min_ms": ..., "tokens_per_s": ...,
   "peak_mem_gib": ..., "weak_scaling_efficiency": ...}

weak_scaling_efficiency is the one-GPU median over this run's median (1.0: perfect).

  --fast            fused attention (scaled_dot_product_attention) and fused AdamW
  --compile         torch.compile the DDP-wrapped model

usage: torch_ddp_reference.py [--gpus N] [--sizes small,large] [--ctx 512] [--batch 4]
                              [--fast] [--compile] [--out FILE]
Needs CUDA GPUs and PyTorch. Exit status: 0 done, 2 bad arguments or too few GPUs.
"""
import argparse
import json
import os
import statistics
import sys

import torch
import torch.distributed as dist
import torch.multiprocessing as mp
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_reference import SIZES, TransformerLM, comma_list, positive, time_steps  # noqa: E402


def worker(rank, world, args, queue):
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", str(args.port))
    torch.cuda.set_device(rank)
    if world > 1:
        dist.init_process_group("nccl", rank=rank, world_size=world)
    torch.backends.cuda.matmul.allow_tf32 = False
    for size in args.sizes:
        d, d_ff, layers, heads = SIZES[size]
        torch.manual_seed(0)
        with torch.device("cuda"):
            model = TransformerLM(args.vocab, d, d_ff, layers, heads, fused_attention=args.fast)
        net = torch.nn.parallel.DistributedDataParallel(model, device_ids=[rank]) if world > 1 else model
        if args.compile:
            net = torch.compile(net)  # compiled DDP breaks the graph at bucket boundaries
        optimizer = torch.optim.AdamW(model.parameters(), fused=True if args.fast else None)
        for ctx in args.ctx:
            generator = torch.Generator(device="cuda").manual_seed(1000 + rank)  # each rank its batch
            tokens = torch.randint(0, args.vocab, (args.batch, ctx), device="cuda", generator=generator)
            targets = torch.randint(0, args.vocab, (args.batch, ctx), device="cuda", generator=generator)
            torch.cuda.reset_peak_memory_stats()

            def step():
                with torch.autocast("cuda", dtype=torch.bfloat16):
                    logits = net(tokens)
                loss = F.cross_entropy(logits.float().view(-1, args.vocab), targets.view(-1))
                loss.backward()
                optimizer.step()
                optimizer.zero_grad(set_to_none=True)

            times = time_steps(step, args.warmup, args.steps, dist.barrier if world > 1 else lambda: None)
            slowest = torch.tensor(times, device="cuda")
            if world > 1:
                dist.all_reduce(slowest, op=dist.ReduceOp.MAX)  # per step, the slowest rank
            if rank == 0:
                median = statistics.median(slowest.tolist())
                queue.put(dict(size=size, ctx=ctx, batch_per_gpu=args.batch, gpus=world, fast=args.fast,
                               compile=args.compile, median_ms=median, min_ms=min(slowest.tolist()),
                               tokens_per_s=world * args.batch * ctx / (median / 1e3),
                               peak_mem_gib=torch.cuda.max_memory_allocated() / 2**30))
        del net, model, optimizer
        torch.cuda.empty_cache()
    if world > 1:
        dist.destroy_process_group()


def run(world, args):
    context = mp.get_context("spawn")
    queue = context.Queue()
    processes = [context.Process(target=worker, args=(rank, world, args, queue)) for rank in range(world)]
    for process in processes:
        process.start()
    for process in processes:  # a few small rows: the queue never fills, so joining first is safe
        process.join()
        if process.exitcode != 0:
            sys.exit(f"torch_ddp_reference.py: a rank failed (exit {process.exitcode})")
    rows = []
    while not queue.empty():
        rows.append(queue.get())
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--gpus", type=positive, default=max(torch.cuda.device_count(), 1),
                        help="processes, one per GPU (default: every visible GPU)")
    parser.add_argument("--sizes", type=comma_list(SIZES), default=["large"])
    parser.add_argument("--ctx", type=comma_list(item=positive), default=[512])
    parser.add_argument("--batch", type=positive, default=4, help="sequences per GPU")
    parser.add_argument("--vocab", type=positive, default=10000)
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--steps", type=positive, default=10)
    parser.add_argument("--fast", action="store_true", help="scaled_dot_product_attention and fused AdamW")
    parser.add_argument("--compile", action="store_true", help="torch.compile the DDP-wrapped model")
    parser.add_argument("--port", type=positive, default=29517, help="the rendezvous port on 127.0.0.1")
    parser.add_argument("--out", default="-", help="append JSON lines here (default stdout)")
    args = parser.parse_args()
    if torch.cuda.device_count() < args.gpus:
        parser.error(f"--gpus {args.gpus}, but {torch.cuda.device_count()} CUDA devices are visible")

    single = {(row["size"], row["ctx"]): row for row in run(1, args)}
    multi = run(args.gpus, args) if args.gpus > 1 else []
    out = sys.stdout if args.out == "-" else open(args.out, "a", encoding="utf-8")
    for row in list(single.values()) + multi:
        row["weak_scaling_efficiency"] = single[(row["size"], row["ctx"])]["median_ms"] / row["median_ms"]
        print(json.dumps(row), file=out, flush=True)


if __name__ == "__main__":
    main()
