"""jax.scipy.spatial.transform: Rotation (unit quaternions, scalar last, leading batch axes) and Slerp.

Conversions work on the last axis, so every method is batched, jittable and differentiable.
"""

from __future__ import annotations

import math
import re
from typing import Any, NamedTuple

from pyjax import numpy as jnp

__all__ = ["Rotation", "Slerp"]


def _norm(v):
    return jnp.sqrt(jnp.sum(v * v, axis=-1))


def _normalize(q):
    return q / _norm(q)[..., None]


def _compose(p, q):
    """Quaternion product p * q (scalar last)."""
    c = jnp.cross(p[..., :3], q[..., :3])
    p0, p1, p2, p3 = (p[..., i] for i in range(4))
    q0, q1, q2, q3 = (q[..., i] for i in range(4))
    return jnp.stack(
        [
            p3 * q0 + q3 * p0 + c[..., 0],
            p3 * q1 + q3 * p1 + c[..., 1],
            p3 * q2 + q3 * p2 + c[..., 2],
            p3 * q3 - p0 * q0 - p1 * q1 - p2 * q2,
        ],
        axis=-1,
    )


def _check_seq(seq: str) -> bool:
    """Validate an Euler axis string; returns whether it is intrinsic (upper case)."""
    intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
    extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
    if not (intrinsic or extrinsic):
        raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], got {seq}")
    if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
        raise ValueError(f"Expected consecutive axes to be different, got {seq}")
    return intrinsic


def _axis_quat(axis: int, angle):
    z = jnp.zeros_like(angle)
    half = angle / 2.0
    parts = [z, z, z, jnp.cos(half)]
    parts[axis] = jnp.sin(half)
    return jnp.stack(parts, axis=-1)


def _as_matrix(q):
    x, y, z, w = (q[..., i] for i in range(4))
    x2, y2, z2, w2 = x * x, y * y, z * z, w * w
    xy, zw, xz, yw, yz, xw = x * y, z * w, x * z, y * w, y * z, x * w
    rows = [
        [x2 - y2 - z2 + w2, 2 * (xy - zw), 2 * (xz + yw)],
        [2 * (xy + zw), -x2 + y2 - z2 + w2, 2 * (yz - xw)],
        [2 * (xz - yw), 2 * (yz + xw), -x2 - y2 + z2 + w2],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def _from_matrix(m):
    m = jnp.asarray(m)
    tr = m[..., 0, 0] + m[..., 1, 1] + m[..., 2, 2]
    choice = jnp.argmax(jnp.stack([m[..., 0, 0], m[..., 1, 1], m[..., 2, 2], tr], axis=-1), axis=-1)
    cands = []
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        q = [None] * 4
        q[i] = 1 - tr + 2 * m[..., i, i]
        q[j] = m[..., j, i] + m[..., i, j]
        q[k] = m[..., k, i] + m[..., i, k]
        q[3] = m[..., k, j] - m[..., j, k]
        cands.append(jnp.stack(q, axis=-1))
    cands.append(
        jnp.stack(
            [m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0], m[..., 1, 0] - m[..., 0, 1], 1 + tr], axis=-1
        )
    )
    q = cands[3]
    for i in range(3):
        q = jnp.where((choice == i)[..., None], cands[i], q)
    return _normalize(q)


def _from_rotvec(rv, degrees: bool):
    rv = jnp.asarray(rv)
    if degrees:
        rv = jnp.deg2rad(rv)
    angle = _norm(rv)
    a2 = angle * angle
    small = 0.5 - a2 / 48 + a2 * a2 / 3840
    large = jnp.sin(angle / 2) / angle
    scale = jnp.where(angle <= 1e-3, small, large)
    return jnp.concatenate([scale[..., None] * rv, jnp.cos(angle / 2)[..., None]], axis=-1)


def _as_rotvec(q, degrees: bool):
    q = jnp.where((q[..., 3] < 0)[..., None], -q, q)
    angle = 2.0 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
    a2 = angle * angle
    small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
    large = angle / jnp.sin(angle / 2)
    scale = jnp.where(angle <= 1e-3, small, large)
    if degrees:
        scale = jnp.rad2deg(scale)
    return scale[..., None] * q[..., :3]


