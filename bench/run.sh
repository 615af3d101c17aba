#!/usr/bin/env bash
# bench/run.sh times agentc side by side with what it is measured against:
#   1. agentc vet of one example       vs cue vet of the same manifest with the #Manifest schema
#   2. agentc vet of 1,000 manifests    vs cue vet ./... over them, one package a directory
#      (and 2a, of 100: beside 2, whether peak memory grows with their number)
#   3. agentc-runtime run plan.json     vs bench/floor, one request through the same SDK
#   4. agentc run manifest.cue          vs bench/floor
#   5. agentc run --replay of 1,002 effects vs the same replay of 4
#   6. agentc run --temporal (a worker beside it, Temporal's dev server)
#                                       vs agentc run in process
#   7. agentc-runtime run plan.json     vs bench/peer, Genkit running the same
#   8. agentc run manifest.cue             agent from a prompt file (its peer)
# It measures wall time with hyperfine (medians) and peak memory with
# /usr/bin/time -v (the largest of a few runs); the model is bench/server, a
# zero-latency OpenAI-compatible server on loopback. It prints a markdown
# table; --write also puts it in BENCHMARKS.md between the bench markers.
# --short runs each command a few times only: the mode for CI, which keeps
# the harness from rotting and never fails on timings. See BENCHMARKS.md.
#
# Usage: bash bench/run.sh [--short] [--write]
set -euo pipefail

usage() {
	echo "usage: bash bench/run.sh [--short] [--write]" >&2
	exit 2
}
short=0
write=0
for arg in "$@"; do
	case $arg in
	--short) short=1 ;;
	--write) write=1 ;;
	*) usage ;;
	esac
done

log() { echo "bench: [${SECONDS}s] $*" >&2; }
fail() {
	log "$*"
	exit 1
}

cd "$(dirname "$0")/.."
root=$PWD

