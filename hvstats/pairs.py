"""Two-rater coefficients computed from a weighted joint-value table.

Every two-rater coefficient (Pearson, Spearman, Kendall tau-b, Cohen's kappa, percent
agreement) is a function of the joint distribution of the distinct ``(x, y)`` value pairs
and their counts.  :class:`PairTable` stores the distinct pairs once; coefficients are then
evaluated for a stack of count vectors ``T`` of shape ``(B, G)`` at once, which is what
makes the item bootstrap cheap (a resample only changes the counts).

Formulas:
- Pearson r: product-moment correlation (Pearson 1896), p-value from the t distribution
  with n-2 degrees of freedom (as scipy.stats.pearsonr).
- Spearman rho: Pearson r of mid-ranks (average ranks for ties), p-value from the t
  approximation (as scipy.stats.spearmanr).
- Kendall tau-b: (P - Q) / sqrt((n0 - n1)(n0 - n2)) (Kendall 1945; Agresti 2010, 2.4.5),
  p-value from the tie-corrected normal approximation (as scipy.stats.kendalltau,
  method="asymptotic"; exact method for small tie-free samples via scipy).
- Cohen's kappa (Cohen 1960; weighted: Cohen 1968) with the weight convention of
  sklearn.metrics.cohen_kappa_score (|i-j| or (i-j)^2 on label indices).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import scipy.sparse as sp
from scipy import special
from scipy import stats as sps

PAIR_METRICS = (
    "pearson",
    "spearman",
    "kendall",
    "cohen_kappa",
    "cohen_kappa_linear",
    "cohen_kappa_quadratic",
    "percent_agreement",
)

#: above this many distinct (x, y) cells Kendall's tau-b is not bootstrapped (O(B*Kx*Ky)).
KENDALL_MAX_CELLS = 40_000
#: up to this many distinct pairs Kendall's P - Q is the quadratic form ``T A T`` with the
#: G x G concordance-sign matrix ``A`` (one matrix product); above, suffix sums on the grid.
KENDALL_QF_MAX_G = 1500


class PairTable:
    """Distinct pairwise-complete ``(x, y)`` pairs of two rating vectors and their counts."""

    def __init__(self, x: np.ndarray, y: np.ndarray, weights: np.ndarray | None = None):
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        if x.shape != y.shape:
            raise ValueError("x and y must have the same length")
        w = np.ones(len(x)) if weights is None else np.asarray(weights, dtype=float)
        m = ~np.isnan(x) & ~np.isnan(y) & (w > 0)
        self.n_rows = len(x)
        xs, ys = x[m], y[m]
        self.xu, gx = np.unique(xs, return_inverse=True)
        self.yu, gy = np.unique(ys, return_inverse=True)
        self.kx, self.ky = len(self.xu), len(self.yu)
        joint = gx.astype(np.int64) * max(self.ky, 1) + gy
        cells = self.kx * max(self.ky, 1)
        if cells <= 4 * len(joint) + 1024:  # few cells: present cells by counting, no sort
            present = np.bincount(joint, minlength=cells) > 0
            ju = np.flatnonzero(present)
            remap = np.cumsum(present) - 1
            gj = remap[joint]
        else:
            ju, gj = np.unique(joint, return_inverse=True)
        self.ix = (ju // max(self.ky, 1)).astype(np.int64)
        self.iy = (ju % max(self.ky, 1)).astype(np.int64)
        self.xg = self.xu[self.ix]
        self.yg = self.yu[self.iy]
        self.G = len(ju)
        self.row_group = np.full(len(x), -1, dtype=np.int64)
        self.row_group[m] = gj
        self.counts = np.bincount(gj, weights=w[m], minlength=self.G).astype(float)
        self.n = float(self.counts.sum())
        # centring constants (numerical stability of moment sums)
        self._cx = float(np.dot(self.counts, self.xg) / self.n) if self.n else 0.0
        self._cy = float(np.dot(self.counts, self.yg) / self.n) if self.n else 0.0

    # -- features for the bootstrap: rows -> group one-hot ------------------------------
    def onehot(self) -> sp.csr_matrix:
        """(n_rows x G) sparse indicator of each row's group (zero row where missing)."""
        m = self.row_group >= 0
        indptr = np.concatenate([[0], np.cumsum(m)])
        return sp.csr_matrix((np.ones(int(indptr[-1])), self.row_group[m], indptr), shape=(self.n_rows, max(self.G, 1)))

    # -- helpers ---------------------------------------------------------------------
    def _dense(self, name: str, build) -> np.ndarray:
        """Per-table constant (G x k) matrices, built on first use."""
        cache = self.__dict__.setdefault("_cache", {})
        if name not in cache:
            cache[name] = build()
        return cache[name]

    def _onehot_x(self) -> np.ndarray:
        return self._dense("Ax", lambda: np.eye(max(self.kx, 1))[self.ix])

    def _onehot_y(self) -> np.ndarray:
        return self._dense("Ay", lambda: np.eye(max(self.ky, 1))[self.iy])

    def _pearson(self, T: np.ndarray, n: np.ndarray, ok: np.ndarray) -> np.ndarray:
        """Pearson r from the weighted moments ``T @ [a, b, a^2, b^2, ab]`` (a, b centred
        on the full-sample means, so the one-pass sums do not cancel)."""

        def build():
            a = self.xg - self._cx
            b = self.yg - self._cy
            return np.column_stack([a, b, a * a, b * b, a * b])

        S = T @ self._dense("moments", build)
        with np.errstate(invalid="ignore", divide="ignore"):
            sa, sb = S[:, 0], S[:, 1]
            va = S[:, 2] - sa * sa / n
            vb = S[:, 3] - sb * sb / n
            r = (S[:, 4] - sa * sb / n) / np.sqrt(va * vb)
        r = np.clip(r, -1.0, 1.0)
        r[~ok] = np.nan
        return r

    def _spearman(self, T, Tx, Ty, n, ok) -> np.ndarray:
        """Pearson r of the mid-ranks: the mean mid-rank is (n + 1) / 2, so the variances
        are sums over the marginals and only the cross term needs the joint counts."""
        m = ((n + 1.0) / 2.0)[:, None]
        rx = self._midranks(Tx) - m
        ry = self._midranks(Ty) - m
        with np.errstate(invalid="ignore", divide="ignore"):
            va = (Tx * rx * rx).sum(1)
            vb = (Ty * ry * ry).sum(1)
            cov = (T * rx[:, self.ix] * ry[:, self.iy]).sum(1)
            r = cov / np.sqrt(va * vb)
        r = np.clip(r, -1.0, 1.0)
        r[~ok] = np.nan
        return r

    @staticmethod
    def _midranks(Tm: np.ndarray) -> np.ndarray:
        """Mid-ranks (1-based average ranks) of each distinct value given counts Tm (B,K)."""
        c = np.cumsum(Tm, axis=1)
        return c - Tm + (Tm + 1.0) / 2.0

    # -- coefficients -----------------------------------------------------------------
    def compute(
        self, T: np.ndarray, metrics: Iterable[str], labels: np.ndarray | None = None, chunk: int = 64
    ) -> dict[str, np.ndarray]:
        """Evaluate ``metrics`` for each row of the count matrix ``T`` (B, G).

        Returns ``{metric: (B,) array}`` with NaN where the coefficient is undefined for
        that count vector (constant rater, fewer than 3 items, ...).
        """
        T = np.atleast_2d(np.asarray(T, dtype=float))
        metrics = list(metrics)
        out: dict[str, np.ndarray] = {}
        B = T.shape[0]
        n = T.sum(1)
        if self.G == 0:
            return {m: np.full(B, np.nan) for m in metrics}
        Tx = T @ self._onehot_x()
        Ty = T @ self._onehot_y()
        ok = ((Tx > 0).sum(1) >= 2) & ((Ty > 0).sum(1) >= 2) & (n >= 3)
        if "pearson" in metrics:
            out["pearson"] = self._pearson(T, n, ok)
        if "spearman" in metrics:
            out["spearman"] = self._spearman(T, Tx, Ty, n, ok)
        if "kendall" in metrics:
            if self.kx * self.ky > KENDALL_MAX_CELLS and B > 1:
                out["kendall"] = np.full(B, np.nan)
            else:
                res = self._kendall(T, Tx, Ty, chunk)[0]
                res[~ok] = np.nan
                out["kendall"] = res
        kappa_names = [m for m in metrics if m.startswith("cohen_kappa")]
        if kappa_names:
            out.update(self._kappa(T, kappa_names, labels))
        if "percent_agreement" in metrics:
            eq = self._dense("eq", lambda: (self.xg == self.yg).astype(float))
            with np.errstate(invalid="ignore", divide="ignore"):
                pa = (T @ eq) / n
            pa[n < 1] = np.nan
            out["percent_agreement"] = pa
        return out

    def _grid(self, T: np.ndarray) -> np.ndarray:
        M = np.zeros((T.shape[0], self.kx, self.ky))
        M[:, self.ix, self.iy] = T
        return M

    def _concordance(self) -> np.ndarray:
        """G x G matrix sign(x_g - x_h) * sign(y_g - y_h)."""

        def build():
            sx = np.sign(self.xg[:, None] - self.xg[None, :])
            sy = np.sign(self.yg[:, None] - self.yg[None, :])
            return sx * sy

        return self._dense("concordance", build)

    def _kendall(self, T, Tx, Ty, chunk: int = 64):
        """tau-b and P - Q (concordant minus discordant pairs) for count vectors T (B, G)."""
        if self.G <= KENDALL_QF_MAX_G:
            # sum_{g,h} T_g T_h sign(dx) sign(dy) counts every unordered pair twice
            pq = 0.5 * ((T @ self._concordance()) * T).sum(1)
        else:
            pq = np.empty(T.shape[0])
            step = max(chunk, 4_000_000 // max(self.kx * self.ky, 1))
            for s in range(0, T.shape[0], step):
                pq[s : s + step] = self._grid_pq(T[s : s + step])
        n = T.sum(1)
        n0 = n * (n - 1) / 2
        n1 = (Tx * (Tx - 1) / 2).sum(1)
        n2 = (Ty * (Ty - 1) / 2).sum(1)
        with np.errstate(invalid="ignore", divide="ignore"):
            tau = pq / np.sqrt((n0 - n1) * (n0 - n2))
        return np.clip(tau, -1, 1), pq

    def _grid_pq(self, T):
        """P - Q from suffix sums on the kx x ky grid of a chunk of count vectors."""
        M = self._grid(T)
        # suffix sums: S[a,b] = sum_{a'>a, b'>b} M ; D[a,b] = sum_{a'>a, b'<b} M
        cs = np.cumsum(np.cumsum(M[:, ::-1, ::-1], axis=1), axis=2)[:, ::-1, ::-1]
        S = np.zeros_like(M)
        S[:, :-1, :-1] = cs[:, 1:, 1:]
        cd = np.cumsum(np.cumsum(M[:, ::-1, :], axis=1), axis=2)[:, ::-1, :]
        D = np.zeros_like(M)
        D[:, :-1, 1:] = cd[:, 1:, :-1]
        return (M * S).sum((1, 2)) - (M * D).sum((1, 2))

    def kendall_pvalue(self) -> float | None:
        """Two-sided p-value of tau-b (scipy.stats.kendalltau conventions)."""
        n = self.n
        if n < 3:
            return None
        cnt = self.counts
        if n <= 50 or float(n).is_integer() is False:
            x = np.repeat(self.xg, cnt.astype(int))
            y = np.repeat(self.yg, cnt.astype(int))
            return _none_if_nan(sps.kendalltau(x, y).pvalue)
        T = cnt[None, :]
        Tx = (T @ self._onehot_x())[0]
        Ty = (T @ self._onehot_y())[0]
        _, pq = self._kendall(T, Tx[None], Ty[None])
        con_minus_dis = float(pq[0])
        t, u = Tx, Ty
        v0 = n * (n - 1) * (2 * n + 5)
        vt = (t * (t - 1) * (2 * t + 5)).sum()
        vu = (u * (u - 1) * (2 * u + 5)).sum()
        v1 = (t * (t - 1)).sum() * (u * (u - 1)).sum() / (2 * n * (n - 1))
        v2 = (t * (t - 1) * (t - 2)).sum() * (u * (u - 1) * (u - 2)).sum() / (9 * n * (n - 1) * (n - 2))
        var = (v0 - vt - vu) / 18.0 + v1 + v2
        if var <= 0:
            return None
        z = con_minus_dis / np.sqrt(var)
        return float(2 * special.ndtr(-abs(z)))  # = scipy.stats.norm.sf(|z|), without its overhead

    def _kappa(self, T, names, labels):
        if labels is None:
            labels = np.union1d(self.xu, self.yu)
        labels = np.asarray(labels, dtype=float)
        L = len(labels)
        key = ("kappa", labels.tobytes())

        def build():
            li_x = np.searchsorted(labels, self.xg)
            li_y = np.searchsorted(labels, self.yg)
            g = np.arange(self.G)
            Lx = np.zeros((self.G, L))
            Lx[g, li_x] = 1.0
            Ly = np.zeros((self.G, L))
            Ly[g, li_y] = 1.0
            return li_x, li_y, Lx, Ly

        li_x, li_y, Lx, Ly = self._dense(key, build)
        n = T.sum(1)
        r = T @ Lx  # row marginals over the labels
        c = T @ Ly
        idx = np.arange(L)
        out = {}
        for name in names:
            if name == "cohen_kappa":
                W = 1.0 - np.eye(L)
            elif name == "cohen_kappa_linear":
                W = np.abs(idx[:, None] - idx[None, :]).astype(float)
            elif name == "cohen_kappa_quadratic":
                W = ((idx[:, None] - idx[None, :]) ** 2).astype(float)
            else:
                raise ValueError(f"unknown kappa variant {name}")
            with np.errstate(invalid="ignore", divide="ignore"):
                obs = T @ W[li_x, li_y]  # (li_x, li_y) pairs are distinct by construction
                exp = ((r @ W) * c).sum(1) / n
                k = 1.0 - obs / exp
            k[(exp <= 1e-12 * np.maximum(n, 1)) | (n < 2)] = np.nan
            out[name] = k
        return out


def _none_if_nan(x) -> float | None:
    x = float(x)
    return None if not np.isfinite(x) else x


def corr_pvalue(r: float, n: float) -> float | None:
    """Two-sided p-value of a Pearson/Spearman r from the t distribution with n-2 df."""
    if r is None or not np.isfinite(r) or n < 3:
        return None
    if abs(r) >= 1.0:
        return 0.0
    dof = n - 2
    t = r * np.sqrt(dof / ((1.0 - r) * (1.0 + r)))
    return float(2 * special.stdtr(dof, -abs(t)))  # = scipy.stats.t.sf(|t|, dof)
