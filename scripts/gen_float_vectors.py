#!/usr/bin/env python3
"""Writes tests/fixtures/json/float_repr.json: [f64 bits as hex, Python's repr] pairs, the golden
vectors for src/protocol/json.rs. Rerun only to extend them: `python3 scripts/gen_float_vectors.py`."""
import json, random, struct

random.seed(20261130)
vals = [struct.unpack("d", struct.pack("Q", random.getrandbits(64)))[0] for _ in range(3000)]
vals += [random.uniform(-1e17, 1e17) for _ in range(1000)]
vals += [random.randint(0, 2**53) / 4 for _ in range(1000)]  # ties between shortest candidates
vals += [random.randint(-10**6, 10**6) / 10 ** random.randint(0, 8) for _ in range(1000)]
vals += [10.0**e for e in range(-20, 25)] + [5e-324, 1.7976931348623157e308, -0.0]
vals = [v for v in vals if v == v and abs(v) != float("inf")]
pairs = [[struct.pack(">d", v).hex(), json.dumps(v)] for v in vals]
with open("tests/fixtures/json/float_repr.json", "w") as f:
    json.dump(pairs, f, indent=0)
print(len(pairs), "vectors")
