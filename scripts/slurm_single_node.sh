#!/usr/bin/env bash
# A single-node Slurm cluster on this machine, for the slow test on a real Slurm
# (tests/test_sweep_slurm.py): Debian's slurm-wlm and munge, slurmctld and slurmd on this host,
# no accounting database. Needs root. Idempotent: exits 0 at once when sinfo already answers.
#
#   scripts/slurm_single_node.sh            # install (apt) where missing, configure, start
#
# Exits non-zero, with one line, when it cannot (no apt, not root, a daemon that will not start).
set -euo pipefail

up() { command -v sinfo >/dev/null 2>&1 && timeout 20 sinfo -h -o %a 2>/dev/null | grep -q up; }
if up; then
  echo "slurm: already up"
  exit 0
fi
[ "$(id -u)" -eq 0 ] || { echo "slurm: needs root" >&2; exit 1; }
if ! command -v slurmctld >/dev/null 2>&1 || ! command -v munged >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || { echo "slurm: no apt-get to install slurm-wlm" >&2; exit 1; }
  { timeout 900 apt-get update -qq && DEBIAN_FRONTEND=noninteractive timeout 900 \
      apt-get install -y -qq slurm-wlm munge; } >/dev/null 2>&1 \
    || { echo "slurm: could not install slurm-wlm and munge" >&2; exit 1; }
fi

host="$(hostname -s)"
cpus="$(nproc)"
mem_mb="$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)"
conf_dir=/etc/slurm
mkdir -p "$conf_dir" /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /etc/munge
cat > "$conf_dir/slurm.conf" <<CONF
ClusterName=inductor-bench
SlurmctldHost=$host
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
SlurmdSpoolDir=/var/spool/slurmd
StateSaveLocation=/var/spool/slurmctld
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
SlurmUser=root
MpiDefault=none
NodeName=$host CPUs=$cpus RealMemory=$mem_mb State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
CONF
if [ ! -s /etc/munge/munge.key ]; then
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown -R munge:munge /etc/munge /run/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
pgrep -x munged >/dev/null || munged --force 2>/dev/null || su -s /bin/sh munge -c "munged --force" \
  || { echo "slurm: munged did not start" >&2; exit 1; }
pgrep -x slurmctld >/dev/null || slurmctld || { echo "slurm: slurmctld did not start" >&2; exit 1; }
pgrep -x slurmd >/dev/null || slurmd || { echo "slurm: slurmd did not start" >&2; exit 1; }
for _ in $(seq 1 30); do
  if up; then
    scontrol update nodename="$host" state=resume >/dev/null 2>&1 || true
    echo "slurm: up ($host, $cpus CPUs)"
    exit 0
  fi
  sleep 1
done
echo "slurm: started, but sinfo does not answer (see /var/log/slurm/)" >&2
exit 1
