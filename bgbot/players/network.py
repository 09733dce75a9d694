"""The heuristic player's evaluation network: our features, weighed by a small network.

The player's knowledge is the hand-made features of `features.py`; this module is how it weighs
them (heuristic-player.md §2, issue 14): a feed-forward network whose inputs are those features
(without the bias) followed by a plain encoding of the board, and whose outputs are the six
exclusive outcomes of the game for the player on roll:

* inputs (`inputs`, the definition; `bgbot.players._contact` computes the same in C): the
  ``FEATURE_NAMES`` features but "bias", then for the side on roll and then the other side,
  per point 1..24 four units (at least 1, 2, 3 chequers, and (n - 3) / 2 beyond 3), the bar / 2
  and the chequers borne off / 15 (Tesauro's encoding);
* hidden layers of ReLU units (widths in the weights file);
* six logits, a softmax over `OUTCOMES` (win single, gammon, backgammon; lose single, gammon,
  backgammon) in which an outcome that can no longer happen gets no probability
  (`outcome_mask`: a side that has borne a chequer off cannot be gammoned, one with no chequer
  on the bar or in the other's home board cannot be backgammoned, §2.7). The five chances
  gnubg uses (`Probabilities`) follow by summing (`chances`), so win >= gammon >= backgammon
  holds on every output by construction.

The weights come from our own self-play (``tools/train_network.py``: no gnubg output and no
third-party weights) and ship as a data file in the package (`WeightsFile`): a header naming
the format, the input layout (a hash of `INPUT_NAMES`) and the layer widths, the float32
parameters, and a SHA-256 of all of it. A file whose checksum does not match, whose format is
unknown or whose input layout is not this code's is refused (`WeightsError`), and the shipped
file must also match the checksum recorded here (`SHIPPED_SHA256`), so an old build cannot
silently use new weights, nor a new build old ones.

A network is for one class of positions, its `phase` (`PHASES`, named in the header): the
contact network, a race network (races outside the bear-off database), a crashed network
(`position_class.is_crashed`). The player's evaluator (`evaluator.HeuristicEvaluator`) takes
one per class; the agent spec names them (``heuristic:weights=FILE``, ``race=net``,
``race=FILE``, ``crashed=FILE``).

Evaluation: ``bgbot.players._contact.Mlp`` in C when the extension is built; otherwise
`PythonNetwork` with numpy (the pure-Python fallback: a network is matrix products, which
plain Python would do a hundred times slower).
"""

from __future__ import annotations

import hashlib
import json
import struct
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Sequence

from .base import Probabilities
from .features import FEATURE_NAMES, NET_FEATURES, feature_vector, net_features

if TYPE_CHECKING:
    import numpy as np

OUTCOMES: tuple[str, ...] = ("win", "win_gammon", "win_backgammon", "lose", "lose_gammon",
                             "lose_backgammon")
"""The six exclusive outcomes of a game for the player on roll (single, gammon, backgammon)."""

RAW_NAMES: tuple[str, ...] = (
    *(f"{unit}_{point}" for point in range(1, 25) for unit in ("ge1", "ge2", "ge3", "over3")),
    "bar",
    "off",
)
"""The plain board encoding of one side (Tesauro's four units per point, bar, off)."""

INPUT_NAMES: tuple[str, ...] = (
    *FEATURE_NAMES[:-1],
    *(f"me.raw.{name}" for name in RAW_NAMES),
    *(f"other.raw.{name}" for name in RAW_NAMES),
    *(f"net.{name}" for name in NET_FEATURES),
)
"""The network's inputs, in order ("me" = the player on roll)."""

N_INPUTS = len(INPUT_NAMES)
FORMAT = 1
"""Version of the weights file layout (`WeightsFile`)."""
MAGIC = b"BGBOTNET"

