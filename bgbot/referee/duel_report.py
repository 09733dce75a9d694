"""What a duel reports: a fastchess-style text block, the JSON summary, an HTML page with plots.

The plots need matplotlib (the ``report`` extra); it is imported only when a report is written,
with the non-interactive Agg backend, so `bgbot duel` runs without it.
"""

from __future__ import annotations

import html
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from ..core.errors import BgbotError
from .duel import DuelConfig, PairResult
from .stats import RunningRatio

if TYPE_CHECKING:
    from matplotlib.axes import Axes


class ReportUnavailable(BgbotError):
    """--report was asked for but matplotlib is not installed."""


def _signed(value: float, digits: int = 3) -> str:
    return f"{value:+.{digits}f}"


def _interval_text(ci: Sequence[float | None]) -> str:
    low, high = ci[0], ci[1]
    if low is None or high is None:
        return "no interval yet (fewer than 2 pairs)"
    return f"+/- {(high - low) / 2:.3f}, 95% CI [{_signed(low)}, {_signed(high)}]"


def text_block(summary: dict[str, Any], reason: str | None = None) -> str:
    """The end-of-duel block, fastchess style, from `DuelStats.summary`."""
    a, b = summary["agents"]
    rule = "-" * 60
    lines = [
        rule,
        f"Results of {a} vs {b} ({summary['mode']}, seed {summary['seed']}, mirrored pairs):",
        f"Pairs: {summary['pairs']}, Games: {summary['games']}, "
        f"Points: {summary['points']:+d} ({summary['points_won']} won, "
        f"{summary['points_lost']} lost)",
        f"ppg: {_signed(summary['ppg'])} {_interval_text(summary['ppg_ci'])}",
    ]
    if "match_win_rate" in summary:
        ci = summary["match_win_ci"]
        shown = [None if c is None else 100 * c for c in ci]
        interval = ("" if shown[0] is None
                    else f", 95% CI [{shown[0]:.1f}%, {shown[1]:.1f}%]")
        lines.append(f"Matches: {summary['match_wins']} - {summary['matches'] - summary['match_wins']}"
                     f" [{100 * summary['match_win_rate']:.1f}%{interval}]")
    lines.append(f"Wins/Losses: {summary['wins']} - {summary['losses']} "
                 f"[{100 * summary['win_rate']:.1f}%]")
    won, lost = summary["won"], summary["lost"]
    lines.append(f"Won:  singles {won['single']}, gammons {won['gammon']}, "
                 f"backgammons {won['backgammon']}")
    lines.append(f"Lost: singles {lost['single']}, gammons {lost['gammon']}, "
                 f"backgammons {lost['backgammon']}")
    if "luck_adjusted_ppg" in summary:
        lines.append(f"Luck-adjusted ppg ({summary['luck_judge']}): "
                     f"{_signed(summary['luck_adjusted_ppg'])} "
                     f"{_interval_text(summary['luck_adjusted_ci'])}")
    if "sprt" in summary:
        s = summary["sprt"]
        low, high = s.get("bounds", (math.nan, math.nan))
        verdict = summary.get("sprt_verdict")
        lines.append(f"SPRT: llr {s.get('llr', math.nan):.3f}, lbound {low:.3f}, ubound "
                     f"{high:.3f}" + (f" - {verdict} was accepted" if verdict else ""))
    if "games_per_second_per_core" in summary:
        speed = f"Speed: {summary['games_per_second_per_core']:.1f} games/s per core"
        if "games_per_cpu_second" in summary:
            speed += f" ({summary['games_per_cpu_second']:.1f} per CPU second)"
        if "games_per_second" in summary:
            speed += f", {summary['games_per_second']:.1f} games/s in all"
        lines.append(speed)
    if reason:
        lines.append(f"Stopped: {reason}")
    lines.append(rule)
    return "\n".join(lines)


# ---------------------------------------------------------------------- running history


@dataclass(frozen=True)
class HistoryPoint:
    pairs: int
    value: float
    low: float
    high: float


def history(values: Sequence[tuple[float, float]]) -> list[HistoryPoint]:
    """The running estimate and 95 % interval after each (unit, weight) observation."""
    running = RunningRatio()
    points: list[HistoryPoint] = []
    for unit, weight in values:
        running.add(unit, weight)
        low, high = running.interval()
        points.append(HistoryPoint(running.n, running.ratio, low, high))
    return points


