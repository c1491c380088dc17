"""PageRank and heat diffusion on a sparse graph

A 400-node small-world graph (a ring of neighbours plus random shortcuts) is stored as a sparse BCOO
adjacency matrix: PageRank runs as a jitted power iteration of sparse matrix-vector products, and heat
spreading from one node is solved implicitly with conjugate gradients on the sparse graph Laplacian.
"""

import pyjax as jax
import pyjax.numpy as jnp
from pyjax import lax, show
from pyjax.experimental import sparse
from pyjax.scipy.sparse.linalg import cg

N, NEAR, SHORTCUTS, DAMPING = 400, 3, 120, 0.85

# edges: each node to its NEAR neighbours on each side, plus random shortcuts (both directions)
ring = jnp.arange(N)
src = jnp.concatenate([ring] * NEAR)
dst = jnp.concatenate([(ring + k) % N for k in range(1, NEAR + 1)])
ka, kb = jax.random.split(jax.random.key(0))
src = jnp.concatenate([src, jax.random.randint(ka, (SHORTCUTS,), 0, N)])
dst = jnp.concatenate([dst, jax.random.randint(kb, (SHORTCUTS,), 0, N)])
edges = jnp.stack([jnp.concatenate([src, dst]), jnp.concatenate([dst, src])], axis=1)
adjacency = sparse.BCOO((jnp.ones(len(edges)), edges), shape=(N, N)).sum_duplicates()
adjacency = sparse.BCOO((jnp.ones(adjacency.nse), adjacency.indices), shape=(N, N))  # 0/1 entries
degree = adjacency.sum(1).todense()
print(f"{N} nodes, {adjacency.nse} stored entries ({adjacency.nse / N**2:.2%} of the dense matrix)")
print(f"degrees: min {int(degree.min())}, max {int(degree.max())}, mean {float(degree.mean()):.3f}")
show.heatmap(adjacency.todense()[:80, :80], title="adjacency (first 80 nodes)")

# PageRank: r <- (1 - d) / N + d * (A / degree)^T r, with the row-normalised matrix kept sparse
transition = adjacency * (1.0 / degree)[:, None]


@jax.jit
def pagerank_steps(r):
    return lax.fori_loop(0, 10, lambda i, r: (1 - DAMPING) / N + DAMPING * (transition.T @ r), r)


rank = jnp.full(N, 1.0 / N)
changes = []
for _ in range(6):
    new = pagerank_steps(rank)
    changes.append(float(jnp.abs(new - rank).sum()))
    rank = new
    show.line(changes, title="PageRank change per 10 iterations", label="L1 change")
    show.line(rank, title="PageRank by node", label="rank")
top = jnp.argsort(-rank)[:5]
print(f"highest rank: node {int(top[0])}; the five highest ranks:", [round(float(rank[i]), 5) for i in top])
print(f"rank sums to {float(rank.sum()):.4f}; corr(rank, degree) = {float(jnp.corrcoef(rank, degree)[0, 1]):.3f}")


# implicit heat diffusion: (I + t L) u = e_0 with the graph Laplacian L = D - A, solved by CG
def laplacian_step(u, t):
    return u + t * (degree * u - adjacency @ u)


source = jnp.zeros(N).at[0].set(1.0)
for t in (0.5, 2.0, 8.0):
    heat, _ = cg(lambda u: laplacian_step(u, t), source, tol=1e-6)
    show.line(heat, title="heat after an implicit step from node 0", label=f"t = {t}")
    residual = float(jnp.linalg.norm(laplacian_step(heat, t) - source))
    print(
        f"t = {t}: heat at node 0 {float(heat[0]):.4f}, at node {N // 2} {float(heat[N // 2]):.2e}, "
        f"total {float(heat.sum()):.4f}, residual {residual:.1e}"
    )