# install_pkg PACKAGE: a Debian package, through apt-get, as root or through
# sudo when that needs no password.
install_pkg() {
	local sudo=()
	command -v apt-get >/dev/null || fail "$1 is missing and there is no apt-get to install it: install the $1 package"
	if [ "$(id -u)" != 0 ]; then
		if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
			sudo=(sudo -n)
		else
			fail "$1 is missing: install it (apt-get install $1) and run again"
		fi
	fi
	log "installing $1 (apt-get install $1)"
	local apt=("${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get)
	"${apt[@]}" install -y -q "$1" >&2 </dev/null ||
		{ "${apt[@]}" update -q >&2 </dev/null && "${apt[@]}" install -y -q "$1" >&2 </dev/null; } ||
		fail "could not install $1: install it (apt-get install $1) and run again"
}

# tools: the timing tools, installed where missing. With --short (CI), a
# machine that cannot install them still checks that everything builds and
# every command works, and skips the timings: they never fail CI anyway.
tools() {
	command -v hyperfine >/dev/null || (install_pkg hyperfine) || return 1
	# -N (no shell) came with hyperfine 1.13.
	hf=$(hyperfine --version | sed -n 's/^hyperfine \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')
	read -r hf_major hf_minor <<<"${hf:-0 0}"
	if [ "$hf_major" -lt 1 ] || { [ "$hf_major" = 1 ] && [ "$hf_minor" -lt 13 ]; }; then
		log "$(hyperfine --version) is too old: bench/run.sh needs hyperfine 1.13 or newer"
		return 1
	fi
	[ -x /usr/bin/time ] || (install_pkg time) || return 1
}
command -v go >/dev/null || fail "the go command is missing: install Go 1.26 or newer"
timing=1
if ! tools; then
	[ "$short" = 1 ] || fail "hyperfine 1.13 or newer and /usr/bin/time are needed"
	log "the timing tools are unavailable: every command is checked, no timing is taken"
	timing=0
fi

# tool_rounds: the lookups of the replayed run (its journal: 2 effects a
# round, and the prose and answering turns).
if [ "$short" = 1 ]; then
	warmup=1 runs=3 runs_dir=3 rss_runs=1 blocks=1 mode="short" tool_rounds=20
else
	warmup=3 runs=40 runs_dir=15 rss_runs=5 blocks=5 mode="full" tool_rounds=500
fi

tmp=$(mktemp -d)
server_pid="" temporal_pid="" worker_pid=""
# stop PID-VARIABLE: stops the process whose PID the variable holds.
stop() {
	local pid=${!1}
	if [ -n "$pid" ]; then
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		printf -v "$1" %s ""
	fi
}
stop_server() { stop server_pid; }
cleanup() {
	stop worker_pid
	stop temporal_pid
	stop_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

work=$tmp/work
res=$tmp/results
mkdir -p "$work" "$res"

log "building agentc and agentc-runtime, the server, the floor, the peer and the generator"
go build -o "$tmp/" ./cmd/agentc ./cmd/agentc-runtime
for prog in server floor gen report; do
	go build -o "$tmp/$prog" "./bench/$prog"
done
# The peer is a module of its own (Genkit stays out of agentc's).
(cd bench/peer && go build -o "$tmp/peer" .)
cue_version=$(go list -m -f '{{.Version}}' cuelang.org/go)
log "installing cue $cue_version (go install cuelang.org/go/cmd/cue@$cue_version)"
GOBIN=$tmp go install "cuelang.org/go/cmd/cue@$cue_version"

temporal_cli=$(bash scripts/install-temporal.sh) || fail "could not install the temporal program (scripts/install-temporal.sh)"

log "generating 1,000 manifests, and 100"
"$tmp/gen" -schema manifest/schema.cue -example examples/issue-triage.cue -n 1000 -out "$work"
"$tmp/gen" -schema manifest/schema.cue -example examples/issue-triage.cue -n 100 -out "$work/n100"
"$tmp/agentc" compile bench/testdata/agent.cue -o "$work/plan.json"

# start_server [-same]: starts bench/server on a free loopback port and
# sets base to its URL.
start_server() {
	rm -f "$tmp/addr"
	"$tmp/server" -answer bench/testdata/answer.json -addr 127.0.0.1:0 -addr-file "$tmp/addr" "$@" 2>>"$tmp/server.log" &
	server_pid=$!
	for _ in $(seq 200); do
		[ -s "$tmp/addr" ] && break
		kill -0 "$server_pid" 2>/dev/null || fail "the server did not start: $(cat "$tmp/server.log")"
		sleep 0.05
	done
	[ -s "$tmp/addr" ] || fail "the server did not start within 10s"
	base="http://$(cat "$tmp/addr")/v1"
}

# The commands of each pair, agentc's first. Each runs in the directory
# named; hyperfine runs them without a shell (-N), so paths are quoted.
q() { printf "'%s'" "${1//\'/\'\\\'\'}"; }
export OPENAI_API_KEY=sk-bench-not-a-secret
input=@$root/bench/testdata/input.json
floor=("$tmp/floor" -request "$root/bench/testdata/floor.json" -schema "$root/bench/testdata/schema.json")
peer=("$tmp/peer" -prompt "$root/bench/testdata/bench.prompt" -input "$root/bench/testdata/input.json")

# Before timing anything: every command works, and the server (with -same)
# refuses any request that differs from the first, so agentc and the floor
# are known to send the same one.
log "checking that agentc and the floor send the same request and get the same answer"
start_server -same
want=$(cat bench/testdata/answer.json)
for cmd in plan manifest floor; do
	case $cmd in
	plan) got=$("$tmp/agentc-runtime" run "$work/plan.json" --input "$input" --base-url "$base" 2>>"$tmp/run.log") ;;
	manifest) got=$("$tmp/agentc" run bench/testdata/agent.cue --input "$input" --base-url "$base" 2>>"$tmp/run.log") ;;
	floor) got=$("${floor[@]}" -base-url "$base" 2>>"$tmp/run.log") ;;
	esac || fail "$cmd failed: $(cat "$tmp/run.log" "$tmp/server.log")"
	[ "$got" = "$want" ] || fail "$cmd answered $got, want $want"
done
stop_server
# The peer asks for the answer in its prompt, not through a tool, so its
# request differs; its own tests check its messages against the floor's.
start_server
got=$("${peer[@]}" -base-url "$base" 2>>"$tmp/run.log") || fail "the peer failed: $(tail -n 20 "$tmp/run.log" "$tmp/server.log")"
[ "$got" = "$want" ] || fail "the peer answered $got, want $want"
stop_server
(cd "$work/example" && "$tmp/cue" vet -c schema.cue agent.cue) || fail "cue vet of the example failed"
(cd "$work/tree" && "$tmp/cue" vet -c ./...) || fail "cue vet of the 1,000 manifests failed"
(cd "$work/n100/tree" && "$tmp/cue" vet -c ./...) || fail "cue vet of the 100 manifests failed"
"$tmp/agentc" vet examples/issue-triage.cue "$work/flat" "$work/n100/flat" >&2 || fail "agentc vet failed"

