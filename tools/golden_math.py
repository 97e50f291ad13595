"""golden_math.py - golden cases for the element-wise math family (tools/gen_golden.py).

cases(G) yields cases built with G.new (G is gen_golden's module). References are PyTorch in
float64 from the float32 inputs; attributes are rounded to float32 first, as fuse.h keeps them.
Edge cases whose outputs are not finite (sqrt of a negative, 1 / 0, log 0, NaN inputs) cannot
be stored here (outputs must be finite): tests/test_math.c checks them.
"""
import numpy as np
import torch
import torch.nn.functional as F

SELU_ALPHA = 1.67326319217681884765625
SELU_GAMMA = 1.05070102214813232421875


def f32(v):
    return float(np.float32(v))


def num(G, v):
    return G.fmt_num(v)


# ------------------------------------------------------------------ references
UNARY = {
    "sqrt": torch.sqrt,
    "reciprocal": lambda x: 1.0 / x,
    "exp": torch.exp,
    "log": torch.log,
    "neg": torch.neg,
    "abs": torch.abs,
    "floor": torch.floor,
    "ceil": torch.ceil,
    "erf": torch.erf,
    "tanh": torch.tanh,
    "softplus": lambda x: torch.logaddexp(x, torch.zeros_like(x)),  # no threshold
    "hardswish": F.hardswish,
}


def unary(c, op, x):
    return c.emit(op, [x], [], UNARY[op](c.T(x)))


def hardsigmoid(c, x, alpha=None, beta=None):
    a, b = f32(0.2 if alpha is None else alpha), f32(0.5 if beta is None else beta)
    attrs = []
    if alpha is not None:
        attrs.append("alpha=" + c_num(alpha))
    if beta is not None:
        attrs.append("beta=" + c_num(beta))
    return c.emit("hardsigmoid", [x], attrs, torch.clamp(a * c.T(x) + b, 0.0, 1.0))


def leaky_relu(c, x, alpha=None):
    a = f32(0.01 if alpha is None else alpha)
    attrs = [] if alpha is None else ["alpha=" + c_num(alpha)]
    xv = c.T(x)
    return c.emit("leaky_relu", [x], attrs, torch.where(xv < 0, a * xv, xv))


def elu(c, x, alpha=None):
    a = f32(1.0 if alpha is None else alpha)
    attrs = [] if alpha is None else ["alpha=" + c_num(alpha)]
    xv = c.T(x)
    return c.emit("elu", [x], attrs, torch.where(xv > 0, xv, a * torch.expm1(xv)))


def selu(c, x, alpha=None, gamma=None):
    a = f32(SELU_ALPHA if alpha is None else alpha)
    g = f32(SELU_GAMMA if gamma is None else gamma)
    attrs = []
    if alpha is not None:
        attrs.append("alpha=" + c_num(alpha))
    if gamma is not None:
        attrs.append("gamma=" + c_num(gamma))
    xv = c.T(x)
    return c.emit("selu", [x], attrs, g * torch.where(xv > 0, xv, a * torch.expm1(xv)))


def gelu(c, x, approximate=None):
    attrs = [] if approximate is None else ["approximate=%d" % approximate]
    y = F.gelu(c.T(x), approximate="tanh" if approximate == 1 else "none")
    return c.emit("gelu", [x], attrs, y)


def binary(c, op, a, b):
    av, bv = c.T(a), c.T(b)
    if op == "div":
        y = av / bv
    elif op == "pow":
        y = torch.pow(av, bv)
    else:  # prelu
        y = torch.where(av < 0, bv * av, av)
    return c.emit(op, [a, b], [], y)


def where(c, cond, a, b):
    return c.emit("where", [cond, a, b], [], torch.where(c.T(cond) != 0, c.T(a), c.T(b)))


def softsign(c, x):
    return c.emit("softsign", [x], [], F.softsign(c.T(x)))


def shrink(c, x, lambd=None, bias=None):
    lam, b = f32(0.5 if lambd is None else lambd), f32(0.0 if bias is None else bias)
    attrs = []
    if lambd is not None:
        attrs.append("lambd=" + c_num(lambd))
    if bias is not None:
        attrs.append("bias=" + c_num(bias))
    xv = c.T(x)
    y = torch.where(xv < -lam, xv + b, torch.where(xv > lam, xv - b, torch.zeros_like(xv)))
    return c.emit("shrink", [x], attrs, y)


