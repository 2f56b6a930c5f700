#!/usr/bin/env python3
"""The plain PyTorch training loop lrkit's trainer is measured against.

Same model as train/src/gpt.cpp (byte GPT, pre-norm blocks, tied embeddings),
same AdamW parameter groups, clipping and batch shape, same corpus. Prints one
line: "pytorch tokens_per_second=<x> steps=<n> ms_per_step=<m> [mfu=<f>]".
Under torchrun (WORLD_SIZE > 1) it is DistributedDataParallel over Gloo with
the global batch split over the ranks, and rank 0 prints the global rate.

On a GPU (--device cuda) it is the loop a PyTorch user writes: --attention
fused (scaled_dot_product_attention, causal), --adamw fused, --bf16 autocast,
TF32 matmuls, --compile (torch.compile of the model). Like lrkit it reads the
loss every step; ms_per_step is the median over windows of 10 steps after the
first 10.
With --profile PATH it then traces a few more steps with torch.profiler.
"""
import argparse
import contextlib
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, width, heads, fused):
        super().__init__()
        self.heads, self.fused = heads, fused
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, 2)
        shape = lambda z: z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        q, k, v = shape(q), shape(k), shape(v)
        if self.fused:
            if hasattr(F, "scaled_dot_product_attention"):
                y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            else:  # torch 1.13: the private form (the math kernel)
                y = F._scaled_dot_product_attention(q, k, v, None, 0.0, False, True)[0]
            return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        # Built on the device for this call, as lrkit's explicit form does. A host mask copied in each call
        # (pageable memory) made the host wait for the GPU once per layer, which slowed this baseline.
        future = torch.ones(t, t, dtype=torch.bool, device=x.device).triu(1)
        scores = scores.masked_fill(future, float("-inf"))
        return self.proj((scores.softmax(-1) @ v).transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, width, heads, fused):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = Attention(width, heads, fused)
        self.fc, self.fc_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, layers, heads, width, context, fused=False):
        super().__init__()
        self.token_embedding = nn.Embedding(256, width)
        self.position_embedding = nn.Embedding(context, width)
        self.blocks = nn.ModuleList([Block(width, heads, fused) for _ in range(layers)])
        self.ln_final = nn.LayerNorm(width)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.token_embedding(tokens) + self.position_embedding(torch.arange(t, device=tokens.device))
        for block in self.blocks:
            x = block(x)
        return self.ln_final(x) @ self.token_embedding.weight.t()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/kjv.txt")
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--width", type=int, default=128)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--device", default="cpu")
    p.add_argument("--attention", choices=["explicit", "fused"], default="explicit")
    p.add_argument("--adamw", choices=["default", "fused"], default="default",
                   help="default: torch's choice (foreach on CUDA); fused: AdamW(fused=True)")
    p.add_argument("--bf16", action="store_true", help="bf16 autocast of the forward pass")
    p.add_argument("--compile", action="store_true", help="torch.compile(model)")
    p.add_argument("--peak-tflops", type=float, default=0.0, help="for the MFU (0: not printed)")
    p.add_argument("--profile", metavar="PATH", help="after the timed steps, trace --profile-steps more into PATH "
                   "(Chrome trace; steps marked loop.step, phases loop.*; bench/trace_summary.py reads it)")
    p.add_argument("--profile-steps", type=int, default=3)
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    device = torch.device(a.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True  # as lrkit's train.tf32
        torch.backends.cudnn.allow_tf32 = True
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo")
    torch.manual_seed(1234)
    data = torch.frombuffer(bytearray(open(a.data, "rb").read()), dtype=torch.uint8).long()
    model = Gpt(a.layers, a.heads, a.width, a.context, fused=a.attention == "fused").to(device)
    parameters = sum(w.numel() for w in model.parameters())
    flops_per_token = 6 * parameters + 12 * a.layers * a.width * a.context
    wrapped = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    if a.compile:
        if not hasattr(torch, "compile"):
            raise SystemExit(f"--compile: torch {torch.__version__} has no torch.compile (2.0 on)")
        wrapped = torch.compile(wrapped)
    decayed = [w for n, w in model.named_parameters() if w.dim() == 2 and "embedding" not in n]
    other = [w for n, w in model.named_parameters() if not (w.dim() == 2 and "embedding" not in n)]
    extra = {}
    if a.adamw == "fused":
        import inspect
        if "fused" in inspect.signature(torch.optim.AdamW).parameters:
            extra = {"fused": True}
        else:  # the CPU smoke run under Debian's torch 1.13
            print(f"note: torch {torch.__version__}'s AdamW has no fused=True; using its default", file=sys.stderr)
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8, **extra)
    generator = torch.Generator().manual_seed(1 + rank)
    rows = a.batch // world

    def train_step(mark):
        with mark("loop.step"):
            with mark("loop.data"):
                offsets = torch.randint(0, len(data) - a.context - 1, (rows,), generator=generator)
                batch = torch.stack([data[o:o + a.context + 1] for o in offsets.tolist()])
                if device.type == "cuda":
                    batch = batch.pin_memory().to(device, non_blocking=True)
                x, y = batch[:, :-1], batch[:, 1:]
            with mark("loop.forward_backward"):
                opt.zero_grad()
                with torch.autocast(device.type, dtype=torch.bfloat16, enabled=a.bf16):
                    logits = wrapped(x)
                loss = F.cross_entropy(logits.float().reshape(-1, 256), y.reshape(-1))
                loss.backward()
            with mark("loop.clip"):
                torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            with mark("loop.optimizer"):
                opt.step()
            with mark("loop.loss_read"):
                loss.item()  # the loss of every step reaches the host, as lrkit logs it

    window, warmup = 10, 10
    window_seconds, start = [], None
    for step in range(a.steps + warmup):
        if step >= warmup and (step - warmup) % window == 0:
            now = time.perf_counter()
            if start is not None:
                window_seconds.append(now - start)
            start = now
        train_step(contextlib.nullcontext)
    window_seconds.append(time.perf_counter() - start)
    if a.profile:  # after the timed steps, so the profiler's overhead stays out of ms_per_step
        activities = [torch.profiler.ProfilerActivity.CPU]
        if device.type == "cuda":
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        with torch.profiler.profile(activities=activities) as profiler:
            for _ in range(a.profile_steps):
                train_step(torch.profiler.record_function)
            if device.type == "cuda":
                torch.cuda.synchronize()
        if rank == 0:
            profiler.export_chrome_trace(a.profile)
    window_seconds = window_seconds[:max(1, a.steps // window)]
    ms = 1000 * sorted(window_seconds)[len(window_seconds) // 2] / window
    if rank == 0:
        tokens_per_second = a.batch * a.context / (ms / 1000)
        line = f"pytorch tokens_per_second={tokens_per_second:.0f} steps={a.steps} ms_per_step={ms:.2f}"
        if a.peak_tflops > 0:
            line += f" mfu={flops_per_token * tokens_per_second / (a.peak_tflops * 1e12):.4f}"
        print(line)


if __name__ == "__main__":
    main()
    if dist.is_initialized():
        dist.destroy_process_group()
