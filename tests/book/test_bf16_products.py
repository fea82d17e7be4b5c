"""``benchmarks/bf16_products.py``'s float32 products are what its page says: each bf16 product is exact in float32, the
substituted ops give the float32 op on the widened operands rounded once to bf16, gradients flow through them, and every
other op passes through unchanged."""

import importlib.util
from pathlib import Path

import numpy as np
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

spec = importlib.util.spec_from_file_location("bf16_products", Path(__file__).parents[2] / "benchmarks" / "bf16_products.py")
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)

FINITE = st.floats(-(2.0**63), 2.0**63, allow_nan=False, width=32)  # products stay below float32's largest, 3.4e38


@settings(max_examples=200, deadline=None)
@given(arrays(np.float32, 64, elements=FINITE), arrays(np.float32, 64, elements=FINITE))
def test_the_product_of_two_bf16_numbers_is_exact_in_float32(x, y):
    a, b = torch.from_numpy(x).bfloat16(), torch.from_numpy(y).bfloat16()
    single, double = a.float() * b.float(), a.double() * b.double()
    tiny = double.abs() < torch.finfo(torch.float32).tiny  # below float32's normal range a product may round
    assert torch.equal(single.double()[~tiny], double[~tiny])


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 9), st.integers(1, 40), st.integers(1, 9), st.integers(0, 2**31 - 1))
def test_float32_products_are_the_float32_op_rounded_once(m, k, n, seed):
    g = torch.Generator().manual_seed(seed)
    a, b = torch.randn(m, k, generator=g).bfloat16(), torch.randn(k, n, generator=g).bfloat16()
    bias, base = torch.randn(n, generator=g).bfloat16(), torch.randn(3, m, n, generator=g).bfloat16()
    batch_a, batch_b = torch.randn(3, m, k, generator=g).bfloat16(), torch.randn(3, k, n, generator=g).bfloat16()
    with bench.Float32Products():
        got = [a @ b, torch.addmm(bias, a, b), torch.bmm(batch_a, batch_b), torch.baddbmm(base, batch_a, batch_b)]
    want = [(a.float() @ b.float()).bfloat16(), torch.addmm(bias.float(), a.float(), b.float()).bfloat16(),
            torch.bmm(batch_a.float(), batch_b.float()).bfloat16(), torch.baddbmm(base.float(), batch_a.float(), batch_b.float()).bfloat16()]
    for x, y in zip(got, want):
        assert x.dtype == torch.bfloat16 and torch.equal(x, y)


def test_other_ops_and_float32_products_pass_through_and_gradients_flow():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(5, 7, generator=g), torch.randn(7, 3, generator=g)
    with bench.Float32Products():
        assert torch.equal(a @ b, torch.mm(a, b))  # float32 operands: the op itself
        x = a.clone().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = (x @ b).float().sum()
        loss.backward()
    y = a.clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        (y @ b).float().sum().backward()
    assert x.grad is not None and torch.allclose(x.grad, y.grad, rtol=1e-2, atol=1e-2)
