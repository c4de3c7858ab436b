"""CPU time per process while a benchmark scenario runs, read from Linux's /proc.

Latency alone cannot tell a slow server from a starved one: these samples say how many cores
the server, the benchmark client, everything else on the machine and the hypervisor (steal)
used over the same window. Field layouts: proc(5), ``/proc/[pid]/stat`` and ``/proc/stat``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class CpuSample:
    """CPU seconds so far: the server's process group, this client, the whole machine."""

    server: float
    client: float
    busy: float  # every CPU, not idle, not stolen
    steal: float  # time the hypervisor gave this VM's CPUs to someone else

    @classmethod
    def take(cls, server_group: int) -> CpuSample:
        tick = os.sysconf("SC_CLK_TCK")
        server = 0.0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:  # the process ended meanwhile
                continue
            if int(fields[2]) == server_group:  # pgrp; fields[11:13] are utime, stime
                server += (int(fields[11]) + int(fields[12])) / tick
        own = os.times()
        cpu = [int(x) / tick for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:]]
        # user nice system idle iowait irq softirq steal ...
        busy = cpu[0] + cpu[1] + cpu[2] + cpu[5] + cpu[6]
        return cls(server, own.user + own.system, busy, cpu[7])

    def cores_since(self, before: CpuSample, seconds: float) -> str:
        """Cores in use over ``seconds``: server / client / everything else / stolen."""
        server = self.server - before.server
        client = self.client - before.client
        rest = max(0.0, self.busy - before.busy - server - client)
        steal = self.steal - before.steal
        return " / ".join(f"{x / seconds:.2f}" for x in (server, client, rest, steal))
