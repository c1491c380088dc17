"""Conway's Game of Life

A 64x64 torus seeded with random cells and a glider; one jitted step counts each cell's eight
neighbours with `jnp.roll` and applies the rules, and every generation is drawn as it is computed.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import show

N = 64
board = jax.random.bernoulli(jax.random.key(7), 0.3, (N, N)) & (jnp.arange(N) < N // 2)[None, :]
glider = jnp.array([[0, 1, 0], [0, 0, 1], [1, 1, 1]], dtype=bool)
board = board.at[5:8, 45:48].set(glider)


@jax.jit
def life_step(board):
    cells = board.astype(jnp.int32)
    neighbours = sum(
        jnp.roll(cells, (di, dj), axis=(0, 1)) for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)
    )
    return (neighbours == 3) | (board & (neighbours == 2))


population = [int(board.sum())]
print(f"generation   0: {population[0]} live cells")
for gen in range(1, 121):
    board = life_step(board)
    population.append(int(board.sum()))
    show.image(board.astype(jnp.float32), title="Game of Life")
    show.line(population, title="population", label="live cells")
    if gen % 20 == 0:
        print(f"generation {gen:3d}: {population[-1]} live cells")
rows = jnp.any(board, axis=1)
print(
    f"after 120 generations: {int(rows.sum())} rows hold live cells, checksum {int((board * jnp.arange(N * N).reshape(N, N)).sum())}"
)
