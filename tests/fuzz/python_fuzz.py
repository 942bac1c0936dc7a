"""A bounded fuzz run of the Python entry points that read text: smelt.read_config (a file, and the extension's
parse of the text itself), smelt.count of what it accepts, and the readers of the four plots' reports and of
law files (smelt.plot._inputs, smelt.plot._laws).

Each input is written to a file and given to one reader, chosen by its first byte. smelt.Error (and its kinds)
and ReportError are the answers bad input may get; any other exception is a finding: the run stops, keeps the
input as build/fuzz/python-crash-* and exits 1.

With atheris (pip install atheris==3.0.0) the run is libFuzzer's, coverage-guided over the package's Python
code, a fixed number of executions from the corpus below; without it, a seeded loop of random mutations
(bytes and JSON values) over the same corpus. New inputs go to build/fuzz/python-corpus/, never into the
repository.

    python tests/fuzz/python_fuzz.py [--runs N] [--seed S] [--engine atheris|random]
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import shutil
import sys
import tempfile
import traceback

ROOT = pathlib.Path(__file__).resolve().parents[2]
CORPUS = [ROOT / "tests" / "fuzz" / "corpus" / d for d in ("python_reports", "native_config", "hf_config", "laws")]
DICTIONARY = ROOT / "tests" / "fuzz" / "json.dict"
WORK = ROOT / "build" / "fuzz"
MAX_LEN = 16384  # bytes of one input: the seeds' sizes, and room to grow (the readers' own bound is 64 MiB)

READERS = ("config", "config_text", "match", "sweep", "layers", "frontier", "laws")


def load_modules():
    """The package, imported here so that atheris can instrument its Python code."""
    import smelt
    from smelt import _core
    from smelt.plot import ReportError, _inputs, _laws

    return smelt, _core, _inputs, _laws, ReportError


class Target:
    def __init__(self, path: pathlib.Path, modules) -> None:
        self.path = path
        self.smelt, self.core, self.inputs, self.laws, self.report_error = modules
        self.expected = (self.smelt.Error, self.report_error)
        self.outcomes = {r: [0, 0] for r in READERS}  # reader -> [accepted, refused]

    def __call__(self, data: bytes) -> None:
        if not data:
            return
        reader, body = READERS[data[0] % len(READERS)], data[1:]
        self.path.write_bytes(body)
        try:
            self.read(reader, body)
            self.outcomes[reader][0] += 1
        except self.expected:
            self.outcomes[reader][1] += 1

    def summary(self) -> str:
        return ", ".join(f"{r} {a} read/{b} refused" for r, (a, b) in self.outcomes.items())

    def read(self, reader: str, body: bytes) -> None:
        path = str(self.path)
        if reader == "config":
            cfg = self.smelt.read_config(path)
            self.smelt.count(cfg)
            self.smelt.count(cfg.to_dict())
        elif reader == "config_text":
            # The extension's text entry (a dict's JSON goes through it); its argument must be str.
            self.core.parse_config(body.decode("utf-8", "replace"), "<fuzz>")
        elif reader == "match":
            self.inputs.read_match(path)
        elif reader == "sweep":
            self.inputs.read_sweep(path)
        elif reader == "layers":
            self.inputs.read_layers(path)
        elif reader == "frontier":
            # The seed's law file lies beside the input as laws.json, the name the seed report gives it.
            f, name = self.inputs.read_frontier(path)
            self.laws.check_agreement(f, name, self.laws.frontier_laws(f, name, None))
        else:
            self.laws.read_law_file(path, 0.25)


# The reader each seed was written for, by a word in its file name (the others: config and config_text).
OWN_READER = {"count": "layers", "derive": "match", "sweep": "sweep", "frontier": "frontier", "law": "laws"}


def seeds() -> list[bytes]:
    """Each seed once for every reader, and ten times more for its own (so that mutations reach past the header)."""
    out = []
    for folder in CORPUS:
        for p in sorted(folder.iterdir()):
            data = p.read_bytes()[:MAX_LEN]
            own = [r for word, r in OWN_READER.items() if word in p.name] or ["config", "config_text"]
            out += [bytes([i]) + data for i in range(len(READERS))]
            out += [bytes([READERS.index(r)]) + data for r in own for _ in range(10)]
    return out


def keep(data: bytes, error: BaseException) -> None:
    WORK.mkdir(parents=True, exist_ok=True)
    crash = WORK / f"python-crash-{abs(hash(data)):016x}"
    crash.write_bytes(data)
    print(f"python_fuzz: {type(error).__name__} on an input kept as {crash}", file=sys.stderr)


# ---- the seeded loop (no atheris) -------------------------------------------------------------------------------

TOKENS = [line.strip()[1:-1].encode().decode("unicode_escape").encode() for line in DICTIONARY.read_text().splitlines()
          if line.startswith('"')]
VALUES = [None, True, False, 0, -1, 1, 2**53, 2**64, -(2**63) - 1, 1e308, -1e-308, 0.5, "", "x" * 200, "1-2", [],
          {}, [1, 2], {"a": 1}, "full", "moe", "chinchilla", "smelt", "match", "count", "sweep", "frontier"]


def _nodes(value, path=()):
    """Every value of a JSON document with its path of keys and indices."""
    yield path, value
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in items:
        yield from _nodes(child, (*path, key))


def mutate_json(rng: random.Random, value):
    """A JSON value with one to three of its values (any one, uniformly) replaced, removed, duplicated or
    nested: the readers' type and range rules. The document is changed in place."""
    for _ in range(rng.randint(1, 3)):
        path, node = rng.choice(list(_nodes(value)))
        if not path:
            continue
        parent = value
        for key in path[:-1]:
            parent = parent[key]
        key, roll = path[-1], rng.random()
        if roll < 0.15:
            del parent[key]
        elif roll < 0.25 and isinstance(parent, list):
            parent.append(node)
        elif roll < 0.35 and isinstance(node, (int, float)) and not isinstance(node, bool):
            parent[key] = rng.choice([-node, node * 2**rng.randint(1, 80), node + 1, node - 1, 0])
        else:
            parent[key] = rng.choice(VALUES + [[node], {"x": node}])
    return value


