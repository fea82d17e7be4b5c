"""bf16 products on a CPU without bf16 instructions (:mod:`attncoda.engine.bf16_products`) are what the methods page
says: each bf16 product is exact in float32, the substituted ops give the float32 op on the widened operands rounded
once to bf16, gradients flow through them, every other op passes through unchanged; the path is chosen by the CPU,
kept by nested blocks, and named in the perplexity and suite-run cache keys when it is not native."""

import numpy as np
import torch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from attncoda.engine import bf16_products as products

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
    with products.Float32Products():
        got = [a @ b, torch.addmm(bias, a, b), torch.bmm(batch_a, batch_b), torch.baddbmm(base, batch_a, batch_b)]
    want = [(a.float() @ b.float()).bfloat16(), torch.addmm(bias.float(), a.float(), b.float()).bfloat16(),
            torch.bmm(batch_a.float(), batch_b.float()).bfloat16(), torch.baddbmm(base.float(), batch_a.float(), batch_b.float()).bfloat16()]
    for x, y in zip(got, want):
        assert x.dtype == torch.bfloat16 and torch.equal(x, y)


def test_other_ops_and_float32_products_pass_through_and_gradients_flow():
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(5, 7, generator=g), torch.randn(7, 3, generator=g)
    with products.Float32Products():
        assert torch.equal(a @ b, torch.mm(a, b))  # float32 operands: the op itself
        x = a.clone().requires_grad_()
        with torch.autocast("cpu", dtype=torch.bfloat16):
            loss = (x @ b).float().sum()
        loss.backward()
    y = a.clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        (y @ b).float().sum().backward()
    assert x.grad is not None and torch.allclose(x.grad, y.grad, rtol=1e-2, atol=1e-2)


def test_the_path_follows_the_cpu_and_a_nested_block_keeps_the_outer_path(monkeypatch):
    monkeypatch.setattr(products, "native_bf16_cpu", lambda: False)
    assert products.products_path("cpu") == "float32" and products.products_path("meta") == "native"
    monkeypatch.setattr(products, "native_bf16_cpu", lambda: True)
    assert products.products_path("cpu") == "native"
    a, b = torch.randn(4, 5).bfloat16(), torch.randn(5, 3).bfloat16()
    with products.bf16_products(path="float32") as outer:
        with products.bf16_products(path="native") as inner:
            assert outer == inner == products.products_path() == "float32"
            assert torch.equal(a @ b, (a.float() @ b.float()).bfloat16())
    with pytest.raises(ValueError, match="use one of native, float32"):
        with products.bf16_products(path="fp32"):
            pass


def test_a_float32_products_pass_is_cached_under_its_own_key(monkeypatch, tmp_path):
    """Perplexity evaluations and suite runs made with float32 products give other bits than native ones, so neither
    cache reads one back as the other; on a native CPU the keys are what they were before the path existed."""
    from types import SimpleNamespace

    from attncoda.engine import perplexity
    from attncoda.engine.training import SuiteRun

    loaded = SimpleNamespace(info=SimpleNamespace(name="m", weights_sha256="w"), input_device=torch.device("cpu"))
    ids = np.zeros((2, 4), dtype=np.int64)
    run, run32 = SuiteRun("s", 8, 1, 1, 0, steps=4, precision="bf16"), SuiteRun("s", 8, 1, 1, 0, steps=4)
    monkeypatch.setattr(products, "native_bf16_cpu", lambda: True)
    native = perplexity._key(loaded, ids, [], "bfloat16"), run.key(), run32.key()
    monkeypatch.setattr(products, "native_bf16_cpu", lambda: False)
    assert perplexity._key(loaded, ids, [], "bfloat16") != native[0] and run.key() != native[1]
    assert perplexity._key(loaded, ids, [], "float32") == perplexity._key(loaded, ids, [], "float32") and run32.key() == native[2]
    with products.bf16_products(path="native"):
        assert (perplexity._key(loaded, ids, [], "bfloat16"), run.key()) == native[:2]


def test_a_suite_step_on_the_float32_path_runs_its_products_in_float32(monkeypatch):
    """A bf16 training step on a CPU without bf16 instructions: forward and backward products go through the mode."""
    from attncoda.engine import training

    seen = []

    class Counting(products.Float32Products):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if func in products.PRODUCTS:
                seen.append(func)
            return super().__torch_dispatch__(func, types, args, kwargs)

    monkeypatch.setattr(products, "native_bf16_cpu", lambda: False)
    monkeypatch.setattr(products, "Float32Products", Counting)
    model = torch.nn.Sequential(torch.nn.Linear(6, 6))
    model.forward = lambda input_ids, labels: SimpleLoss(model[0](input_ids.float()).float().pow(2).mean())
    run = training.SuiteRun("s", 8, 1, 1, 0, steps=4, precision="bf16")
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    training.train_step(model, optimizer, run, lambda step: (np.ones((2, 6)), np.ones((2, 6))), 1)
    assert seen == [torch.ops.aten.addmm.default, torch.ops.aten.mm.default], "the forward product and the weight's gradient"


class SimpleLoss:
    def __init__(self, loss):
        self.loss = loss