def _as_euler(q, axes: list[int], extrinsic: bool, degrees: bool):
    """Euler angles from quaternions by the direct quaternion method (Bernardes & Viollet, 2022)."""
    first, third = (0, 2) if extrinsic else (2, 0)
    i, j, k = axes if extrinsic else axes[::-1]
    symmetric = i == k
    if symmetric:
        k = 3 - i - j
    sign = (i - j) * (j - k) * (k - i) // 2
    qw, qi, qj, qk = q[..., 3], q[..., i], q[..., j], q[..., k]
    if symmetric:
        a, b, c, d = qw, qi, qj, qk * sign
    else:
        a, b, c, d = qw - qj, qi + qk * sign, qj + qw, qk * sign - qi
    ang = [jnp.zeros_like(qw)] * 3
    ang[1] = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
    eps = 1e-7
    case = jnp.where(jnp.abs(ang[1] - math.pi) <= eps, 2, 0)
    case = jnp.where(jnp.abs(ang[1]) <= eps, 1, case)
    half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
    ang[0] = jnp.where(case == 1, 2 * half_sum, 2 * half_diff * (-1 if extrinsic else 1))
    ang[first] = jnp.where(case == 0, half_sum - half_diff, ang[first])
    ang[third] = jnp.where(case == 0, half_sum + half_diff, ang[third])
    if not symmetric:
        ang[third] = ang[third] * sign
        ang[1] = ang[1] - math.pi / 2
    out = jnp.stack(ang, axis=-1)
    out = (out + math.pi) % (2 * math.pi) - math.pi
    return jnp.rad2deg(out) if degrees else out


def _canonical(q):
    neg, zero = q < 0, q == 0
    flip = (
        neg[..., 3]
        | (zero[..., 3] & neg[..., 0])
        | (zero[..., 3] & zero[..., 0] & neg[..., 1])
        | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2])
    )
    return jnp.where(flip[..., None], -q, q)


class Rotation(NamedTuple):
    """3-D rotation(s) stored as unit quaternions `quat` of shape (..., 4), scalar last."""

    quat: Any

    @classmethod
    def concatenate(cls, rotations) -> Rotation:
        """Join several Rotation objects into one."""
        return cls(jnp.concatenate([r.quat for r in rotations]))

    @classmethod
    def from_euler(cls, seq: str, angles, degrees: bool = False) -> Rotation:
        """From Euler angles about axes `seq` (lower case extrinsic, upper case intrinsic)."""
        if len(seq) < 1 or len(seq) > 3:
            raise ValueError(f"Expected axis specification to be a non-empty string of upto 3 characters, got {seq}")
        intrinsic = _check_seq(seq)
        angles = jnp.atleast_1d(angles)
        if not jnp.issubdtype(angles.dtype, jnp.inexact):
            angles = angles.astype(jnp.result_type(angles.dtype, 1.0))
        if degrees:
            angles = jnp.deg2rad(angles)
        axes = ["xyz".index(c) for c in seq.lower()]
        if angles.shape[-1] != len(axes):
            angles = jnp.broadcast_to(angles, angles.shape[:-1] + (len(axes),))
        out = _axis_quat(axes[0], angles[..., 0])
        for n in range(1, len(axes)):
            q = _axis_quat(axes[n], angles[..., n])
            out = _compose(out, q) if intrinsic else _compose(q, out)
        return cls(out)

    @classmethod
    def from_matrix(cls, matrix) -> Rotation:
        """From (..., 3, 3) rotation matrices."""
        return cls(_from_matrix(matrix))

    @classmethod
    def from_mrp(cls, mrp) -> Rotation:
        """From Modified Rodrigues Parameters."""
        mrp = jnp.asarray(mrp)
        s = jnp.sum(mrp * mrp, axis=-1)[..., None] + 1
        return cls(jnp.concatenate([2 * mrp[..., :3], 2 - s], axis=-1) / s)

    @classmethod
    def from_quat(cls, quat) -> Rotation:
        """From (..., 4) quaternions (scalar last), normalised."""
        return cls(_normalize(jnp.asarray(quat)))

    @classmethod
    def from_rotvec(cls, rotvec, degrees: bool = False) -> Rotation:
        """From rotation vectors (axis times angle)."""
        return cls(_from_rotvec(rotvec, degrees))

    @classmethod
    def identity(cls, num: int | None = None, dtype=float) -> Rotation:
        """The identity rotation (num must be None, as in JAX)."""
        assert num is None
        return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

    @classmethod
    def random(cls, random_key, num: int | None = None) -> Rotation:
        """Not implemented (as in JAX)."""
        raise NotImplementedError()

    def __getitem__(self, indexer) -> Rotation:
        if self.single:
            raise TypeError("Single rotation is not subscriptable.")
        return Rotation(self.quat[indexer])

    def __len__(self) -> int:
        if self.single:
            raise TypeError("Single rotation has no len().")
        return self.quat.shape[0]

    def __mul__(self, other: Rotation) -> Rotation:
        """Composition: apply `other` first, then self."""
        return Rotation.from_quat(_compose(self.quat, other.quat))

    def apply(self, vectors, inverse: bool = False):
        """Rotate (..., 3) vectors (by the inverse rotation if inverse=True)."""
        m = self.as_matrix()
        if inverse:
            m = jnp.swapaxes(m, -1, -2)
        return jnp.matmul(m, jnp.asarray(vectors)[..., None])[..., 0]

    def as_euler(self, seq: str, degrees: bool = False):
        """Euler angles for a 3-axis sequence `seq`."""
        if len(seq) != 3:
            raise ValueError(f"Expected 3 axes, got {seq}.")
        intrinsic = _check_seq(seq)
        return _as_euler(self.quat, ["xyz".index(c) for c in seq.lower()], not intrinsic, degrees)

    def as_matrix(self):
        """(..., 3, 3) rotation matrices."""
        return _as_matrix(self.quat)

    def as_mrp(self):
        """Modified Rodrigues Parameters."""
        sign = jnp.where(self.quat[..., 3] < 0, -1.0, 1.0)
        return sign[..., None] * self.quat[..., :3] / (1.0 + sign * self.quat[..., 3])[..., None]

    def as_rotvec(self, degrees: bool = False):
        """Rotation vectors (axis times angle, angle in [0, pi])."""
        return _as_rotvec(self.quat, degrees)

    def as_quat(self, canonical: bool = False, scalar_first: bool = False):
        """Quaternions (scalar last unless scalar_first; w >= 0 if canonical)."""
        q = _canonical(self.quat) if canonical else self.quat
        return jnp.roll(q, shift=1, axis=-1) if scalar_first else q

    def inv(self) -> Rotation:
        """The inverse rotation(s)."""
        return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

    def magnitude(self):
        """Rotation angle(s) in radians, in [0, pi]."""
        return 2.0 * jnp.arctan2(_norm(self.quat[..., :3]), jnp.abs(self.quat[..., 3]))

    def mean(self, weights=None) -> Rotation:
        """Weighted mean rotation (principal eigenvector of sum w q q^T)."""
        n = self.quat.shape[0]
        w = jnp.ones(n, dtype=self.quat.dtype) if weights is None else jnp.asarray(weights, dtype=self.quat.dtype)
        _check_one_per_rotation(
            w,
            len(self),
            "Expected `weights` to be 1 dimensional, got shape {shape}.",
            "Expected `weights` to have number of values equal to number of rotations, got {count} values and {n} "
            "rotations.",
        )
        k = jnp.dot(w[None, :] * self.quat.T, self.quat)
        _, v = jnp.linalg.eigh(k)
        return Rotation(v[:, -1])

    @property
    def single(self) -> bool:
        """Whether this holds a single rotation."""
        return self.quat.ndim == 1


