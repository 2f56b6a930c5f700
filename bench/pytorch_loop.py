#!/usr/bin/python3
"""The plain PyTorch training loop lrkit's trainer is measured against.

Same model as train/src/gpt.cpp (byte GPT, pre-norm blocks, tied embeddings),
same AdamW parameter groups, clipping and batch shape, same corpus. Prints one
line: "pytorch tokens_per_second=<x> steps=<n>". Run with Debian's interpreter;
under torchrun (WORLD_SIZE > 1) it is DistributedDataParallel over Gloo with
the global batch split over the ranks, and rank 0 prints the global rate.
"""
import argparse
import math
import os
import time

import torch
import torch.distributed as dist
import torch.nn as nn
import torch.nn.functional as F


class Attention(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        # A plain attribute, not a buffer: Gloo cannot broadcast bool buffers when DDP syncs them.
        self.mask = torch.ones(context, context, dtype=torch.bool).tril().logical_not()

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, 2)
        shape = lambda z: z.view(b, t, self.heads, c // self.heads).transpose(1, 2)
        q, k, v = shape(q), shape(k), shape(v)
        scores = (q @ k.transpose(-2, -1)) / math.sqrt(c // self.heads)
        scores = scores.masked_fill(self.mask[:t, :t], float("-inf"))
        return self.proj((scores.softmax(-1) @ v).transpose(1, 2).contiguous().view(b, t, c))


class Block(nn.Module):
    def __init__(self, width, heads, context):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attn = Attention(width, heads, context)
        self.fc, self.fc_proj = nn.Linear(width, 4 * width), nn.Linear(4 * width, width)

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.fc_proj(F.gelu(self.fc(self.ln2(x))))


class Gpt(nn.Module):
    def __init__(self, layers, heads, width, context):
        super().__init__()
        self.token_embedding = nn.Embedding(256, width)
        self.position_embedding = nn.Embedding(context, width)
        self.blocks = nn.ModuleList([Block(width, heads, context) for _ in range(layers)])
        self.ln_final = nn.LayerNorm(width)

    def forward(self, tokens):
        t = tokens.shape[1]
        x = self.token_embedding(tokens) + self.position_embedding(torch.arange(t))
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
    a = p.parse_args()
    torch.set_num_threads(a.threads)
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    if world > 1:
        dist.init_process_group("gloo")
    torch.manual_seed(1234)
    data = torch.frombuffer(bytearray(open(a.data, "rb").read()), dtype=torch.uint8).long()
    model = Gpt(a.layers, a.heads, a.width, a.context)
    wrapped = torch.nn.parallel.DistributedDataParallel(model) if world > 1 else model
    decayed = [w for n, w in model.named_parameters() if w.dim() == 2 and "embedding" not in n]
    other = [w for n, w in model.named_parameters() if not (w.dim() == 2 and "embedding" not in n)]
    opt = torch.optim.AdamW([{"params": decayed, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=1e-3, betas=(0.9, 0.95), eps=1e-8)
    generator = torch.Generator().manual_seed(1 + rank)
    rows = a.batch // world
    start = None
    warmup = 10
    for step in range(a.steps + warmup):
        if step == warmup:
            start = time.perf_counter()
        offsets = torch.randint(0, len(data) - a.context - 1, (rows,), generator=generator)
        window = torch.stack([data[o:o + a.context + 1] for o in offsets.tolist()])
        x, y = window[:, :-1], window[:, 1:]
        opt.zero_grad()
        loss = F.cross_entropy(wrapped(x).reshape(-1, 256), y.reshape(-1))
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    seconds = time.perf_counter() - start
    if rank == 0:
        print(f"pytorch tokens_per_second={a.steps * a.batch * a.context / seconds:.0f} steps={a.steps}")


if __name__ == "__main__":
    main()
    if dist.is_initialized():
        dist.destroy_process_group()
