"""The KL penalty of the GRPO per-token loss, without TRL: k3_kl's values written out by hand, the
sign with which beta enters the loss, and the direction in which its gradient moves the policy.

The loss is l_t = -(min(rho A, clip(rho) A) - beta k3_t) with k3_t = pi_ref/pi - log(pi_ref/pi) - 1,
so beta > 0 adds beta k3_t >= 0 to the loss, and d l_t / d log pi = beta (1 - pi_ref/pi): positive
where pi > pi_ref, so a gradient-descent step lowers log pi towards log pi_ref, and vice versa.
"""

from __future__ import annotations

import math

import pytest
import torch

from grpo_verify import estimators

F64 = torch.float64
LN2 = math.log(2.0)

# token probabilities pi and pi_ref of one sequence of four tokens (the last one padding)
PI = [0.5, 0.25, 0.4, 0.9]
PI_REF = [0.25, 0.5, 0.4, 0.1]
# k3 = pi_ref/pi - log(pi_ref/pi) - 1, by hand: ratio 1/2, 2, 1 (and the pad, ignored)
K3 = [0.5 + LN2 - 1.0, 2.0 - LN2 - 1.0, 0.0]
# d k3 / d log pi = 1 - pi_ref/pi
SLOPE = [1.0 - 0.5, 1.0 - 2.0, 0.0]


def tokens():
    logps = torch.tensor([PI], dtype=F64).log().requires_grad_(True)
    ref = torch.tensor([PI_REF], dtype=F64).log()
    mask = torch.tensor([[1, 1, 1, 0]])
    return logps, ref, mask


def test_k3_values_by_hand():
    logps, ref, _ = tokens()
    k3 = estimators.k3_kl(logps, ref)[0, :3]
    assert k3.tolist() == pytest.approx(K3, abs=1e-15)
    assert k3[0] > 0 and k3[1] > 0 and k3[2] == 0
    # not symmetric in its arguments: KL(pi || pi_ref), not KL(pi_ref || pi)
    assert float(estimators.k3_kl(ref, logps.detach())[0, 0]) == pytest.approx(2.0 - LN2 - 1.0, abs=1e-15)


@pytest.mark.parametrize("advantage", [0.0, 1.5, -0.7])
def test_the_penalty_adds_beta_times_k3_to_the_loss(advantage):
    """On-policy (old = logp: rho = 1, no clipping) the surrogate is A, so l_t = -A + beta k3_t on
    real tokens and 0 on the pad; the loss grows with beta wherever pi != pi_ref."""
    logps, ref, mask = tokens()
    old = logps.detach()
    adv = torch.tensor([advantage], dtype=F64)
    losses = {}
    for beta in (0.0, 0.04, 0.5):
        loss = estimators.per_token_loss(logps, old, adv, mask, beta=beta, ref_logps=ref)[0]
        expected = [-advantage + beta * k for k in K3] + [0.0]
        assert loss.tolist() == pytest.approx(expected, abs=1e-14), beta
        losses[beta] = loss.detach()
    assert torch.all(losses[0.04][:2] > losses[0.0][:2]) and torch.all(losses[0.5][:2] > losses[0.04][:2])
    assert losses[0.5][2] == losses[0.0][2]  # pi = pi_ref: no penalty
    aggregated = {beta: float(estimators.aggregate_loss(estimators.per_token_loss(
        old, old, adv, mask, beta=beta, ref_logps=ref), mask, "grpo")) for beta in (0.0, 0.5)}
    assert aggregated[0.5] - aggregated[0.0] == pytest.approx(0.5 * sum(K3) / 3, abs=1e-14)


def test_the_penalty_gradient_pulls_logp_towards_the_reference():
    """d l_t / d log pi_t = beta (1 - pi_ref/pi) (A = 0: only the penalty), and one gradient-descent
    step on the log-probabilities moves every penalised token closer to pi_ref."""
    beta = 0.3
    logps, ref, mask = tokens()
    loss = estimators.per_token_loss(logps, logps.detach(), torch.zeros(1, dtype=F64), mask, beta=beta,
                                     ref_logps=ref).sum()
    (grad,) = torch.autograd.grad(loss, logps)
    assert grad[0].tolist() == pytest.approx([beta * s for s in SLOPE] + [0.0], abs=1e-15)
    stepped = logps.detach() - 0.1 * grad
    gap_before = (logps.detach() - ref).abs()[0, :2]
    gap_after = (stepped - ref).abs()[0, :2]
    assert torch.all(gap_after < gap_before)
    assert torch.equal(stepped[0, 2:], logps.detach()[0, 2:])  # at the reference and on the pad: no pull


def test_a_softmax_policy_trained_on_the_penalty_alone_approaches_the_reference():
    """Logits of a 3-way softmax, 200 gradient steps on the mean over all tokens of the per-token
    loss with A = 0 and beta = 1 (the expectation of k3 over pi is KL(pi || pi_ref)): KL falls
    monotonically and ends near 0."""
    ref = torch.tensor([0.6, 0.3, 0.1], dtype=F64).log()
    logits = torch.tensor([-1.0, 0.5, 2.0], dtype=F64, requires_grad=True)
    optimiser = torch.optim.SGD([logits], lr=0.5)
    kls = []
    for _ in range(200):
        logp = torch.log_softmax(logits, 0)
        kls.append(float((logp.exp() * (logp - ref)).sum().detach()))
        # every action as one token, weighted by pi: E_pi[k3] = KL(pi || pi_ref)
        per_token = estimators.per_token_loss(logp[None], logp[None].detach(), torch.zeros(1, dtype=F64),
                                              torch.ones(1, 3), beta=1.0, ref_logps=ref[None])
        loss = (logp.exp().detach() * per_token[0]).sum()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    assert kls[0] > 1.0
    assert all(b <= a + 1e-15 for a, b in zip(kls, kls[1:]))
    assert kls[-1] < 1e-3 * kls[0]
