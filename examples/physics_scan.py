"""Physics with lax.scan: orbits, and aiming by gradient

A star and three planets move under gravity, integrated by 2000 leapfrog steps inside one `lax.scan`
(energy is conserved to a few parts in a million). Then `grad` flows back through a simulated throw with
air drag so Newton's method finds the launch speed that lands the ball 30 m away.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, show

# --- orbits: leapfrog (kick-drift-kick) for N bodies, G = 1 -----------------------------------
mass = jnp.array([1000.0, 1.0, 2.0, 0.5])
radius = jnp.array([0.0, 10.0, 16.0, 25.0])
speed = jnp.sqrt(1000.0 / jnp.maximum(radius, 1.0)) * (radius > 0)  # circular-orbit speeds
pos = jnp.stack([radius, jnp.zeros(4)], axis=1)
vel = jnp.stack([jnp.zeros(4), speed * jnp.array([1.0, 1.0, 0.9, 1.1])], axis=1)
vel = vel - (mass[:, None] * vel).sum(0) / mass.sum()  # no drift of the center of mass


def acceleration(p):
    d = p[None, :, :] - p[:, None, :]  # d[i, j] = p[j] - p[i]
    r2 = (d * d).sum(-1) + jnp.eye(4)  # the 1 on the diagonal avoids 0 / 0 (d is 0 there)
    return (mass[None, :, None] * d / r2[..., None] ** 1.5).sum(1)


def energy(p, v):
    d = p[None, :, :] - p[:, None, :]
    r = jnp.sqrt((d * d).sum(-1) + jnp.eye(4))
    potential = -0.5 * jnp.sum(mass[:, None] * mass[None, :] / r * (1.0 - jnp.eye(4)))
    return 0.5 * jnp.sum(mass * (v * v).sum(-1)) + potential


@jax.jit
def simulate(p, v, dt=0.005):
    def leapfrog(state, _):
        p, v = state
        v = v + 0.5 * dt * acceleration(p)
        p = p + dt * v
        v = v + 0.5 * dt * acceleration(p)
        return (p, v), p

    (p, v), path = lax.scan(leapfrog, (p, v), None, length=2000)
    return p, v, path


e0 = energy(pos, vel)
p1, v1, path = simulate(pos, vel)
e1 = energy(p1, v1)
print(f"energy {float(e0):.3f} -> {float(e1):.3f}, relative drift {float(jnp.abs(e1 - e0) / jnp.abs(e0)):.1e}")
print(
    "planet distances from the star after 2000 steps:",
    [round(float(r), 3) for r in jnp.linalg.norm(p1[1:] - p1[0], axis=1)],
)
for body in range(1, 4):
    show.line(path[::10, body, 1], x=path[::10, body, 0], title="orbits", label=f"planet {body}")


# --- aiming: the launch speed that throws a ball 30 m, found by grad through the simulation -------
def throw_distance(speed, angle=0.6, drag=0.05, dt=0.01):
    def step(state, _):
        x, y, vx, vy, landed_at = state
        v = jnp.sqrt(vx * vx + vy * vy)
        nx, ny = x + dt * vx, y + dt * vy
        lands = (y >= 0.0) & (ny < 0.0)  # crossing the ground in this step: interpolate where
        fraction = y / jnp.where(lands, y - ny, 1.0)
        landed_at = jnp.where(lands, x + fraction * (nx - x), landed_at)
        return (nx, ny, vx - dt * drag * v * vx, vy - dt * (9.81 + drag * v * vy), landed_at), None

    start = (0.0, 0.0, speed * jnp.cos(angle), speed * jnp.sin(angle), 0.0)
    return lax.scan(step, start, None, length=800)[0][4]


distance_and_slope = jax.jit(jax.value_and_grad(throw_distance))
speed, distances = jnp.array(10.0), []
for _ in range(5):  # Newton's method on distance(speed) = 30
    distance, slope = distance_and_slope(speed)
    distances.append(float(distance))
    show.line(distances, title="throw distance while aiming (target 30 m)", label="distance")
    print(f"speed {float(speed):7.3f} m/s: {distances[-1]:7.3f} m, d distance / d speed {float(slope):.3f} s")
    speed = speed - (distance - 30.0) / slope