def c_num(v):
    v = np.float32(v)
    s = str(v)
    return s[:-2] if s.endswith(".0") else s


# ------------------------------------------------------------------ cases
def cases(G):
    # unary functions on their domains, ranks 1..5
    c = G.new("math_positive_domain", "sqrt, log, reciprocal, exp on positive inputs, [3, 17]")
    x = c.input("x", [3, 17], 0.05, 4.0)
    c.output(*[unary(c, op, x) for op in ("sqrt", "log", "reciprocal", "exp")])
    yield c

    c = G.new("math_unary_signed", "neg, abs, floor, ceil, erf, tanh, softplus, hardswish, rank 5")
    x = c.input("x", [2, 1, 3, 2, 5], -5.0, 5.0)
    c.output(*[unary(c, op, x) for op in
               ("neg", "abs", "floor", "ceil", "erf", "tanh", "softplus", "hardswish")])
    yield c

    c = G.new("math_unary_rank1", "every unary op without attributes on a rank-1 tensor of 1")
    x = c.input("x", [1], 0.5, 2.0)
    c.output(*[unary(c, op, x) for op in UNARY])
    yield c

    c = G.new("math_unary_scalar", "tanh, erf and gelu of a rank-0 input")
    x = c.input("x", np.array(-0.75, dtype=np.float32))
    c.output(unary(c, "tanh", x), unary(c, "erf", x), gelu(c, x, 1))
    yield c

    # softplus and the activations far from 0: no overflow (e^89 is inf in float32)
    edge = np.array([-100, -88.8, -30, -20.5, -1e-3, 0, 1e-3, 15, 20.5, 30, 88.8, 100],
                    dtype=np.float32)
    c = G.new("math_large_inputs", "softplus, tanh, erf, gelu, elu, selu, hardswish at +-100")
    x = c.input("x", edge)
    c.output(unary(c, "softplus", x), unary(c, "tanh", x), unary(c, "erf", x), gelu(c, x),
             gelu(c, x, 1), elu(c, x), selu(c, x), unary(c, "hardswish", x),
             hardsigmoid(c, x))
    yield c

    c = G.new("math_at_zero", "elu, selu, leaky_relu, prelu, hardswish, gelu, floor at 0 and -0")
    x = c.input("x", np.array([0.0, -0.0, -1.0, 1.0, -3.0, 3.0, -2.5, 2.5], dtype=np.float32))
    c.output(elu(c, x, 0.7), selu(c, x), leaky_relu(c, x, 0.2), gelu(c, x),
             unary(c, "hardswish", x), unary(c, "floor", x), unary(c, "ceil", x),
             binary(c, "prelu", x, c.const("s", np.array([0.25], dtype=np.float32), inline=True)))
    yield c

    # attributes: given, and left out (ONNX's defaults)
    c = G.new("math_activation_attrs", "hardsigmoid, leaky_relu, elu, selu, gelu with attributes")
    x = c.input("x", [2, 3, 4, 5], -4.0, 4.0)
    c.output(hardsigmoid(c, x), hardsigmoid(c, x, 1.0 / 6.0, 0.5), hardsigmoid(c, x, -0.3, 0.1),
             leaky_relu(c, x), leaky_relu(c, x, 0.1), leaky_relu(c, x, -1.5),
             elu(c, x), elu(c, x, 0.5), selu(c, x), selu(c, x, 1.5, 2.0),
             gelu(c, x), gelu(c, x, 0), gelu(c, x, 1))
    yield c

    c = G.new("math_attrs_partial", "hardsigmoid and selu with one of their two attributes")
    x = c.input("x", [7, 3], -3.0, 3.0)
    c.output(hardsigmoid(c, x, alpha=0.3), hardsigmoid(c, x, beta=0.25),
             selu(c, x, alpha=2.0), selu(c, x, gamma=0.5))
    yield c

    # div
    c = G.new("math_div_broadcast", "div [2,3,1,5] / [3,4,1] -> [2,3,4,5], and scalar operands")
    a = c.input("a", [2, 3, 1, 5])
    bd = c.rng.uniform(0.5, 2.0, size=(3, 4, 1)) * c.rng.choice([-1.0, 1.0], size=(3, 4, 1))
    b = c.input("b", bd.astype(np.float32))
    c.output(binary(c, "div", a, b), binary(c, "div", a, 7.0), binary(c, "div", 1.5, b))
    yield c

    c = G.new("math_div_rank5", "div with a rank-5 broadcast against a constant [1,1,3,1,1]")
    a = c.input("a", [2, 3, 3, 2, 3])
    k = c.const("k", np.array([0.5, -3.0, 1.25], dtype=np.float32).reshape(1, 1, 3, 1, 1))
    c.output(binary(c, "div", a, k), binary(c, "div", k, c.input("z", [2, 1, 1, 3], 1.0, 2.0)))
    yield c

    # pow
    c = G.new("math_pow_negative_base", "pow: negative bases with integral exponents, broadcast")
    base = c.rng.uniform(0.5, 2.0, size=(4, 6)) * c.rng.choice([-1.0, 1.0], size=(4, 6))
    a = c.input("a", base.astype(np.float32))
    e = c.const("e", np.array([2, 3, -1, 0, 1, -2], dtype=np.float32))
    c.output(binary(c, "pow", a, e), binary(c, "pow", a, 2.0), binary(c, "pow", a, 3.0))
    yield c

    c = G.new("math_pow_fractional", "pow: positive bases, fractional exponents, both inputs")
    a = c.input("a", [3, 1, 4], 0.1, 3.0)
    b = c.input("b", [5, 1], -1.5, 2.5)
    c.output(binary(c, "pow", a, b), binary(c, "pow", a, 0.5), binary(c, "pow", 2.0, b))
    yield c

    # prelu
    c = G.new("math_prelu_channels", "prelu with a per-channel slope [C,1,1] and a [W] slope")
    x = c.input("x", [2, 4, 3, 5], -2.0, 2.0)
    s1 = c.const("s1", [4, 1, 1], -0.5, 0.5)
    s2 = c.const("s2", [5], 0.0, 0.5)
    c.output(binary(c, "prelu", x, s1), binary(c, "prelu", x, s2),
             binary(c, "prelu", x, c.const("s3", [1], 0.0, 0.5, inline=True)))
    yield c

    c = G.new("math_prelu_onnx", "prelu as ONNX's tests: x [3,4,5] with slope [5] and [3,4,5]")
    x = c.input("x", [3, 4, 5], -2.0, 2.0)
    c.output(binary(c, "prelu", x, c.input("slope", [5])),
             binary(c, "prelu", x, c.input("full", [3, 4, 5])))
    yield c

    # where
    c = G.new("math_where_broadcast", "where: condition [3,1,5], a [4,1], b scalar -> [3,4,5]")
    cond = c.const("cond", (c.rng.rand(3, 1, 5) < 0.5).astype(np.float32))
    a = c.input("a", [4, 1])
    c.output(where(c, cond, a, -0.25), where(c, cond, 2.0, a))
    yield c

    c = G.new("math_where_values", "where: a condition of any value (not 0 selects a), rank 4")
    cv = np.array([0.0, 1.0, -2.0, 0.5, -0.0, 3.0], dtype=np.float32).reshape(1, 2, 1, 3)
    cond = c.input("cond", cv)
    a = c.input("a", [2, 1, 4, 3])
    b = c.input("b", [2, 2, 4, 1])
    c.output(where(c, cond, a, b))
    yield c

    # PyTorch 1.13's decomposed exports at opset 13
    c = G.new("math_gelu_decomposed", "GELU as Div, Erf, Add, Mul (PyTorch at opset 13)")
    x = c.input("x", [2, 7, 9], -4.0, 4.0)
    t = binary(c, "div", x, 1.4142135381698608)
    t = unary(c, "erf", t)
    t = c.add(t, 1.0)
    t = c.mul(x, t)
    c.output(c.mul(t, 0.5))
    yield c

    c = G.new("math_hardswish_silu_decomposed",
              "hardswish as HardSigmoid + Mul, SiLU as Sigmoid + Mul (PyTorch at opset 13)")
    x = c.input("x", [1, 3, 5, 6], -5.0, 5.0)
    c.output(c.mul(x, hardsigmoid(c, x, 1.0 / 6.0, 0.5)), c.mul(x, c.sigmoid(x)))
    yield c

    # between convolutions: the plan converts layouts around ops that run in NCHW
    c = G.new("math_conv_chain", "conv2d -> prelu -> hardswish -> conv2d -> gelu + residual -> div")
    x = c.input("x", [1, 5, 9, 11])
    w1 = c.const("w1", [12, 5, 3, 3], -0.4, 0.4)
    w2 = c.const("w2", [12, 12, 3, 3], -0.3, 0.3)
    y = c.conv2d(x, w1, padding=(1, 1, 1, 1))
    y = binary(c, "prelu", y, c.const("slope", [12, 1, 1], 0.0, 0.3))
    y = unary(c, "hardswish", y)
    z = c.conv2d(y, w2, padding=(1, 1, 1, 1))
    z = c.add(gelu(c, z, 1), y)
    q = c.const("q", [1, 12, 1, 1], 1.0, 2.0)
    c.output(binary(c, "div", z, q), selu(c, c.relu(z)))
    yield c

    # added through the operator table's checklist (docs/source-map.md): ONNX Softsign, Shrink
    c = G.new("math_softsign_shrink",
              "softsign; shrink with its defaults, as softshrink (bias = lambd), as hardshrink "
              "(bias 0) and with a negative bias; at and around the bounds, and far out")
    x = c.input("x", [2, 3, 4, 5], -3.0, 3.0)
    e = c.input("e", np.array([-100, -1.5, -1, -0.75, -0.5, -0.25, -0.0, 0, 0.25, 0.5, 0.75,
                               1, 1.5, 100, 1e-30, -1e-30], dtype=np.float32))
    c.output(softsign(c, x), shrink(c, x), shrink(c, x, 1.5, 1.5), shrink(c, x, 0.5, 0),
             shrink(c, x, lambd=0.25), shrink(c, x, bias=-0.5),
             softsign(c, e), shrink(c, e), shrink(c, e, 0.75, 0.75), shrink(c, e, 1, 0),
             softsign(c, shrink(c, softsign(c, x), 0.1, 0.05)))
    yield c

    # randomized: shapes of rank 1..5 with broadcasting, a chain of ops
    r = np.random.RandomState(4242)
    ops = list(UNARY) + ["gelu", "gelu1", "elu", "selu", "leaky", "hsig"]
    for i in range(8):
        c = G.new("math_random_%d" % i, "random shapes and a chain of element-wise math ops")
        rank = int(r.randint(1, 6))
        shape = [int(v) for v in r.randint(1, 6, size=rank)]
        x = c.input("x", shape, -2.0, 2.0)
        bshape = [d if r.rand() < 0.6 else 1 for d in shape[int(r.randint(0, rank)):]]
        bd = c.rng.uniform(0.5, 1.5, size=bshape) * c.rng.choice([-1.0, 1.0], size=bshape)
        b = c.input("b", bd.astype(np.float32))
        y = x
        for _ in range(3):
            op = ops[int(r.randint(0, len(ops)))]
            if op in ("sqrt", "log"):
                y = unary(c, op, unary(c, "abs", y))
                y = c.add(y, 1.0) if op == "log" else y
            elif op == "reciprocal":
                y = unary(c, op, c.add(unary(c, "abs", y), 0.5))
            elif op == "exp":
                y = unary(c, op, unary(c, "tanh", y))
            elif op in UNARY:
                y = unary(c, op, y)
            elif op.startswith("gelu"):
                y = gelu(c, y, 1 if op == "gelu1" else None)
            elif op == "elu":
                y = elu(c, y, float(r.choice([0.5, 1.0, 2.0])))
            elif op == "selu":
                y = selu(c, y)
            elif op == "leaky":
                y = leaky_relu(c, y, float(r.choice([0.01, 0.2])))
            else:
                y = hardsigmoid(c, y, 0.25, 0.5)
            kind = int(r.randint(0, 4))
            if kind == 0:
                y = binary(c, "div", y, b)
            elif kind == 1:
                y = binary(c, "prelu", y, b) if len(bshape) <= rank else y
            elif kind == 2:
                y = where(c, b, y, x)
            else:
                y = binary(c, "pow", c.add(unary(c, "abs", y), 0.5), b)
        c.output(y)
        yield c