PHASES = ("contact", "race", "crashed")
"""What a network evaluates (the position class it is for, `position_class.PositionClass`):
contact positions, races outside the bear-off database, or crashed positions (contact where a
side's game has collapsed; without a crashed network the contact network takes them)."""
SHIPPED_FILE = Path(__file__).with_name("data") / "contact.bgw"
"""The contact network the player uses by default (``tools/train_network.py --ship``)."""
SHIPPED_SHA256 = "6672964afd63aefd9ae6f0ae67f27f6860e48b2e595e45a0303332827444c590"
"""The SHA-256 of `SHIPPED_FILE` this code was released with ("": none shipped yet)."""
SHIPPED_ZERO_PLY_FILE = Path(__file__).with_name("data") / "contact-0ply.bgw"
"""The contact network of the 0-ply player alone (the agent ``heuristic`` at ``plies=0``: its
play, its cube and the rollouts it plays), trained to order a roll's candidates as the 1-ply
look-ahead orders them, and on some as the 2-ply player does (``tools/rank_distill.py
ship``). The look-ahead of 1-ply and 2-ply
values its leaves with `SHIPPED_FILE`: the ranked network chooses better at 0-ply and values
worse for a look-ahead (training/README, the twentieth and twenty-first sittings)."""
SHIPPED_ZERO_PLY_SHA256 = "7bd04bca32cbcfd1de7aa9c5ca6f326f0924a883fdd41e5436d2d544cb76520d"
"""The SHA-256 of `SHIPPED_ZERO_PLY_FILE` ("": none shipped; the 0-ply player uses
`SHIPPED_FILE`)."""
SHIPPED_RACE_FILE = Path(__file__).with_name("data") / "race.bgw"
"""The race network the player uses by default (``tools/train_network.py --phase race``)."""
SHIPPED_RACE_SHA256 = ""
"""The SHA-256 of `SHIPPED_RACE_FILE` ("": none shipped yet; races use the race model)."""
SHIPPED_CRASHED_FILE = Path(__file__).with_name("data") / "crashed.bgw"
"""The crashed network the player uses by default."""
SHIPPED_CRASHED_SHA256 = ""
"""The SHA-256 of `SHIPPED_CRASHED_FILE` ("": none shipped yet; the contact network decides
crashed positions)."""


def input_layout(inputs: int = N_INPUTS) -> str:
    """A fingerprint of `INPUT_NAMES` (their order and meaning; the first ``inputs`` of them)
    recorded in weights files."""
    return hashlib.sha256("\n".join(INPUT_NAMES[:inputs]).encode()).hexdigest()[:16]


def raw_side(side: Sequence[int]) -> list[float]:
    """The plain encoding (`RAW_NAMES`) of one side's 25 counts."""
    out: list[float] = []
    for n in side[:24]:
        out += (1.0 if n >= 1 else 0.0, 1.0 if n >= 2 else 0.0, 1.0 if n >= 3 else 0.0,
                (n - 3) / 2.0 if n > 3 else 0.0)
    out.append(side[24] / 2.0)
    out.append((15 - sum(side)) / 15.0)
    return out


def inputs(mover: Sequence[int], opponent: Sequence[int]) -> list[float]:
    """The network's inputs (`INPUT_NAMES`) for ``mover`` on roll against ``opponent``."""
    me, other = tuple(mover), tuple(opponent)
    features = feature_vector(me, other)
    return [*features[:-1], *raw_side(me), *raw_side(other), *net_features(me, other)]


def outcome_mask(mover: Sequence[int], opponent: Sequence[int]) -> tuple[bool, ...]:
    """Which of the six `OUTCOMES` can still happen, ``mover`` on roll (§2.7)."""
    other_full = sum(opponent) == 15
    my_full = sum(mover) == 15
    return (True, other_full, other_full and any(opponent[18:25]),
            True, my_full, my_full and any(mover[18:25]))


def chances(outcomes: Sequence[float]) -> Probabilities:
    """The five chances (win, gammon, backgammon won; gammon, backgammon lost; gammons
    include backgammons) from the six outcome probabilities."""
    win_bg = outcomes[2]
    win_g = outcomes[1] + win_bg
    lose_bg = outcomes[5]
    return Probabilities(outcomes[0] + win_g, win_g, win_bg, outcomes[4] + lose_bg, lose_bg)


