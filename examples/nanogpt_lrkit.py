# A nanoGPT-style DDP loop with lrkit: a WSD-S schedule, the dispersion hook, HDET (HDET=0: LRScheduler), a spike guard.
#   python3 -m torch.distributed.run --nproc_per_node 2 examples/nanogpt_lrkit.py OUT_DIR [STEPS]
# with PYTHONPATH=build/python (or the install's site-packages); `lrkit diagnose OUT_DIR/ranks.jsonl` reads the hook's log.
import os, sys, torch, torch.distributed as dist
import lrkit.torch as lt


class TinyGPT(torch.nn.Module):
    def __init__(self, width=64, context=32):
        super().__init__()
        self.emb, self.pos = torch.nn.Embedding(256, width), torch.nn.Parameter(torch.zeros(context, width))
        layer = torch.nn.TransformerEncoderLayer(width, 4, 2 * width, dropout=0.0, batch_first=True)
        self.body, self.head = torch.nn.TransformerEncoder(layer, 2), torch.nn.Linear(width, 256)
        self.register_buffer("mask", torch.nn.Transformer.generate_square_subsequent_mask(context))

    def forward(self, x):
        return self.head(self.body(self.emb(x) + self.pos, mask=self.mask))


out, steps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 120
# A GPU of its own per worker: NCCL. Workers sharing a GPU, or on the CPU: Gloo (it moves CUDA tensors too).
local_rank, gpus = int(os.environ["LOCAL_RANK"]), torch.cuda.device_count()
device = torch.device("cuda", local_rank % gpus) if gpus else torch.device("cpu")
if gpus: torch.cuda.set_device(device)
dist.init_process_group("nccl" if gpus >= int(os.environ["LOCAL_WORLD_SIZE"]) else "gloo")
rank = dist.get_rank(); torch.set_num_threads(1)
text = torch.tensor(list(open(os.environ.get("CORPUS", "data/kjv.txt"), "rb").read(200_000)), dtype=torch.long)
torch.manual_seed(0)  # the same initial weights on every rank
model = TinyGPT().to(device)
ddp = torch.nn.parallel.DistributedDataParallel(model)
hook = lt.DispersionHook(log=os.path.join(out, "ranks.jsonl"))
ddp.register_comm_hook(None, hook)
optimizer = torch.optim.AdamW(ddp.parameters(), lr=3e-3, weight_decay=0.1)
spec = f"wsds(peak=3e-3, budgets=[{steps // 2}, {steps}], decay=20%, warmup=10)"
use_hdet = os.environ.get("HDET", "1") == "1"
scheduler = lt.HDET(optimizer, model, spec, alpha=1 / 9, sync_every=20, sigma=0.002) if use_hdet else lt.LRScheduler(optimizer, spec)
guard = lt.SpikeGuard(loss_z=6, grad_z=6, window=50)  # skip an update whose loss or gradient norm spikes
g = torch.Generator().manual_seed(1 + rank)  # each rank its own batches
for step in range(scheduler.schedule.total_steps):
    starts = torch.randint(0, len(text) - 33, (16,), generator=g).tolist()
    windows = torch.stack([text[s:s + 33] for s in starts]).to(device)
    x, y = windows[:, :-1], windows[:, 1:]
    loss = torch.nn.functional.cross_entropy(ddp(x).flatten(0, 1), y.flatten())
    optimizer.zero_grad(); loss.backward()
    norm = torch.nn.utils.clip_grad_norm_(ddp.parameters(), 1.0)  # the norm before clipping
    if guard.check(loss, norm):  # every rank decides alike
        optimizer.step()
    metrics = hook.step(loss, metrics=step % 20 == 0)  # None between prints: no wait for the device
    scheduler.step(loss) if use_hdet else scheduler.step()
    if rank == 0 and metrics:
        print(f"step {step} loss {metrics['loss'][0]:.3f} lr {optimizer.param_groups[0]['lr']:.2e} "
              f"grad-norm std {metrics['grad_norm_std']:.3f}", flush=True)
hook.close(); dist.destroy_process_group()
