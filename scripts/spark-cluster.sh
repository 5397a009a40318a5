#!/usr/bin/env bash
# A Spark standalone cluster on this machine's loopback: one master and two workers, started from
# the pyspark installation itself (no separate Spark download).
#
#   scripts/spark-cluster.sh start   # master at spark://127.0.0.1:7077, two 1-core workers
#   scripts/spark-cluster.sh stop
#   scripts/spark-cluster.sh status
#
# Logs and pid files go to $HWCHECK_SPARK_RUN (default: $TMPDIR/hwcheck-spark-cluster).
# Knobs: SPARK_MASTER_PORT (7077), HWCHECK_WORKER_CORES (1), HWCHECK_WORKER_MEMORY (2g),
# HWCHECK_WORKERS (2). Every service binds 127.0.0.1 only; web UIs take ephemeral ports.
set -euo pipefail

PY=${PYTHON:-python3}
RUN_DIR=${HWCHECK_SPARK_RUN:-${TMPDIR:-/tmp}/hwcheck-spark-cluster}
PORT=${SPARK_MASTER_PORT:-7077}
CORES=${HWCHECK_WORKER_CORES:-1}
MEMORY=${HWCHECK_WORKER_MEMORY:-2g}
WORKERS=${HWCHECK_WORKERS:-2}
MASTER_URL="spark://127.0.0.1:${PORT}"

export SPARK_HOME
SPARK_HOME=$("$PY" -c 'import pyspark, os; print(os.path.dirname(pyspark.__file__))')
export SPARK_LOCAL_IP=127.0.0.1
export SPARK_MASTER_OPTS="${SPARK_MASTER_OPTS:-} -Dspark.master.rest.enabled=false"
export SPARK_LOG_DIR="$RUN_DIR/logs"
export PYSPARK_PYTHON
PYSPARK_PYTHON=$(command -v "$PY")

alive() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

wait_for() {  # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1)); shift
  until "$@"; do
    if ((SECONDS >= deadline)); then return 1; fi
    sleep 0.5
  done
}

registered() { [[ $(grep -c "Registering worker" "$RUN_DIR/master.log" 2>/dev/null) -ge $WORKERS ]]; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; }

start() {
  mkdir -p "$RUN_DIR" "$SPARK_LOG_DIR"
  if alive "$RUN_DIR/master.pid"; then
    echo "spark-cluster: already running ($MASTER_URL)"; return 0
  fi
  rm -f "$RUN_DIR"/*.pid
  nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.master.Master \
    --host 127.0.0.1 --port "$PORT" --webui-port 0 >"$RUN_DIR/master.log" 2>&1 &
  echo $! >"$RUN_DIR/master.pid"
  if ! wait_for 60 port_open; then
    echo "spark-cluster: the master did not come up; see $RUN_DIR/master.log" >&2; stop; exit 1
  fi
  for i in $(seq 1 "$WORKERS"); do
    mkdir -p "$RUN_DIR/worker$i"
    nohup "$SPARK_HOME/bin/spark-class" org.apache.spark.deploy.worker.Worker \
      --host 127.0.0.1 --cores "$CORES" --memory "$MEMORY" --webui-port 0 \
      --work-dir "$RUN_DIR/worker$i" "$MASTER_URL" >"$RUN_DIR/worker$i.log" 2>&1 &
    echo $! >"$RUN_DIR/worker$i.pid"
  done
  if ! wait_for 60 registered; then
    echo "spark-cluster: workers did not register; see $RUN_DIR/*.log" >&2; stop; exit 1
  fi
  echo "spark-cluster: $MASTER_URL with $WORKERS workers ($CORES core(s), $MEMORY each); logs in $RUN_DIR"
}

stop_pid() {  # stop_pid PIDFILE: the process and its children (executors it launched)
  local f=$1 pid
  [[ -f "$f" ]] || return 0
  pid=$(cat "$f")
  if kill -0 "$pid" 2>/dev/null; then
    local kids
    kids=$(pgrep -P "$pid" || true)
    kill "$pid" 2>/dev/null || true
    wait_for 20 bash -c "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null || true
    for k in $kids; do kill "$k" 2>/dev/null || true; done
  fi
  rm -f "$f"
}

stop() {
  for f in "$RUN_DIR"/worker*.pid; do [[ -e "$f" ]] && stop_pid "$f"; done
  stop_pid "$RUN_DIR/master.pid"
  echo "spark-cluster: stopped"
}

status() {
  local up=0
  alive "$RUN_DIR/master.pid" && { echo "master  $(cat "$RUN_DIR/master.pid")  $MASTER_URL"; up=1; }
  for f in "$RUN_DIR"/worker*.pid; do
    [[ -e "$f" ]] && alive "$f" && echo "$(basename "$f" .pid)  $(cat "$f")"
  done
  ((up)) || { echo "spark-cluster: not running"; return 3; }
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
