#!/usr/bin/env python3
"""Print a buffer pool controller trace (strata pool-sweep --log FILE, or any
Options.Logger JSON handler at Debug level) one line per decision or event.

usage: ctltrace.py LOG [DIST]   (DIST: only the runs with that "dist" attribute)

A decision prints: time, R before -> after, the images' use u and alpha, the
gains and losses (µs summed over the evidence: gU lU gC lC), thin / up (the
evidence was too noisy to step on / it wanted R up), the stall count and the
step ("-" in traces from before 03302a8, which did not log them), whether
demotions compress, the frame hits, image hits and misses it was taken on,
and how many decisions in a row each arm (copy, frames) has qualified.
Other records (warm-up, trials, the gate) print their attributes.
"""
import json
import sys


def num(v):
    """A logged float, or the string a JSON handler cannot write as a number ("+Inf", "NaN")."""
    return v if isinstance(v, (int, float)) else float(v.replace("+Inf", "inf").replace("-Inf", "-inf"))


def main():
    path = sys.argv[1]
    dist = sys.argv[2] if len(sys.argv) > 2 else None
    for line in open(path):
        d = json.loads(line)
        if dist and d.get("dist") != dist:
            continue
        t = d["time"][11:23]
        if d["msg"] == "bufferpool: decision":
            print(t, "dec %.3f->%.3f u=%.2f a=%.2f" % (d["from"], d["to"], d["usage"], d["alpha"]),
                  "gU=%.0f lU=%.0f gC=%.0f lC=%.0f" % tuple(num(d[k]) / 1e3 for k in ("gain_u", "loss_u", "gain_c", "loss_c")),
                  "thin" if d["thin"] else "    ", "up" if d["wanted_up"] else "  ",
                  "stall=%s" % d.get("up_stalled", "-"), "step=%s" % (round(d["step"], 4) if "step" in d else "-"),
                  "comp" if d["compressing"] else "off ",
                  d["hits_u"], d["hits_c"], d["misses"], "arms", d["stuck_copy"], d["stuck_frames"])
        else:
            rest = {k: (round(v, 3) if isinstance(v, float) else v) for k, v in d.items()
                    if k not in ("time", "level", "scenario", "dist", "msg")}
            print(t, d["msg"], rest)


if __name__ == "__main__":
    main()
