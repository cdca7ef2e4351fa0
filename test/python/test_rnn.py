"""nodeweave.core.nn recurrent cells and layers against torch.nn with copied weights: forward values,
gradients of inputs, initial states and every parameter (float64), parameter names/shapes, init
range and bad inputs."""

import math

import numpy as np
import pytest
import torch

import nodeweave.core as nc

TOL = dict(rtol=1e-10, atol=1e-12)


def _copy(ours, ref):
    sd = {k: nc.tensor(v.detach().numpy()) for k, v in ref.state_dict().items()}
    missing, unexpected = ours.load_state_dict(sd)
    assert missing == [] and unexpected == []


def _leaf(a):
    return nc.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def _grads_match(ours, ref):
    ours_p = dict(ours.named_parameters())
    names = [n for n, _ in ref.named_parameters()]
    assert list(ours_p) == names
    for name, p in ref.named_parameters():
        np.testing.assert_allclose(ours_p[name].grad.numpy(), p.grad.numpy(), err_msg=name, **TOL)


def _backprop(outs_nc, outs_th, rng):
    tot_nc, tot_th = 0, 0
    for a, b in zip(outs_nc, outs_th):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)
        cot = rng.standard_normal(tuple(b.shape))
        tot_nc = tot_nc + (a * nc.tensor(cot)).sum()
        tot_th = tot_th + (b * torch.tensor(cot)).sum()
    tot_nc.backward()
    tot_th.backward()


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("with_h", [True, False])
def test_gru_cell_matches_torch(bias, with_h):
    rng = np.random.default_rng(1)
    ref = torch.nn.GRUCell(3, 4, bias=bias).double()
    ours = nc.nn.GRUCell(3, 4, bias=bias, dtype=nc.float64)
    _copy(ours, ref)
    x_nc, x_th = _leaf(rng.standard_normal((5, 3)))
    h_nc, h_th = _leaf(rng.standard_normal((5, 4)))
    out_nc = ours(x_nc, h_nc if with_h else None)
    out_th = ref(x_th, h_th if with_h else None)
    _backprop([out_nc], [out_th], rng)
    np.testing.assert_allclose(x_nc.grad.numpy(), x_th.grad.numpy(), **TOL)
    if with_h:
        np.testing.assert_allclose(h_nc.grad.numpy(), h_th.grad.numpy(), **TOL)
    _grads_match(ours, ref)


@pytest.mark.parametrize("bias", [True, False])
def test_lstm_cell_matches_torch(bias):
    rng = np.random.default_rng(2)
    ref = torch.nn.LSTMCell(3, 4, bias=bias).double()
    ours = nc.nn.LSTMCell(3, 4, bias=bias, dtype=nc.float64)
    _copy(ours, ref)
    x_nc, x_th = _leaf(rng.standard_normal((5, 3)))
    h_nc, h_th = _leaf(rng.standard_normal((5, 4)))
    c_nc, c_th = _leaf(rng.standard_normal((5, 4)))
    _backprop(ours(x_nc, (h_nc, c_nc)), ref(x_th, (h_th, c_th)), rng)
    for a, b in ((x_nc, x_th), (h_nc, h_th), (c_nc, c_th)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL)
    _grads_match(ours, ref)


def test_cells_unbatched_and_default_state():
    rng = np.random.default_rng(3)
    for cls_nc, cls_th in ((nc.nn.GRUCell, torch.nn.GRUCell), (nc.nn.LSTMCell, torch.nn.LSTMCell)):
        ref = cls_th(3, 2).double()
        ours = cls_nc(3, 2, dtype=nc.float64)
        _copy(ours, ref)
        x = rng.standard_normal(3)
        out_nc, out_th = ours(nc.tensor(x)), ref(torch.tensor(x))
        if isinstance(out_th, tuple):
            for a, b in zip(out_nc, out_th):
                assert a.shape == (2,)
                np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)
        else:
            assert out_nc.shape == (2,)
            np.testing.assert_allclose(out_nc.detach().numpy(), out_th.detach().numpy(), **TOL)


@pytest.mark.parametrize("mode", ["LSTM", "GRU"])
@pytest.mark.parametrize("num_layers,bidirectional,batch_first,bias",
                         [(1, False, False, True), (2, False, True, True), (2, True, False, False),
                          (3, True, True, True)])
