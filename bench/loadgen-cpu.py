#!/usr/bin/env python3
"""loadgen-cpu.py: the CPU `mcpwire load` spends per request against the CPU
the raw line servers spend per request, in the same run (issue 21, item 4).

For each round, each row (stdio: bench-rawtcp on pipes; TCP and Unix:
bench-rawgnet) and each generator (alternating order from round to round),
one run of `GEN load -json -c 1 -w 64 -d DUR -warmup 0`: the generator's
figure is its client_cpu_us_per_req; the server's is its user+system CPU
over the run (/proc/PID/stat for sockets; the shell's `times` after the
stdio server exits) divided by the requests. Prints every run, then medians.

  GENS="before=/path/to/old/mcpwire after=bin/mcpwire" ROUNDS=5 DUR=3s \
      bench/loadgen-cpu.py

BIN (default bin) holds bench-rawgnet and bench-rawtcp (make compare builds
them). Loopback only; ports from PORT (default 19400) upwards.
"""
import json, os, re, socket, statistics, subprocess, sys, tempfile, time

ROUNDS = int(os.environ.get("ROUNDS", "5"))
DUR = os.environ.get("DUR", "3s")
BIN = os.environ.get("BIN", "bin")
ROWS = os.environ.get("ROWS", "stdio tcp unix").split()
GENS = [g.split("=", 1) for g in os.environ.get("GENS", "branch=bin/mcpwire").split()]
TICK = os.sysconf("SC_CLK_TCK")
tmp = tempfile.mkdtemp(prefix="loadgen-cpu.")
wrapper = os.path.join(tmp, "stdio-times.sh")
with open(wrapper, "w") as f:
    f.write("#!/bin/sh\n%s -splice-id\ntimes >&2\n" % os.path.abspath(os.path.join(BIN, "bench-rawtcp")))
os.chmod(wrapper, 0o755)


def cpu(pid):
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / TICK


def wait_listening(family, addr):
    deadline = time.time() + 10
    while time.time() < deadline:
        try:
            with socket.socket(family, socket.SOCK_STREAM) as c:
                c.connect(addr)
            return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"server at {addr} did not come up")


def run(gen, row, port):
    args = ["nice", "-n", "-19", gen, "load", "-json", "-c", "1", "-w", "64", "-d", DUR,
            "-warmup", "0", "-progress", "off"]
    srv = None
    rawgnet = os.path.join(BIN, "bench-rawgnet")
    if row == "stdio":
        target = "stdio:" + wrapper
    elif row == "tcp":
        srv = subprocess.Popen(["nice", "-n", "-19", rawgnet, "-tcp", f"127.0.0.1:{port}", "-splice-id"], stderr=subprocess.DEVNULL)
        target = f"tcp://127.0.0.1:{port}"
        wait_listening(socket.AF_INET, ("127.0.0.1", port))
    else:
        path = os.path.join(tmp, f"raw{port}.sock")
        srv = subprocess.Popen(["nice", "-n", "-19", rawgnet, "-unix", path, "-splice-id"], stderr=subprocess.DEVNULL)
        target = f"unix://{path}"
        wait_listening(socket.AF_UNIX, path)
    if srv:
        c0 = cpu(srv.pid)
    p = subprocess.run(args + [target], capture_output=True, text=True)
    if p.returncode != 0 or not p.stdout.strip():
        if srv:
            srv.kill()
            srv.wait()
        sys.exit(f"{gen} on {row} failed ({p.returncode}): {p.stderr.strip()}")
    res = json.loads(p.stdout)
    n = res["requests"]
    if srv:
        s = cpu(srv.pid) - c0
        srv.kill()
        srv.wait()
    else:
        m = re.findall(r"server 0: (\d+)m([\d.]+)s (\d+)m([\d.]+)s", p.stderr)[-1]
        s = int(m[0]) * 60 + float(m[1]) + int(m[2]) * 60 + float(m[3])
    return n, res["rps"], res["client_cpu_us_per_req"], s * 1e6 / n, sum(res["errors"].values())


out = {}
port = int(os.environ.get("PORT", "19400"))
print("load average at start:", open("/proc/loadavg").read().strip())
for r in range(1, ROUNDS + 1):
    for row in ROWS:
        for name, gen in (GENS if r % 2 else GENS[::-1]):
            port += 1
            n, rps, g, s, e = run(gen, row, port)
            la = open("/proc/loadavg").read().split()[0]
            print(f"round {r} {row:5} gen={name:8} requests {n:9d} rps {rps:11.1f} gen µs/req {g:5.2f} "
                  f"raw srv µs/req {s:5.2f} gen/srv {g / s:5.2f} errors {e} load {la}", flush=True)
            out.setdefault((row, name), []).append((rps, g, s, g / s))
print()
print("medians over %d rounds (1 connection × 64 in flight, %s, no warm-up):" % (ROUNDS, DUR))
print(f"{'row':6} {'generator':9} {'req/s':>11} {'gen µs/req':>10} {'raw srv µs/req':>14} {'gen/srv':>8}")
for (row, name), v in sorted(out.items()):
    md = [statistics.median(x[i] for x in v) for i in range(4)]
    print(f"{row:6} {name:9} {md[0]:11.0f} {md[1]:10.2f} {md[2]:14.2f} {md[3]:8.2f}")
print("load average at end:", open("/proc/loadavg").read().strip())
