#!/usr/bin/env python3
# Writes RESP MSET commands for keys key:000000000000 .. key:N-1 (the names
# redis-benchmark -r N uses) with 100-byte sysbench-like values (groups of
# random digits), 100 keys per MSET.
import random, sys
n = int(sys.argv[1]); rnd = random.Random(42); out = sys.stdout.buffer
def val():
    return "-".join("".join(rnd.choice("0123456789") for _ in range(11)) for _ in range(8))[:100].encode()
for start in range(0, n, 100):
    keys = range(start, min(n, start + 100))
    parts = [b"MSET"]
    for k in keys:
        parts.append(b"key:%012d" % k); parts.append(val())
    out.write(b"*%d\r\n" % len(parts))
    for p in parts:
        out.write(b"$%d\r\n%s\r\n" % (len(p), p))