# ---------------------------------------------------------------------- HTML + PNG


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise ReportUnavailable(
            "--report draws its plots with matplotlib, which is not installed; "
            "install it into bgbot's environment with: pip install matplotlib (from a source "
            "checkout, pip install '.[report]' does the same)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _band(ax: Axes, points: Sequence[HistoryPoint], title: str, ylabel: str, colour: str) -> None:
    xs = [p.pairs for p in points if math.isfinite(p.low)]
    ax.plot([p.pairs for p in points], [p.value for p in points], color=colour, lw=1.5,
            label="estimate")
    if xs:
        ax.fill_between(xs, [p.low for p in points if math.isfinite(p.low)],
                        [p.high for p in points if math.isfinite(p.low)],
                        color=colour, alpha=0.2, label="95% interval")
    ax.axhline(0.0 if "ppg" in ylabel else 0.5, color="grey", lw=0.8, ls="--")
    ax.set_title(title)
    ax.set_xlabel("pairs")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    ax.legend(loc="upper right", fontsize="small")
    if xs:
        # Keep the first, very wide intervals from flattening the rest of the curve.
        tail = [p for p in points if math.isfinite(p.low)][len(xs) // 10:]
        low = min(p.low for p in tail)
        high = max(p.high for p in tail)
        pad = 0.1 * (high - low or 1.0)
        ax.set_ylim(low - pad, high + pad)


def write_report(directory: Path, config: DuelConfig, pairs: Sequence[PairResult],
                 summary: dict[str, Any], reason: str | None = None) -> Path:
    """Write ``index.html`` with ``ppg.png`` and ``outcomes.png`` into ``directory``."""
    plt = _pyplot()
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    a, b = config.agent_a, config.agent_b

    raw = history([(float(p.points), float(p.game_count)) for p in pairs])
    panels: list[tuple[list[HistoryPoint], str, str, str]] = [
        (raw, f"ppg of {a}", "ppg", "tab:blue")]
    if config.luck_judge is not None and pairs and all(p.has_luck for p in pairs):
        adjusted = history([(p.adjusted_points(), float(p.game_count)) for p in pairs])
        panels.append((adjusted, f"luck-adjusted ppg ({config.luck_judge})", "ppg",
                       "tab:green"))
    if config.length:
        wins = history([(float(p.match_wins(config.length)), 2.0) for p in pairs])
        panels.append((wins, f"match wins of {a}", "match-win rate", "tab:purple"))
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 4.2), squeeze=False,
                             sharey=len(panels) == 2 and not config.length)
    for ax, (points, title, ylabel, colour) in zip(axes[0], panels):
        _band(ax, points, title, ylabel, colour)
    fig.suptitle(f"{a} vs {b}: {config.mode}, seed {config.seed}")
    fig.tight_layout()
    fig.savefig(directory / "ppg.png", dpi=100)
    plt.close(fig)

    fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4.2))
    game_points: dict[int, int] = {}
    pair_points: dict[int, int] = {}
    for pair in pairs:
        for game in pair.games:
            game_points[game.delta] = game_points.get(game.delta, 0) + 1
        pair_points[pair.points] = pair_points.get(pair.points, 0) + 1
    for ax, counts, what in ((left, game_points, "game"), (right, pair_points, "pair")):
        keys = sorted(counts)
        colours = ["tab:green" if k > 0 else "tab:red" if k < 0 else "tab:grey" for k in keys]
        ax.bar([str(k) for k in keys], [counts[k] for k in keys], color=colours)
        ax.set_title(f"points of {a} per {what}")
        ax.set_xlabel(f"points per {what} (+ = {a} won)")
        ax.set_ylabel(f"{what}s")
        ax.grid(axis="y", alpha=0.3)
    fig.suptitle("outcomes")
    fig.tight_layout()
    fig.savefig(directory / "outcomes.png", dpi=100)
    plt.close(fig)

    page = directory / "index.html"
    page.write_text(_html(summary, text_block(summary, reason)), encoding="utf-8")
    return page


def _html(summary: dict[str, Any], text: str) -> str:
    a, b = summary["agents"]
    title = html.escape(f"bgbot duel: {a} vs {b}")
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>body{{font-family:sans-serif;margin:2em;max-width:1300px}}
pre{{background:#f4f4f4;padding:1em}}img{{max-width:100%}}</style></head>
<body><h1>{title}</h1>
<pre>{html.escape(text)}</pre>
<h2>ppg and its 95% interval over the pairs</h2><img src="ppg.png" alt="ppg over pairs">
<h2>Outcomes</h2><img src="outcomes.png" alt="outcome histogram">
<h2>Summary (JSON)</h2><pre>{html.escape(json.dumps(summary, indent=2))}</pre>
</body></html>
"""
