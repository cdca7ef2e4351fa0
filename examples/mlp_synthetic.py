"""Train a 2-layer MLP with nodeweave's native engine on a synthetic classification task.

The data are three interleaved spirals in the plane (not linearly separable), generated with a fixed
seed; 80% train, 20% test. This is the demo `scripts/demo.sh` runs until the GCN example lands.

Run: .venv/bin/python examples/mlp_synthetic.py [--epochs 300] [--hidden 64]
"""

from __future__ import annotations

import argparse

import numpy as np

import nodeweave.core as nc
from nodeweave.core import nn, optim


def spirals(n_per_class: int, n_classes: int, noise: float, rng: np.random.Generator):
    xs, ys = [], []
    for c in range(n_classes):
        r = np.linspace(0.05, 1.0, n_per_class)
        theta = np.linspace(c * 2 * np.pi / n_classes, c * 2 * np.pi / n_classes + 3.5, n_per_class)
        theta += rng.normal(scale=noise, size=n_per_class)
        xs.append(np.stack([r * np.sin(theta), r * np.cos(theta)], axis=1))
        ys.append(np.full(n_per_class, c))
    x = np.concatenate(xs).astype(np.float32)
    y = np.concatenate(ys).astype(np.int64)
    perm = rng.permutation(len(y))
    return x[perm], y[perm]


class MLP(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(in_dim, hidden)
        self.fc2 = nn.Linear(hidden, out_dim)

    def forward(self, x: nc.Tensor) -> nc.Tensor:
        return self.fc2(nc.relu(self.fc1(x)))


def main() -> None:
    parser = argparse.ArgumentParser(description="2-layer MLP on three synthetic spirals")
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.01)
    parser.add_argument("--points", type=int, default=1000, help="points per class")
    parser.add_argument("--noise", type=float, default=0.6, help="angular noise of the spirals (0.6 overlaps the classes a little)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    nc.manual_seed(args.seed)
    x, y = spirals(args.points, 3, args.noise, rng)
    split = int(0.8 * len(y))
    x_train, y_train = nc.tensor(x[:split]), nc.tensor(y[:split])
    x_test, y_test = nc.tensor(x[split:]), nc.tensor(y[split:])

    model = MLP(2, args.hidden, 3)
    opt = optim.Adam(model.parameters(), lr=args.lr)
    for epoch in range(1, args.epochs + 1):
        model.train()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x_train), y_train)
        loss.backward()
        opt.step()
        if epoch % 50 == 0 or epoch == args.epochs:
            print(f"epoch {epoch:4d}  loss {loss.item():.4f}")

    model.eval()
    with nc.no_grad():
        pred = model(x_test).argmax(1)
    acc = (pred == y_test).float().mean().item()
    print(f"Test accuracy: {acc:.4f}")


if __name__ == "__main__":
    main()