def _check_one_per_rotation(a, n: int, ndim_message: str, count_message: str) -> None:
    """ValueError unless `a` is 1-D with one entry per rotation (n of them); the messages (JAX's) are
    formatted with a's shape, ndim and count."""
    if a.ndim != 1:
        raise ValueError(ndim_message.format(shape=a.shape, ndim=a.ndim))
    if a.shape[0] != n:
        raise ValueError(count_message.format(count=a.shape[0], n=n))


class Slerp(NamedTuple):
    """Spherical linear interpolation between key rotations at increasing key times (build with init)."""

    times: Any
    timedelta: Any
    rotations: Rotation
    rotvecs: Any

    @classmethod
    def init(cls, times, rotations: Rotation) -> Slerp:
        """Interpolator through `rotations` (at least 2) at the 1-D key `times`."""
        if not isinstance(rotations, Rotation):
            raise TypeError("`rotations` must be a `Rotation` instance.")
        if rotations.single or len(rotations) == 1:
            raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
        times = jnp.asarray(times, dtype=rotations.quat.dtype)
        _check_one_per_rotation(
            times,
            len(rotations),
            "Expected times to be specified in a 1 dimensional array, got {ndim} dimensions.",
            "Expected number of rotations to be equal to number of timestamps given, got {n} rotations and {count} "
            "timestamps.",
        )
        starts = Rotation(rotations.as_quat()[:-1])
        steps = (starts.inv() * Rotation(rotations.as_quat()[1:])).as_rotvec()
        return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

    def __call__(self, times) -> Rotation:
        """Interpolated rotation(s) at `times` (scalar or 1-D)."""
        t = jnp.asarray(times, dtype=self.times.dtype)
        if t.ndim > 1:
            raise ValueError("`times` must be at most 1-dimensional.")
        single = t.ndim == 0
        t = jnp.atleast_1d(t)
        ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
        alpha = (t - self.times[ind]) / self.timedelta[ind]
        out = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
        return out[0] if single else out
