"""The entity-pair grid: sizes, cell order, scatter/gather, and the grouped bilinear input."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.train

torch = pytest.importorskip("torch")

from models.grid import full_pairs, gather_pairs, grid_size, grouped_bilinear, pair_rows, scatter_cells  # noqa: E402


def test_full_pairs_are_every_cell_row_by_row() -> None:
    assert full_pairs(2) == [(0, 0), (0, 1), (1, 0), (1, 1)]
    assert len(full_pairs(45)) == 45 * 45


def test_grid_size_follows_the_batch_not_a_cap() -> None:
    assert grid_size([3, 5]) == 5
    assert grid_size([3, 5], multiple=4) == 8
    assert grid_size([45], multiple=4) == 48  # past the official 42
    assert grid_size([], multiple=4) == 4 and grid_size([0]) == 1


def test_scatter_then_gather_returns_each_pairs_cell() -> None:
    counts = [2, 3]
    values = torch.arange(sum(n * n for n in counts) * 2, dtype=torch.float).view(-1, 2)
    hts = [[(0, 1), (1, 0)], [(2, 0), (0, 2), (1, 2)]]
    rows = pair_rows(hts, counts)
    assert rows.tolist() == [1, 2, 4 + 6, 4 + 2, 4 + 5]  # document 2 starts after the 4 cells of document 1
    grid, mask = scatter_cells(values, counts, size=4)
    assert grid.shape == (2, 4, 4, 2) and mask.shape == (2, 4, 4)
    assert mask[0].sum() == 4 and mask[1].sum() == 9 and mask[0, :2, :2].all() and mask[1, :3, :3].all()
    assert (grid[mask == 0] == 0).all()  # padding holds zeros
    assert torch.equal(grid[1, 2, 0], values[4 + 6])
    assert torch.equal(gather_pairs(grid, hts), values[rows])


def test_scatter_keeps_gradients() -> None:
    values = torch.ones(4, 3, requires_grad=True)
    grid, _ = scatter_cells(values, [2], size=3)
    gather_pairs(grid, [[(0, 1)]]).sum().backward()
    assert values.grad[:, 0].tolist() == [0.0, 1.0, 0.0, 0.0]


def test_grouped_bilinear_is_the_groupwise_outer_product() -> None:
    zh = torch.tensor([[1.0, 2.0, 3.0, 4.0]])
    zt = torch.tensor([[5.0, 6.0, 7.0, 8.0]])
    out = grouped_bilinear(zh, zt, block_size=2)
    # group 0: [1, 2] x [5, 6]; group 1: [3, 4] x [7, 8]
    assert out.tolist() == [[5.0, 6.0, 10.0, 12.0, 21.0, 24.0, 28.0, 32.0]]
