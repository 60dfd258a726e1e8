"""What the examples share: the repository's PyTorch model, its steps in gpuprof scopes, JSON output.

The model is examples/transformer/scripts/torch_reference.py's TransformerLM
(the model of docs/model.md). A step is the course's:

    step
      forward      (embedding .. loss; the naive attention's three ranges nested)
      backward     (loss.backward(); PyTorch launches it from its autograd
                    threads, which gpuprof.report() charges to this scope)
      optimizer    (AdamW step and zero_grad)

Run from anywhere: the model's directory is put on sys.path here.
"""
import argparse
import json
import os
import sys

import torch
import torch.nn.functional as F

import gpuprof

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "transformer", "scripts"))
import torch_reference  # noqa: E402

SIZES = torch_reference.SIZES


class Steps:
    """The model at one configuration and its forward / fwd+bwd / train steps, in scopes."""

    def __init__(self, size, ctx, batch=4, vocab=10000, precision="fp32", fused=False, device="cuda",
                 ranges=gpuprof.scope):
        """ranges: what opens the step's ranges, gpuprof.scope or e.g. torch.profiler.record_function."""
        d, d_ff, layers, heads = SIZES[size]
        self.range = ranges
        torch_reference.attention_range = ranges
        torch.manual_seed(0)
        self.device, self.vocab = device, vocab
        self.autocast = precision == "bf16"
        self.model = torch_reference.TransformerLM(vocab, d, d_ff, layers, heads, fused_attention=fused).to(device)
        self.params = sum(p.numel() for p in self.model.parameters())
        # fused: the fused AdamW kernel; else PyTorch's default (the multi-tensor kernels)
        self.optimizer = torch.optim.AdamW(self.model.parameters(), **({"fused": True} if fused else {}))
        self.tokens = torch.randint(0, vocab, (batch, ctx), device=device)
        self.targets = torch.randint(0, vocab, (batch, ctx), device=device)

    def loss(self):
        with self.range("forward"):
            with torch.autocast(self.device, dtype=torch.bfloat16, enabled=self.autocast):
                logits = self.model(self.tokens)
            return F.cross_entropy(logits.float().view(-1, self.vocab), self.targets.view(-1))

    def forward(self):
        with torch.no_grad():
            self.loss()

    def forward_backward(self):
        loss = self.loss()
        with self.range("backward"):
            loss.backward()
        self.model.zero_grad(set_to_none=True)

    def train_step(self):
        loss = self.loss()
        with self.range("backward"):
            loss.backward()
        with self.range("optimizer"):
            self.optimizer.step()
            self.optimizer.zero_grad(set_to_none=True)

    def run(self, mode):
        """One step of `mode` ("fwd", "fwdbwd", "step") inside a "step" scope, the device synchronized."""
        body = {"fwd": self.forward, "fwdbwd": self.forward_backward, "step": self.train_step}[mode]
        with self.range("step"):
            body()
            synchronize(self.device)


def synchronize(device):
    if device == "cuda":
        torch.cuda.synchronize()


def release_cached_memory(device):
    """Hands PyTorch's cached blocks back after a configuration (drop the model first)."""
    if device == "cuda":
        torch.cuda.empty_cache()


def setup(description, extra=None):
    """Common arguments; fp32 means fp32 GEMMs (no TF32), as torch_reference.py does."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", required=True, help="write the results as JSON here")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"],
                        help="cpu: a check of the script without a GPU (host clock, no kernels)")
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--vocab", type=int, default=10000)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--steps", type=int, default=10)
    if extra:
        extra(parser)
    args = parser.parse_args()
    if args.batch < 1 or args.vocab < 2 or args.warmup < 0 or args.steps < 2:
        parser.error("--batch >= 1, --vocab >= 2, --warmup >= 0 and --steps >= 2 are needed")
    if args.device == "cuda" and not torch.cuda.is_available():
        parser.error("no CUDA device (use --device cpu to check the script without one)")
    if args.device == "cpu":
        gpuprof.set_gpu_timing(False)  # work on the CPU: the host clock, whatever the machine holds
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    return args


def configurations(args):
    """Every (size, ctx) of --sizes x --ctx, in order."""
    return [(size, ctx) for size in args.sizes for ctx in args.ctx]


def comma_list(item=str, allowed=None):
    def parse(text):
        items = [item(part) for part in text.split(",") if part]
        if not items or (allowed and any(i not in allowed for i in items)):
            raise argparse.ArgumentTypeError(f"expected a comma list{' of ' + ', '.join(allowed) if allowed else ''}")
        return items
    return parse


def write_json(path, doc):
    """Whole or not at all: a temporary file renamed into place."""
    doc = dict(doc, torch=torch.__version__, device=gpuprof.device_name() or "cpu",
               timing_source=gpuprof.timing_source())
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=1)
    os.replace(tmp, path)


def table(headers, rows):
    """A plain text table."""
    cells = [[str(c) for c in row] for row in rows]
    widths = [max(len(h), *(len(r[i]) for r in cells)) if cells else len(h) for i, h in enumerate(headers)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(headers, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in cells]
    return "\n".join(lines)
