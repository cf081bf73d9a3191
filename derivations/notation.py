"""Shared notation for every derivation family.

Prompt q, rollouts o_1..o_R drawn i.i.d. from pi_theta(.|q), rewards r_i, group mean rbar,
sample std s (Bessel) or population std sigma, advantages A_i = (r_i - rbar)/(s + eps),
score vectors g_i = grad_theta log pi_theta(o_i|q). Vectors are treated one coordinate at a time:
a symbol such as ``g[i]`` is the k-th coordinate of g_i for an arbitrary fixed k, so an identity
proved for it holds for every coordinate and hence for the vector.
"""

from __future__ import annotations

import sympy as sp

# -- group size, indices --------------------------------------------------------------------------
R = sp.Symbol("R", integer=True, positive=True)  # group size (results add the condition R >= 2)
i, j, t = sp.symbols("i j t", integer=True, positive=True)
k = sp.Symbol("k", integer=True, nonnegative=True)  # number of successes in a binary-reward group
eps = sp.Symbol("epsilon", nonnegative=True)  # the std stabiliser (TRL: 1e-4)

# -- rewards and group statistics -----------------------------------------------------------------
r = sp.IndexedBase("r", real=True)  # r[i]: reward of rollout i
g = sp.IndexedBase("g", real=True)  # g[i]: one coordinate of the score vector of rollout i


def group_mean(x: sp.IndexedBase = r, size: sp.Basic = R) -> sp.Expr:
    """(1/R) sum_j x_j."""
    return sp.Sum(x[j], (j, 1, size)) / size


def centred_sum_of_squares(x: sp.IndexedBase = r, size: sp.Basic = R) -> sp.Expr:
    """sum_j (x_j - xbar)^2."""
    return sp.Sum((x[j] - group_mean(x, size)) ** 2, (j, 1, size))


def sample_std(x: sp.IndexedBase = r, size: sp.Basic = R) -> sp.Expr:
    """Bessel-corrected standard deviation (torch.std's default, TRL's choice)."""
    return sp.sqrt(centred_sum_of_squares(x, size) / (size - 1))


def population_std(x: sp.IndexedBase = r, size: sp.Basic = R) -> sp.Expr:
    """Standard deviation with divisor R."""
    return sp.sqrt(centred_sum_of_squares(x, size) / size)


def advantage(index: sp.Basic, scale: sp.Expr | None, x: sp.IndexedBase = r, size: sp.Basic = R,
              stabiliser: sp.Basic = eps) -> sp.Expr:
    """A_index = (x_index - xbar)/(scale + eps); ``scale=None`` is Dr. GRPO's unscaled advantage."""
    centred = x[index] - group_mean(x, size)
    return centred if scale is None else centred / (scale + stabiliser)