@pytest.mark.parametrize("with_state", [False, True])
def test_sequence_modules_match_torch(mode, num_layers, bidirectional, batch_first, bias, with_state):
    rng = np.random.default_rng(4)
    kw = dict(num_layers=num_layers, bidirectional=bidirectional, batch_first=batch_first, bias=bias)
    ref = getattr(torch.nn, mode)(3, 4, **kw).double()
    ours = getattr(nc.nn, mode)(3, 4, dtype=nc.float64, **kw)
    _copy(ours, ref)
    seq, batch = 5, 2
    shape = (batch, seq, 3) if batch_first else (seq, batch, 3)
    x_nc, x_th = _leaf(rng.standard_normal(shape))
    states_nc, states_th = [], []
    n_states = num_layers * (2 if bidirectional else 1)
    if with_state:
        for _ in range(2 if mode == "LSTM" else 1):
            a, b = _leaf(rng.standard_normal((n_states, batch, 4)))
            states_nc.append(a)
            states_th.append(b)
    arg_nc = (tuple(states_nc) if mode == "LSTM" else states_nc[0]) if with_state else None
    arg_th = (tuple(states_th) if mode == "LSTM" else states_th[0]) if with_state else None
    out_nc, hid_nc = ours(x_nc, arg_nc)
    out_th, hid_th = ref(x_th, arg_th)
    flat_nc = [out_nc] + (list(hid_nc) if mode == "LSTM" else [hid_nc])
    flat_th = [out_th] + (list(hid_th) if mode == "LSTM" else [hid_th])
    _backprop(flat_nc, flat_th, rng)
    np.testing.assert_allclose(x_nc.grad.numpy(), x_th.grad.numpy(), **TOL)
    for a, b in zip(states_nc, states_th):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), **TOL)
    _grads_match(ours, ref)


def test_lstm_unbatched_input():
    rng = np.random.default_rng(5)
    ref = torch.nn.LSTM(3, 2, num_layers=2).double()
    ours = nc.nn.LSTM(3, 2, num_layers=2, dtype=nc.float64)
    _copy(ours, ref)
    x = rng.standard_normal((4, 3))
    out_nc, (h_nc, c_nc) = ours(nc.tensor(x))
    out_th, (h_th, c_th) = ref(torch.tensor(x))
    for a, b in ((out_nc, out_th), (h_nc, h_th), (c_nc, c_th)):
        assert a.shape == tuple(b.shape)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), **TOL)


def test_parameter_names_shapes_and_init_range():
    ours = nc.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    ref = torch.nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    assert [(n, tuple(p.shape)) for n, p in ours.named_parameters()] == \
           [(n, tuple(p.shape)) for n, p in ref.named_parameters()]
    nc.manual_seed(0)
    big = nc.nn.GRUCell(50, 100)
    bound = 1 / math.sqrt(100)
    for p in big.parameters():
        v = p.detach().numpy()
        assert np.abs(v).max() <= bound
        assert np.abs(v).max() > 0.9 * bound  # actually spread over the whole range
        # the mean of n uniform(-b, b) draws has standard deviation b / sqrt(3n): allow 4 of them
        assert abs(v.mean()) < 4 * bound / math.sqrt(3 * v.size)


def test_dropout_between_layers_only_in_training():
    nc.manual_seed(0)
    lstm = nc.nn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = nc.randn(5, 2, 3)
    lstm.eval()
    a, _ = lstm(x)
    b, _ = lstm(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
    lstm.train()
    c, _ = lstm(x)
    assert not np.allclose(a.detach().numpy(), c.detach().numpy())


def test_bad_inputs_name_the_argument():
    cell = nc.nn.GRUCell(3, 4)
    with pytest.raises(ValueError, match="input"):
        cell(nc.zeros(2, 5))
    with pytest.raises(ValueError, match="hx"):
        cell(nc.zeros(2, 3), nc.zeros(3, 4))
    with pytest.raises(ValueError, match=r"hx\[1\]"):
        nc.nn.LSTMCell(3, 4)(nc.zeros(2, 3), (nc.zeros(2, 4), nc.zeros(2, 5)))
    lstm = nc.nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="input"):
        lstm(nc.zeros(5, 2, 4))
    with pytest.raises(ValueError, match=r"h_0"):
        lstm(nc.zeros(5, 2, 3), (nc.zeros(1, 2, 4), nc.zeros(2, 2, 4)))
    with pytest.raises(ValueError, match="hidden_size"):
        nc.nn.LSTM(3, 0)
    with pytest.raises(ValueError, match="num_layers"):
        nc.nn.GRU(3, 4, num_layers=0)
    with pytest.raises(NotImplementedError, match="proj_size"):
        nc.nn.LSTM(3, 4, proj_size=2)