def mutate_bytes(rng: random.Random, data: bytearray, pool: list[bytes]) -> bytearray:
    for _ in range(rng.randint(1, 4)):
        roll, n = rng.random(), len(data)
        at = rng.randrange(n + 1)
        if roll < 0.25 and n:
            data[rng.randrange(n)] = rng.randrange(256)
        elif roll < 0.45:
            data[at:at] = rng.choice(TOKENS)
        elif roll < 0.6 and n:
            end = min(n, at + rng.randint(1, 64))
            del data[at:end]
        elif roll < 0.75 and n:
            end = min(n, at + rng.randint(1, 64))
            data[at:at] = data[at:end] * rng.randint(1, 8)
        elif roll < 0.9:
            other = rng.choice(pool)
            a = rng.randrange(len(other) + 1)
            data[at:at] = other[a : a + rng.randint(1, 256)]
        else:
            data[at:at] = rng.choice([b"[" * 70, b"{\"a\":" * 70, b"1e999", b"-0", b"\xff", b"\xef\xbb\xbf", b"\\ud800"])
    return data[:MAX_LEN]


def random_run(target: Target, runs: int, seed: int) -> int:
    rng = random.Random(seed)
    pool = seeds()
    accepted = 0
    for i in range(runs):
        parent = pool[i] if i < len(pool) else rng.choice(pool)
        if i < len(pool):
            data = parent
        elif rng.random() < 0.5:
            try:
                value = json.loads(parent[1:])
                data = parent[:1] + json.dumps(mutate_json(rng, value)).encode()[:MAX_LEN]
            except (ValueError, RecursionError):
                data = bytes(mutate_bytes(rng, bytearray(parent), pool))
        else:
            data = bytes(mutate_bytes(rng, bytearray(parent), pool))
        try:
            target(data)
        except Exception as error:  # noqa: BLE001 - every other exception is the finding
            traceback.print_exc()
            keep(data, error)
            return 1
        if len(data) <= MAX_LEN and sum(target.outcomes[r][0] for r in READERS) > accepted:
            pool.append(data)  # read without a violation: a new start for the mutations
        accepted = sum(target.outcomes[r][0] for r in READERS)
    print(f"python_fuzz: {runs} inputs (random mutations, seed {seed}), no finding: {target.summary()}", file=sys.stderr)
    return 0


# ---- atheris --------------------------------------------------------------------------------------------------


def atheris_run(atheris, runs: int, seed: int, path: pathlib.Path) -> int:
    with atheris.instrument_imports(include=["smelt"]):
        modules = load_modules()
    target = Target(path, modules)
    corpus = WORK / "python-corpus"
    shutil.rmtree(corpus, ignore_errors=True)
    corpus.mkdir(parents=True)
    for i, data in enumerate(seeds()):  # libFuzzer writes new inputs into its first folder: a copy, not the seeds
        (corpus / f"seed-{i:04d}").write_bytes(data)

    def test_one_input(data: bytes) -> None:
        try:
            target(data)
        except Exception as error:  # noqa: BLE001
            keep(data, error)
            raise

    args = [sys.argv[0], f"-runs={runs}", f"-seed={seed}", f"-max_len={MAX_LEN}", f"-dict={DICTIONARY}",
            "-timeout=20", f"-artifact_prefix={WORK}/python-", "-print_final_stats=1", str(corpus)]
    atheris.Setup(args, test_one_input)
    atheris.Fuzz()  # exits the process: 0 after the runs, non-zero on a finding
    return 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20000, help="inputs to run (default 20000)")
    p.add_argument("--seed", type=int, default=1, help="seed of the mutations (default 1)")
    p.add_argument("--engine", choices=("atheris", "random"), help="default: atheris when it is installed")
    args = p.parse_args()
    try:
        import atheris
    except ImportError:
        atheris = None
    engine = args.engine or ("atheris" if atheris is not None else "random")
    if engine == "atheris" and atheris is None:
        print("python_fuzz: atheris is not installed (pip install atheris==3.0.0)", file=sys.stderr)
        return 2
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = pathlib.Path(tmp) / "input.json"
        shutil.copy(CORPUS[0] / "seed-laws-dense-looped.json", pathlib.Path(tmp) / "laws.json")
        if engine == "atheris":
            return atheris_run(atheris, args.runs, args.seed, path)
        return random_run(Target(path, load_modules()), args.runs, args.seed)


if __name__ == "__main__":
    sys.exit(main())