class WeightsError(ValueError):
    """A weights file that bgbot refuses: unreadable, corrupted, or made for other inputs."""


@dataclass(frozen=True)
class WeightsFile:
    """A trained network as stored: widths, float32 parameters and where they came from.

    File layout: ``MAGIC``, a little-endian uint32 header length, the header (UTF-8 JSON:
    format, input_layout, inputs, hidden, outcomes, activation, provenance), the parameters
    (float32, little-endian; layer by layer the input-major weight matrix then the biases),
    and the SHA-256 of everything before it (32 bytes).
    """

    hidden: tuple[int, ...]
    parameters: bytes = field(repr=False)
    """The float32 parameters, little-endian, as the file holds them (kept out of the repr:
    160 KB of bytes)."""
    provenance: dict[str, Any] = field(default_factory=dict)
    """How the weights were made (command, seeds, data sizes), for the record."""
    phase: str = "contact"
    """What the network evaluates (`PHASES`)."""

    def __post_init__(self) -> None:
        if self.phase not in PHASES:
            raise WeightsError(f"unknown network phase {self.phase!r}")
        if len(self.parameters) != 4 * parameter_count(self.hidden):
            raise WeightsError(f"{len(self.parameters)} bytes of parameters do not fit a network "
                               f"with hidden layers {list(self.hidden)}")

    def to_bytes(self) -> bytes:
        header = json.dumps({
            "format": FORMAT, "input_layout": input_layout(), "inputs": N_INPUTS,
            "hidden": list(self.hidden), "outcomes": len(OUTCOMES), "activation": "relu",
            "phase": self.phase, "provenance": self.provenance,
        }, sort_keys=True).encode()
        body = MAGIC + struct.pack("<I", len(header)) + header + self.parameters
        return body + hashlib.sha256(body).digest()

    @classmethod
    def from_bytes(cls, data: bytes, name: str = "weights") -> WeightsFile:
        """Read and check a weights file's bytes; `WeightsError` says what is wrong."""
        return cls._from_bytes(data, name)

    @classmethod
    def with_prefix_inputs(cls, data: bytes, name: str = "weights") -> WeightsFile:
        """A weights file made for the first inputs of `INPUT_NAMES` only (a bgbot before the
        later inputs were added), given zero weights on the inputs it lacks: the same network
        over today's inputs, from which training can go on. `WeightsError` if its layout is
        not such a prefix."""
        return cls._from_bytes(data, name, prefix=True)

    @classmethod
    def _from_bytes(cls, data: bytes, name: str, prefix: bool = False) -> WeightsFile:
        """`from_bytes`; with ``prefix``, a network over the first inputs of `INPUT_NAMES`
        (the header's ``inputs``) is also read, returned over all of them (zero weights on the
        others)."""
        if len(data) < len(MAGIC) + 4 + 32 or not data.startswith(MAGIC):
            raise WeightsError(f"{name}: not a bgbot network weights file")
        body, digest = data[:-32], data[-32:]
        if hashlib.sha256(body).digest() != digest:
            raise WeightsError(f"{name}: checksum mismatch (the file is corrupted or was edited)")
        (length,) = struct.unpack_from("<I", body, len(MAGIC))
        start = len(MAGIC) + 4
        try:
            header = json.loads(body[start:start + length])
        except ValueError as error:
            raise WeightsError(f"{name}: unreadable header ({error})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise WeightsError(f"{name}: weights format {header.get('format')!r} is not the "
                               f"format {FORMAT} this bgbot reads")
        stated = header.get("inputs")
        inputs = stated if isinstance(stated, int) else -1
        fits = inputs == N_INPUTS or (prefix and 0 < inputs < N_INPUTS)
        if not fits or header.get("input_layout") != input_layout(inputs):
            what = "the first inputs of this bgbot's" if prefix else "this bgbot's"
            raise WeightsError(
                f"{name}: made for other network inputs than {what} (layout "
                f"{header.get('input_layout')}, {stated} inputs; this bgbot has "
                f"{input_layout()}, {N_INPUTS}): weights and code come from different versions")
        hidden = header.get("hidden")
        if (not isinstance(hidden, list) or not hidden
                or not all(isinstance(w, int) and w > 0 for w in hidden)
                or header.get("outcomes") != len(OUTCOMES) or header.get("activation") != "relu"):
            raise WeightsError(f"{name}: unsupported network shape in the header")
        phase = header.get("phase", "contact")
        if phase not in PHASES:
            raise WeightsError(f"{name}: a network for {phase!r}, not one of {', '.join(PHASES)}")
        parameters = bytes(body[start + length:])
        if inputs != N_INPUTS:
            parameters = _zero_padded(parameters, inputs, hidden[0], name)
        return cls(tuple(hidden), parameters, dict(header.get("provenance") or {}), phase)

    @classmethod
    def read(cls, path: Path, expected_sha256: str | None = None,
             phase: str | None = None) -> WeightsFile:
        """`from_bytes` of a file; with ``expected_sha256``, the whole file must have it; with
        ``phase``, it must be a network for that phase."""
        try:
            data = path.read_bytes()
        except OSError as error:
            raise WeightsError(f"{path}: cannot read the weights file ({error.strerror})") from None
        if expected_sha256 is not None and hashlib.sha256(data).hexdigest() != expected_sha256:
            raise WeightsError(f"{path}: not the weights this bgbot was built with (its SHA-256 "
                               f"is not {expected_sha256[:16]}...): reinstall bgbot")
        weights = cls.from_bytes(data, str(path))
        if phase is not None and weights.phase != phase:
            raise WeightsError(f"{path}: a {weights.phase} network, where a {phase} network is "
                               "needed")
        return weights

    @property
    def sha256(self) -> str:
        """The SHA-256 (hex) of the file this network is (`to_bytes`)."""
        return hashlib.sha256(self.to_bytes()).hexdigest()

    def write(self, path: Path) -> str:
        """Write the file atomically; returns its SHA-256 (hex)."""
        data = self.to_bytes()
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_bytes(data)
        temporary.replace(path)
        return hashlib.sha256(data).hexdigest()

    def arrays(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """(weight matrix [inputs x outputs], biases) per layer, as float32 numpy arrays."""
        import numpy as np

        flat = np.frombuffer(self.parameters, dtype="<f4")
        widths = (N_INPUTS, *self.hidden, len(OUTCOMES))
        out = []
        at = 0
        for n_in, n_out in zip(widths, widths[1:]):
            w = flat[at:at + n_in * n_out].reshape(n_in, n_out)
            at += n_in * n_out
            b = flat[at:at + n_out]
            at += n_out
            out.append((w.astype(np.float32), b.astype(np.float32)))
        return out

    @classmethod
    def from_arrays(cls, layers: Sequence[tuple[np.ndarray, np.ndarray]],
                    provenance: dict[str, Any] | None = None,
                    phase: str = "contact") -> WeightsFile:
        """The file for per-layer (weights [inputs x outputs], biases) arrays."""
        import numpy as np

        hidden = tuple(int(w.shape[1]) for w, _ in layers[:-1])
        parts = [np.ascontiguousarray(a, dtype="<f4").ravel() for layer in layers for a in layer]
        return cls(hidden, np.concatenate(parts).tobytes(), dict(provenance or {}), phase)


def _shipped(path: Path, sha256: str, phase: str) -> WeightsFile | None:
    """A shipped network file checked against the checksum this code was released with, or
    None when none is shipped (``sha256`` empty). A file that does not match raises
    `WeightsError`."""
    if not sha256:
        return None
    return WeightsFile.read(path, expected_sha256=sha256, phase=phase)


@cache
def shipped_weights() -> WeightsFile | None:
    """The shipped contact network (`SHIPPED_FILE`, `SHIPPED_SHA256`), read once per process;
    None when none is shipped."""
    return _shipped(SHIPPED_FILE, SHIPPED_SHA256, "contact")


@cache
def shipped_zero_ply_weights() -> WeightsFile | None:
    """The shipped 0-ply network (`SHIPPED_ZERO_PLY_FILE`, `SHIPPED_ZERO_PLY_SHA256`), or
    None when none is shipped."""
    return _shipped(SHIPPED_ZERO_PLY_FILE, SHIPPED_ZERO_PLY_SHA256, "contact")


@cache
def shipped_race_weights() -> WeightsFile | None:
    """The shipped race network (`SHIPPED_RACE_FILE`, `SHIPPED_RACE_SHA256`), or None when
    none is shipped."""
    return _shipped(SHIPPED_RACE_FILE, SHIPPED_RACE_SHA256, "race")


@cache
def shipped_crashed_weights() -> WeightsFile | None:
    """The shipped crashed network (`SHIPPED_CRASHED_FILE`, `SHIPPED_CRASHED_SHA256`), or
    None when none is shipped."""
    return _shipped(SHIPPED_CRASHED_FILE, SHIPPED_CRASHED_SHA256, "crashed")


def _zero_padded(parameters: bytes, inputs: int, width: int, name: str) -> bytes:
    """The parameters of a network over ``inputs`` inputs, its first layer (``width`` units)
    given zero weights from the `N_INPUTS` - ``inputs`` inputs after them."""
    first = 4 * inputs * width
    if len(parameters) < first:
        raise WeightsError(f"{name}: its parameters do not fit its header")
    return parameters[:first] + bytes(4 * (N_INPUTS - inputs) * width) + parameters[first:]


def parameter_count(hidden: Sequence[int]) -> int:
    """Number of parameters of a network over `N_INPUTS` inputs with these hidden widths."""
    widths = (N_INPUTS, *hidden, len(OUTCOMES))
    return sum(a * b + b for a, b in zip(widths, widths[1:]))


class PythonNetwork:
    """The network evaluated with numpy (the fallback when the C extension is not built).

    ``outcomes(mover, opponent)`` and `chances_for` give the same numbers as the C ``Mlp`` up
    to float32 rounding (the tests hold them within 1e-5).
    """

    def __init__(self, weights: WeightsFile) -> None:
        self.weights = weights
        self.layers = weights.arrays()

    def outcomes_batch(self, x: np.ndarray, allowed: np.ndarray) -> np.ndarray:
        """Outcome probabilities [n x 6] for inputs [n x N_INPUTS] and masks [n x 6]."""
        import numpy as np

        h = x.astype(np.float32)
        for w, b in self.layers[:-1]:
            h = np.maximum(h @ w + b, 0.0)
        w, b = self.layers[-1]
        logits = (h @ w + b).astype(np.float64)
        logits = np.where(allowed, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        e = np.exp(logits)
        out: np.ndarray = e / e.sum(axis=1, keepdims=True)
        return out

    def outcomes(self, mover: Sequence[int], opponent: Sequence[int]) -> tuple[float, ...]:
        """The six outcome probabilities for ``mover`` on roll."""
        import numpy as np

        x = np.asarray([inputs(mover, opponent)], dtype=np.float32)
        allowed = np.asarray([outcome_mask(mover, opponent)])
        return tuple(float(v) for v in self.outcomes_batch(x, allowed)[0])

    def chances_for(self, mover: Sequence[int], opponent: Sequence[int]) -> Probabilities:
        """The five chances for ``mover`` on roll (a position of the network's class)."""
        return chances(self.outcomes(mover, opponent))

    evaluate_sides = chances_for
    """The network as its class's evaluator (`by_class.SideEvaluator`)."""

    def evaluate_batch(self, boards: Sequence[tuple[Sequence[int], Sequence[int]]]
                       ) -> list[Probabilities]:
        """`chances_for` of many (mover, opponent) boards in one matrix product (equal to one
        by one up to float32 rounding)."""
        import numpy as np

        x = np.asarray([inputs(*board) for board in boards], dtype=np.float32)
        allowed = np.asarray([outcome_mask(*board) for board in boards])
        return [chances([float(v) for v in row]) for row in self.outcomes_batch(x, allowed)]
