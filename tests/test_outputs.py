"""grpo_verify.outputs: atomic writes and the figure helper the experiment scripts share."""

from __future__ import annotations

import pytest

from grpo_verify.outputs import save_figure, write_atomically


def test_write_atomically_leaves_no_half_file(tmp_path):
    path = tmp_path / "out.txt"
    write_atomically(path, "first")

    def broken(tmp):
        tmp.write_text("half")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        write_atomically(path, broken)
    assert path.read_text() == "first" and sorted(p.name for p in tmp_path.iterdir()) == ["out.txt"]


def test_save_figure_writes_png_and_a_dateless_pdf_that_reruns_identically(tmp_path):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [1, 0])
    first = save_figure(fig, tmp_path / "a" / "plot", bbox_inches="tight")
    pdf = first[1].read_bytes()
    again = save_figure(fig, tmp_path / "b" / "plot", bbox_inches="tight")
    plt.close(fig)
    assert [p.name for p in first] == ["plot.png", "plot.pdf"] == [p.name for p in again]
    assert first[0].read_bytes().startswith(b"\x89PNG") and pdf.startswith(b"%PDF")
    assert b"/CreationDate" not in pdf and again[1].read_bytes() == pdf


def test_csv_text_writes_what_csv_dictwriter_writes():
    from grpo_verify.outputs import csv_text

    rows = [{"a": 1, "b": 0.1 + 0.2}, {"a": 2, "b": "x"}]
    assert csv_text(rows) == "a,b\r\n1,0.30000000000000004\r\n2,x\r\n"
    assert csv_text(rows, ["b", "a"], line_end="\n", float_format="{:.12g}") == "b,a\n0.3,1\nx,2\n"