# The replayed runs: one of $tool_rounds lookups and one of a single
# lookup, each recorded against the server once.
log "recording a run of $tool_rounds tool rounds, and one of 1, to replay"
for r in "$tool_rounds" 1; do
	start_server -tool-rounds "$r"
	"$tmp/agentc" run bench/testdata/replay.cue --input "$input" --base-url "$base" --record "$work/replay-$r.jsonl" \
		>/dev/null 2>>"$tmp/run.log" || fail "recording the run of $r tool rounds failed: $(tail -n 20 "$tmp/run.log")"
	stop_server
	got=$("$tmp/agentc" run bench/testdata/replay.cue --input "$input" --replay "$work/replay-$r.jsonl" 2>>"$tmp/run.log") ||
		fail "replaying the run of $r tool rounds failed: $(tail -n 20 "$tmp/run.log")"
	[ "$got" = "$want" ] || fail "the replay of $r tool rounds answered $got, want $want"
done

# free_port: a loopback port no one listens on.
free_port() {
	local p
	for _ in $(seq 100); do
		p=$((20000 + RANDOM % 30000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	fail "found no free loopback port"
}

# Temporal's dev server, as the tests start it (internal/devserver): its
# polls quick, activities dispatched eagerly, agentc's search attributes
# registered; and a worker of agentc's beside it, answered by the server.
start_temporal() {
	local attempt
	for attempt in 1 2 3; do
		temporal_addr="127.0.0.1:$(free_port)"
		local args=(server start-dev --headless --ip 127.0.0.1 --port "${temporal_addr#*:}" --http-port "$(free_port)"
			--log-level error --dynamic-config-value history.transferProcessorMaxPollRPS=1000
			--dynamic-config-value system.enableActivityEagerExecution=true)
		for a in AgentcAgent AgentcPlan AgentcContract AgentcOutcome AgentcBound; do
			args+=(--search-attribute "$a=Keyword")
		done
		"$temporal_cli" "${args[@]}" >>"$tmp/temporal.log" 2>&1 &
		temporal_pid=$!
		for _ in $(seq 600); do
			if "$temporal_cli" operator cluster health --address "$temporal_addr" >/dev/null 2>&1; then
				return 0
			fi
			kill -0 "$temporal_pid" 2>/dev/null || break
			sleep 0.1
		done
		stop temporal_pid
		log "Temporal's dev server did not start on $temporal_addr (attempt $attempt)"
	done
	fail "Temporal's dev server did not start: $(tail -n 20 "$tmp/temporal.log")"
}
log "starting Temporal's dev server and an agentc worker"
start_temporal

start_server
"$tmp/agentc" worker --temporal "$temporal_addr" --allow "$work/plan.json" --base-url "$base" >>"$tmp/worker.log" 2>&1 &
worker_pid=$!
# A run on Temporal waits for a worker: bounded, so that a worker that
# could not start fails the harness rather than hanging it.
got=$(timeout 120 "$tmp/agentc" run bench/testdata/agent.cue --temporal "$temporal_addr" --input "$input" 2>>"$tmp/run.log") ||
	fail "the run on Temporal failed: $(tail -n 20 "$tmp/run.log" "$tmp/worker.log")"
kill -0 "$worker_pid" 2>/dev/null || fail "the worker stopped: $(tail -n 20 "$tmp/worker.log")"
[ "$got" = "$want" ] || fail "the run on Temporal answered $got, want $want"

base_q=$(q "$base")
load_before=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo "?")

# pair ID DIR RUNS AGENTC-COMMAND FLOOR-COMMAND
pair() {
	local id=$1 dir=$2 n=$3 agentc=$4 floor=$5
	log "pair $id: $agentc  vs  $floor"
	if [ "$timing" = 0 ]; then
		(cd "$dir" && eval "$agentc" >/dev/null 2>>"$tmp/run.log" && eval "$floor" >/dev/null 2>>"$tmp/run.log") ||
			fail "pair $id failed: $(tail -n 20 "$tmp/run.log")"
		return
	fi
	(
		cd "$dir"
		# In blocks, the two commands taking turns: load that drifts
		# while a pair is timed weighs on both.
		local b k=$(( (n + blocks - 1) / blocks ))
		for b in $(seq "$blocks"); do
			local w=$warmup
			[ "$b" = 1 ] || w=1
			hyperfine -N --style basic --warmup "$w" --runs "$k" --export-json "$res/$id.$b.json" \
				-n agentc "$agentc" -n floor "$floor" >&2
		done
		for i in $(seq "$rss_runs"); do
			eval "/usr/bin/time -v -o $(q "$res/$id.agentc.time.$i") $agentc" >/dev/null 2>>"$tmp/run.log"
			eval "/usr/bin/time -v -o $(q "$res/$id.floor.time.$i") $floor" >/dev/null 2>>"$tmp/run.log"
		done
	) || fail "pair $id failed: $(tail -n 20 "$tmp/run.log")"
}

agentc_q=$(q "$tmp/agentc")
runtime_q=$(q "$tmp/agentc-runtime")
cue_q=$(q "$tmp/cue")
floor_q="$(q "$tmp/floor") -request $(q "$root/bench/testdata/floor.json") -schema $(q "$root/bench/testdata/schema.json") -base-url $base_q"
peer_q="$(q "$tmp/peer") -prompt $(q "$root/bench/testdata/bench.prompt") -input $(q "$root/bench/testdata/input.json") -base-url $base_q"
pair vet-example "$work/example" "$runs" \
	"$agentc_q vet $(q "$root/examples/issue-triage.cue")" \
	"$cue_q vet -c schema.cue agent.cue"
pair vet-dir100 "$work/n100/tree" "$runs_dir" \
	"$agentc_q vet ../flat" \
	"$cue_q vet -c ./..."
pair vet-dir1000 "$work/tree" "$runs_dir" \
	"$agentc_q vet ../flat" \
	"$cue_q vet -c ./..."
pair run-plan "$root" "$runs" \
	"$runtime_q run $(q "$work/plan.json") --input $(q "$input") --base-url $base_q" \
	"$floor_q"
pair run-manifest "$root" "$runs" \
	"$agentc_q run bench/testdata/agent.cue --input $(q "$input") --base-url $base_q" \
	"$floor_q"
pair replay "$root" "$runs" \
	"$agentc_q run bench/testdata/replay.cue --input $(q "$input") --replay $(q "$work/replay-$tool_rounds.jsonl")" \
	"$agentc_q run bench/testdata/replay.cue --input $(q "$input") --replay $(q "$work/replay-1.jsonl")"
pair temporal "$root" "$runs" \
	"$agentc_q run bench/testdata/agent.cue --input $(q "$input") --temporal $(q "$temporal_addr")" \
	"$agentc_q run bench/testdata/agent.cue --input $(q "$input") --base-url $base_q"
pair peer-plan "$root" "$runs" \
	"$runtime_q run $(q "$work/plan.json") --input $(q "$input") --base-url $base_q" \
	"$peer_q"
pair peer-manifest "$root" "$runs" \
	"$agentc_q run bench/testdata/agent.cue --input $(q "$input") --base-url $base_q" \
	"$peer_q"
stop worker_pid
stop temporal_pid
stop_server
load_after=$(cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo "?")
if [ "$timing" = 0 ]; then
	log "done in ${SECONDS}s: every command works; no timing was taken"
	exit 0
fi

# count N WORD: "1 WORD" or "N WORDs".
count() { if [ "$1" = 1 ]; then echo "1 $2"; else echo "$1 $2s"; fi; }
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2>/dev/null | head -n 1)
commit=$(git rev-parse --short HEAD 2>/dev/null || true)
if [ -n "$commit" ] && [ -n "$(git status --porcelain 2>/dev/null)" ]; then
	commit="$commit with local changes"
fi
command="bash bench/run.sh"
[ "$short" = 1 ] && command="$command --short"
[ "$write" = 1 ] && command="$command --write"
{
	echo "Date: $(date -u +%Y-%m-%d)"
	echo "Mode: $mode: each command timed $(count "$runs" time) ($runs_dir for pairs 2 and 2a) in $(count "$blocks" block) alternating with its floor's, after $(count "$warmup" "warm-up run"); peak RSS the largest of $(count "$rss_runs" run)"
	echo "Machine: $(uname -srm), $(nproc) cores${cpu:+, $cpu}; 1-minute load average $load_before before timing, $load_after after"
	echo "Versions: $(go env GOVERSION), cue $cue_version, $(hyperfine --version)${commit:+, agentc at $commit}"
	echo "Command: \`$command\`"
} >"$tmp/env"

if [ "$write" = 1 ]; then
	"$tmp/report" -results "$res" -env "$tmp/env" -write BENCHMARKS.md
	log "wrote the table to BENCHMARKS.md"
else
	"$tmp/report" -results "$res" -env "$tmp/env"
fi
log "done in ${SECONDS}s"
