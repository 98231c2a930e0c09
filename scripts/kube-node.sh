#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, for the showcase: `make
# kube-up` and `make kube-down` call it.
#
#   kube-node.sh up      bring the node up (NODES=N: and N-1 worker nodes
#                        beside it), load the images, apply OVERLAY,
#                        wait until every Deployment is Available, forward
#                        one gateway Pod's API to 127.0.0.1:PORT and its
#                        admin port to 127.0.0.1:ADMIN_PORT; OVERLAY=none:
#                        the node alone, no image but its pause loaded, for
#                        a workload installed otherwise (the Helm chart);
#                        REGISTRY=HOST_IP:PORT: containerd may pull from
#                        that registry (registry-hosts.toml)
#   kube-node.sh down    stop and remove everything up made
#   kube-node.sh status  say whether it is up, and where
#   kube-node.sh prometheus      run Prometheus in the node (deploy/k8s/prometheus),
#                        discovering the Pods itself; its API forwarded to
#                        127.0.0.1:PROM_PORT
#   kube-node.sh load IMAGE...   import Docker images into every node
#   kube-node.sh exec CMD...     run CMD in the node's network namespace
#   kube-node.sh on NODE CMD...  run CMD in NODE's namespaces (a worker's too)
#   kube-node.sh lose NODE       take the worker NODE away as a power cut
#                        would: its link down and every process of it
#                        killed at once; its Node object is left to the
#                        control plane, which marks it NotReady
#   kube-node.sh restart NAME    stop one of the node's daemons and start it
#                        again as up did (kube-router, on every node;
#                        metrics-server, kube-scheduler,
#                        kube-controller-manager)
#   kube-node.sh render FILE     a file of deploy/kube-node as up fills it in
#
# The node lives in namespaces of its own, held by one process (the pause
# program): a network namespace joined to the host only by a veth pair
# (host 10.243.255.1, node 10.243.255.2), with no default route, so nothing
# in it can reach past the host's end of that link; and a mount namespace
# whose mounts never propagate to the host, so they all go when its last
# process does. In it: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, CoreDNS, a containerd of its own (Docker's is left
# alone), kubelet, kube-proxy and metrics-server (behind the API server's
# aggregation layer, for the gateway's autoscaler) and kube-router's
# firewall (the NetworkPolicies, enforced before the first Pod of ours
# starts). Pods sit on a CNI bridge (10.244.0.0/24,
# no masquerade); a raw-table fence, in place before containerd starts,
# drops every packet from the bridge that is not for a Pod, a Service or
# the node itself. What touches the host outside that is recorded and
# undone by down: the sysctls kubelet rewrites, the cgroups under
# /defect-showcase, the mount points it may create (/run/containerd,
# /var/lib/cni, /var/lib/kubelet), the images it builds into Docker, and
# SHOWCASE_KUBE_ROOT (everything on disk). up interrupted (Ctrl-C,
# SIGTERM, SIGHUP) or failing takes down what it made.
#
# NODES=N (default 1) adds N-1 worker nodes, showcase-worker-1 and on, each
# in namespaces of its own held by its own pause process, with its own
# containerd, kubelet, kube-proxy, kube-router's firewall and fence, its
# files under ROOT/nodes/NAME and its cgroups under /defect-showcase/NAME.
# The nodes are joined by a network of their own (10.243.254.0/24): a
# bridge in one more namespace (the LAN's, held by a pause process), each
# node's lan0 a port of it, each node a route to every other node's Pods
# (10.244.K.0/24 on node K, no overlay, no masquerade). Only the control
# plane's node has a link to the host; the workers reach the API server and
# the cluster's DNS at its address, through it.
#
# The node's configuration is in files of its own, deploy/kube-node: the
# programs' flags (*.flags), the kubelet's, kube-proxy's, containerd's,
# the CNI's and CoreDNS's files, the fence, the RBAC of the node's own
# components; ${NAME} in them is filled in by render (envsubst).
set -euo pipefail
umask 022

repo=$(cd "$(dirname "$0")/.." && pwd)
KUBE_VERSION=v1.34.2
ROOT=${SHOWCASE_KUBE_ROOT:-/var/lib/defect-showcase-kube}
BIN=${SHOWCASE_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/defect-showcase/kube-$KUBE_VERSION}
OVERLAY=${OVERLAY:-base}
REGISTRY=${REGISTRY:-}
PORT=${PORT:-8080}
ADMIN_PORT=${ADMIN_PORT:-9090}
PROM_PORT=${PROM_PORT:-9099}
TAG=${SHOWCASE_TAG:-latest}
PREFIX=${IMAGE_PREFIX:-defect-showcase}
NS=showcase

NODES=${NODES:-1}
NODE=showcase-node
HOST_IF=showcase-kube # the host's end of the link
HOST_IP=10.243.255.1
NODE_IP=10.243.255.2
CONTROL_IP=$NODE_IP # the control plane's node: the API server, the cluster's DNS
POD_CIDR=10.244.0.0/24
CLUSTER_CIDR=10.244.0.0/16 # every node's Pods: node K's are 10.244.K.0/24
LAN_CIDR=10.243.254.0/24   # the nodes' own network: node K is 10.243.254.(K+1)
SVC_CIDR=10.96.0.0/16
SVC_API=10.96.0.1
CGROUP=defect-showcase
# The node a function works on: the control plane's (K=0) unless node_env
# set another's. NODE_ROOT holds its own files (pids, logs, containerd, its
# kubelet's certificate), ROOT what the cluster shares.
NODE_K=0
NODE_ROOT=$ROOT
NODE_CGROUP=$CGROUP
MARK=.defect-showcase-kube # ROOT is removed only when it holds this file
# What kubelet rewrites at start (kubeadm's and kind's nodes let it): put back by down.
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
DAEMONS=(prometheus-forward port-forward kube-router metrics-server kubelet kube-proxy coredns kube-scheduler kube-controller-manager kube-apiserver containerd etcd)
# A worker's: the node's daemons without the control plane.
WORKER_DAEMONS=(kube-router kubelet kube-proxy containerd)
# Paths on the host's own file system that containerd and kubelet write
# whatever their configuration says (shim sockets and runc state, the CNI
# cache, the kubelet's device-plugin socket): each is a private tmpfs in the
# node's mount namespace; the empty mount point, if up had to make it, is
# removed by down.
PRIVATE=(/run/containerd /var/lib/cni /var/lib/kubelet)
CONF=$repo/deploy/kube-node
# kubectl's cache stays with the node (not ~/.kube/cache), for every
# kubectl this script starts.
export KUBECACHEDIR=$ROOT/kube-cache
# The names render fills in.
export ROOT NODE NODE_IP HOST_IP POD_CIDR SVC_CIDR PREFIX TAG CGROUP REGISTRY NODE_ROOT NODE_CGROUP CONTROL_IP CLUSTER_CIDR LAN_CIDR
RENDERED='${ROOT} ${NODE} ${NODE_IP} ${HOST_IP} ${POD_CIDR} ${SVC_CIDR} ${PREFIX} ${TAG} ${CGROUP} ${KUBE_USER} ${KUBE_TOKEN} ${NAMESPACE} ${CA_BUNDLE} ${REGISTRY} ${NODE_ROOT} ${NODE_CGROUP} ${CONTROL_IP} ${CLUSTER_CIDR} ${LAN_CIDR}'

# node_env K: the variables of node K, for what follows in this (sub)shell:
# 0 is the control plane's node, 1 to NODES-1 the workers.
node_env() {
	NODE_K=$1
	if (($1 == 0)); then
		NODE_IP=$CONTROL_IP NODE_CGROUP=$CGROUP
	else
		NODE_IP=$(lan_ip "$1") NODE_CGROUP=$CGROUP/$(node_name "$1")
	fi
	NODE=$(node_name "$1") NODE_ROOT=$(node_root "$1")
	POD_CIDR=10.244.$1.0/24
}
lan_ip() { echo "10.243.254.$(($1 + 1))"; }
node_name() { if (($1 == 0)); then echo showcase-node; else echo "showcase-worker-$1"; fi; }
node_root() { if (($1 == 0)); then echo "$ROOT"; else echo "$ROOT/nodes/$(node_name "$1")"; fi; }
# on_node K CMD...: CMD with node K's variables, in a subshell.
on_node() {
	local k=$1
	shift
	(
		node_env "$k"
		"$@"
	)
}
# each_node CMD...: CMD on every node in turn, the control plane's first.
each_node() {
	local k
	for ((k = 0; k < NODES; k++)); do on_node "$k" "$@"; done
}
# workers_made: the K of each worker whose folder exists (down);
# workers_up: of those, each not lost (load, restart).
workers_made() {
	local d
	for d in "$ROOT"/nodes/showcase-worker-*; do
		[ -d "$d" ] && echo "${d##*-}"
	done
	return 0
}
workers_up() {
	local k
	for k in $(workers_made); do
		[ -f "$(node_root "$k")/lost" ] || echo "$k"
	done
}

say() { echo "kube-node: $*" >&2; }
die() {
	say "$*"
	exit 1
}
kubectl() { "$BIN/kubectl" --kubeconfig "$ROOT/admin.kubeconfig" "$@"; }
# render FILE: deploy/kube-node/FILE with the node's values filled in; any
# other $ stays as it is.
render() { envsubst "$RENDERED" <"$CONF/$1"; }
# flags NAME: the flags of deploy/kube-node/NAME.flags, rendered, one an
# element of the array FLAGS (comments and blank lines left out).
flags() { mapfile -t FLAGS < <(render "$1.flags" | grep -v -e '^[[:space:]]*#' -e '^[[:space:]]*$'); }
# stage WHAT: say which part of up starts now (a test interrupts up at them).
stage() { say "up: $*"; }
anchor_pid() { cat "$NODE_ROOT/pids/node" 2>/dev/null || true; }
lan_pid() { cat "$ROOT/pids/lan" 2>/dev/null || true; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
anchored() { [ "$(readlink "/proc/${1:-$(anchor_pid)}/exe" 2>/dev/null)" = "$ROOT/bin/pause" ]; }
# exited PID: the process is gone, a zombie, or another program. Not the
# same as ! anchored: a killed process lets go of its executable (its
# memory) before it lets go of its namespaces, and only then is a zombie.
exited() {
	local stat comm
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	case ${stat##*) } in Z* | X*) return 0 ;; esac
	comm=${stat#*(}
	[ "${comm%%)*}" != pause ]
}
is_up() { alive "$(anchor_pid)" && [ -f "$ROOT/up" ]; }
in_node() { nsenter -t "$(anchor_pid)" -n -m -- "$@"; }
in_lan() { nsenter -t "$(lan_pid)" -n -- "$@"; }

# start NAME CMD...: a daemon in the node's namespaces, in a session of its
# own (it outlives make), its output in ROOT/logs/NAME.log. start_host: the
# same on the host.
start() {
	local name=$1
	shift
	start_host "$name" nsenter -t "$(anchor_pid)" -n -m -- "$@"
}
# start_daemon NAME: NAME's program with the flags of NAME.flags, in the
# node (kube-router's, metrics-server's and the control plane's).
start_daemon() {
	local name=$1 prog=$BIN/$1
	[ "$name" != etcd ] || prog=etcd
	flags "$name"
	start "$name" "$prog" "${FLAGS[@]}"
}
start_host() {
	local name=$1
	shift
	# Started in the background by a shell without job control, setsid
	# need not fork: $! is the daemon's own PID.
	(exec setsid "$@" </dev/null >>"$NODE_ROOT/logs/$name.log" 2>&1) &
	echo $! >"$NODE_ROOT/pids/$name"
}

# wait_for WHAT SECONDS CMD...: until CMD succeeds, or show the logs and fail.
wait_for() {
	local what=$1 limit=$2 i
	shift 2
	for ((i = 0; i < limit * 4; i++)); do
		if "$@" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.25
	done
	say "$what: not ready after ${limit}s"
	for f in "$ROOT"/logs/*.log "$ROOT"/nodes/*/logs/*.log; do
		[ -f "$f" ] || continue
		echo "--- $f (end)" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}

require() {
	local missing=()
	[ "$(id -u)" = 0 ] || die "needs root (network and mount namespaces, cgroups, iptables)"
	for c in containerd ctr runc nsenter unshare ip iptables iptables-restore ip6tables-restore ipset openssl etcd docker go envsubst; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns metrics-server kube-router; do
		[ -x "$BIN/$c" ] || missing+=("$BIN/$c")
	done
	for c in bridge host-local loopback; do
		[ -x "/usr/lib/cni/$c" ] || missing+=("/usr/lib/cni/$c")
	done
	((${#missing[@]} == 0)) || die "missing: ${missing[*]} (scripts/kube-deps.sh installs and builds them)"
	docker info >/dev/null 2>&1 || die "no Docker engine answers (the images are built and saved with it)"
}

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# recorded KEY: KEY's value in up's record (ROOT/up, lines KEY=VALUE):
# read as data, never sourced.
recorded() { sed -n "s/^$1=//p" "$ROOT/up" 2>/dev/null | head -n 1; }

status() {
	if is_up && [ "$(recorded overlay)" = none ]; then
		local reg
		reg=$(recorded registry)
		echo "kube-node: up (no workload, OVERLAY=none; Kubernetes $KUBE_VERSION)${reg:+, pulling from $reg}"
		nodes_said
		echo "KUBECONFIG=$ROOT/admin.kubeconfig"
		return 0
	fi
	if is_up; then
		echo "kube-node: up (overlay $(recorded overlay), Kubernetes $KUBE_VERSION): API http://127.0.0.1:$(recorded port), admin http://127.0.0.1:$(recorded admin_port) (Pod $(recorded pod))"
		[ -z "$(recorded prom_port)" ] || echo "kube-node: Prometheus http://127.0.0.1:$(recorded prom_port)"
		nodes_said
		echo "KUBECONFIG=$ROOT/admin.kubeconfig"
		return 0
	fi
	echo "kube-node: not up"
	return 3
}

# nodes_said: the nodes, where there are more than one.
nodes_said() {
	local k names=showcase-node
	for k in $(workers_made); do
		names+=" $(node_name "$k")"
		[ ! -f "$(node_root "$k")/lost" ] || names+=" (lost)"
	done
	[ "$names" = showcase-node ] || echo "kube-node: nodes $names (the first runs the control plane)"
}

# ---------------------------------------------------------------- up

pki() {
	local d=$ROOT/pki
	mkdir -p "$d"
	openssl ecparam -name prime256v1 -genkey -noout -out "$d/ca.key" 2>/dev/null
	openssl req -x509 -new -key "$d/ca.key" -subj "/CN=defect-showcase-kube-ca" -days 365 -out "$d/ca.crt" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	# The aggregation layer's own CA: the API server proves with it, to
	# metrics-server, whom it forwards a request for.
	openssl ecparam -name prime256v1 -genkey -noout -out "$d/front-proxy-ca.key" 2>/dev/null
	openssl req -x509 -new -key "$d/front-proxy-ca.key" -subj "/CN=defect-showcase-kube-front-proxy-ca" -days 365 -out "$d/front-proxy-ca.crt" \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
	# issue NAME SUBJECT EXTENDED-USAGE [SANS], signed by CA (default ca)
	issue() {
		local ca=${CA:-ca}
		openssl ecparam -name prime256v1 -genkey -noout -out "$d/$1.key" 2>/dev/null
		openssl req -new -key "$d/$1.key" -subj "$2" -out "$d/$1.csr" 2>/dev/null
		{
			echo "keyUsage=critical,digitalSignature"
			echo "extendedKeyUsage=$3"
			[ -z "${4:-}" ] || echo "subjectAltName=$4"
		} >"$d/$1.ext"
		openssl x509 -req -in "$d/$1.csr" -CA "$d/$ca.crt" -CAkey "$d/$ca.key" -CAcreateserial -days 365 \
			-extfile "$d/$1.ext" -out "$d/$1.crt" 2>/dev/null
		rm -f "$d/$1.csr" "$d/$1.ext"
	}
	issue apiserver "/CN=kube-apiserver" serverAuth \
		"IP:$NODE_IP,IP:$SVC_API,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
	issue apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
	# Each node's kubelet serves with a certificate of its own, kept with the node.
	local k
	for ((k = 0; k < NODES; k++)); do
		# shellcheck disable=SC2016 # expanded in node k's subshell
		on_node "$k" eval 'issue "kubelet-$NODE_K" "/CN=$NODE" serverAuth "IP:$NODE_IP,DNS:$NODE"'
		mkdir -p "$(node_root "$k")/pki"
		mv "$d/kubelet-$k.key" "$(node_root "$k")/pki/kubelet.key"
		mv "$d/kubelet-$k.crt" "$(node_root "$k")/pki/kubelet.crt"
		chmod 600 "$(node_root "$k")/pki/kubelet.key"
	done
	issue metrics-server "/CN=metrics-server" serverAuth "DNS:metrics-server.kube-system.svc,IP:$NODE_IP"
	CA=front-proxy-ca issue front-proxy-client "/CN=front-proxy-client" clientAuth
	openssl ecparam -name prime256v1 -genkey -noout -out "$d/sa.key" 2>/dev/null
	openssl ec -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
	chmod 600 "$d"/*.key

	# One token per component, each with the identity Kubernetes' default
	# RBAC knows; the admin's is the user's (and CoreDNS's). Each node's
	# kubelet has its own (the Node authorizer keeps it to its node), kept
	# with the node; the other nodes' kube-proxy and kube-router share the
	# first's.
	local user tok
	: >"$ROOT/tokens.csv"
	for user in admin kube-proxy kube-scheduler kube-controller-manager metrics-server kube-router; do
		tok=$(openssl rand -hex 24)
		case $user in
		admin) echo "$tok,admin,admin,system:masters" ;;
		metrics-server) echo "$tok,system:metrics-server,metrics-server" ;;
		*) echo "$tok,system:$user,$user" ;;
		esac >>"$ROOT/tokens.csv"
		KUBE_USER=$user KUBE_TOKEN=$tok render kubeconfig.yaml >"$ROOT/$user.kubeconfig"
	done
	for ((k = 0; k < NODES; k++)); do
		tok=$(openssl rand -hex 24)
		user=$(node_name "$k")
		echo "$tok,system:node:$user,$user,system:nodes" >>"$ROOT/tokens.csv"
		KUBE_USER=kubelet KUBE_TOKEN=$tok render kubeconfig.yaml >"$(node_root "$k")/kubelet.kubeconfig"
		chmod 600 "$(node_root "$k")/kubelet.kubeconfig"
	done
	chmod 600 "$ROOT/tokens.csv" "$ROOT"/*.kubeconfig
}

# namespaces: the node's namespaces, held by one pause process.
namespaces() {
	mkdir -p "$NODE_ROOT"/{pids,logs}
	start_host node unshare --net --mount --propagation slave -- "$ROOT/bin/pause"
	wait_for "$NODE's namespaces" 10 anchored
}

# lan: the nodes' own network (NODES > 1), before any node's: a bridge in
# a network namespace of its own, held by a pause process, IPv6 off, its
# bridged packets not passed to iptables (it has none).
lan() {
	start_host lan unshare --net -- "$ROOT/bin/pause"
	wait_for "the nodes' network" 10 anchored "$(lan_pid)"
	in_lan sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	in_lan ip link set lo up
	in_lan ip link add br0 type bridge
	in_lan sysctl -qw net.bridge.bridge-nf-call-iptables=0 net.bridge.bridge-nf-call-ip6tables=0
	in_lan ip link set br0 up
}

# lan_port: the node's lan0, a port of the LAN's bridge, with the node's
# address there and a route to every other node's Pods; a worker's route
# to the control plane's node (the API server, the cluster's DNS) is
# through the control plane's lan0.
lan_port() {
	local j
	in_lan ip link add "n$NODE_K" type veth peer name lan0 netns "$(anchor_pid)"
	in_lan ip link set "n$NODE_K" master br0
	in_lan ip link set "n$NODE_K" up
	in_node sysctl -qw net.ipv6.conf.lan0.disable_ipv6=1
	in_node ip addr add "$(lan_ip "$NODE_K")/24" dev lan0
	in_node ip link set lan0 up
	for ((j = 0; j < NODES; j++)); do
		((j == NODE_K)) || in_node ip route add "10.244.$j.0/24" via "$(lan_ip "$j")" dev lan0
	done
	((NODE_K == 0)) || in_node ip route add "$CONTROL_IP/32" via "$(lan_ip 0)" dev lan0
}

# The node's network: the link to the host (the control plane's node), the
# port on the nodes' network (NODES > 1), and the fence, all before
# anything of Kubernetes runs.
network() {
	in_node sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	in_node ip link set lo up
	if ((NODE_K == 0)); then
		ip link add "$HOST_IF" type veth peer name "$HOST_IF-n"
		ip link set "$HOST_IF-n" netns "$(anchor_pid)"
		# The host's end speaks IPv4 to the node only: no IPv6 chatter on the link.
		sysctl -qw "net.ipv6.conf.$HOST_IF.disable_ipv6=1"
		ip addr add "$HOST_IP/30" dev "$HOST_IF"
		ip link set "$HOST_IF" up
		in_node ip link set "$HOST_IF-n" name eth0
		in_node sysctl -qw net.ipv6.conf.eth0.disable_ipv6=1
		in_node ip addr add "$NODE_IP/30" dev eth0
		in_node ip link set eth0 up
	fi
	((NODES == 1)) || lan_port
	# Pods are routed by the node (kube-proxy's Services need it), and
	# bridged traffic passes iptables (a Service's answer from a Pod on the
	# same bridge must be un-NATed): both sysctls are the node's own.
	in_node sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
	# The fence (deploy/kube-node/fence.rules, fence6.rules): from the
	# bridge only to Pods, Services and the nodes; from the node only to
	# the host's end of the link and the other nodes; nothing forwarded
	# off the cluster.
	render fence.rules | in_node iptables-restore -w --noflush
	render fence6.rules | in_node ip6tables-restore -w --noflush
	# The node's own clients (a load test run in it) reach Services: a
	# route for their range, which kube-proxy's NAT turns into a Pod's
	# address; one it does not is dropped by the rules above.
	if ((NODE_K == 0)); then
		in_node ip route add "$SVC_CIDR" dev eth0
	else
		in_node ip route add "$SVC_CIDR" dev lan0
	fi
	# Proven before anything starts: no default route, the fence in place.
	[ -z "$(in_node ip route show default)" ] || die "$NODE has a default route"
	in_node iptables -w -t raw -C PREROUTING -i cni0 -j SHOWCASE-FENCE || die "the fence is not in place on $NODE"
}

# Private mounts for the paths containerd and kubelet write regardless of
# their configuration (PRIVATE), and for Pod logs and their links
# (/var/log, which exists everywhere).
private_mounts() {
	local p
	# The control plane's node mounts first: what it makes is made.
	((NODE_K > 0)) || : >"$ROOT/made-on-host"
	# mount(8) keeps its userspace table in /run/mount, the host's /run:
	# made by the first mount below if the host has none, and removed by down.
	[ -e /run/mount ] || echo /run/mount >>"$ROOT/made-on-host"
	for p in "${PRIVATE[@]}"; do
		if [ ! -e "$p" ]; then
			# Recorded before it is made: an up interrupted in between
			# leaves nothing down does not know of.
			echo "$p" >>"$ROOT/made-on-host"
			mkdir "$p"
		fi
		in_node mount -t tmpfs -o mode=0755 "$NODE" "$p"
	done
	in_node mount -t tmpfs -o mode=0755 "$NODE" /var/log
}

save_sysctls() {
	local s
	: >"$ROOT/sysctls"
	for s in "${SYSCTLS[@]}"; do
		echo "$s=$(sysctl -n "$s")" >>"$ROOT/sysctls"
	done
}

# hierarchies: the cgroup hierarchies (cgroup v1: one per controller, as
# here; v2: the one). cgroup_dirs: the node's group in each, where it exists.
hierarchies() {
	if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then
		echo /sys/fs/cgroup
	else
		find /sys/fs/cgroup -mindepth 1 -maxdepth 1 -type d
	fi
}
cgroup_dirs() {
	local h
	for h in $(hierarchies); do
		[ ! -d "$h/$CGROUP" ] || echo "$h/$CGROUP"
	done
}

# cgroups: the node's group in each hierarchy (a worker's inside the
# control plane's node's, which is made first).
cgroups() {
	local h c=/sys/fs/cgroup/cpuset/$NODE_CGROUP
	for h in $(hierarchies); do
		mkdir -p "$h/$NODE_CGROUP"
	done
	# cpuset: a new group starts with no CPUs or memory nodes; copy the parent's.
	if [ -d "$c" ]; then
		cat "$(dirname "$c")/cpuset.cpus" >"$c/cpuset.cpus"
		cat "$(dirname "$c")/cpuset.mems" >"$c/cpuset.mems"
	fi
}

control_plane() {
	start_daemon etcd
	wait_for etcd 30 in_node bash -c 'exec 3<>/dev/tcp/127.0.0.1/2379 && printf "GET /health HTTP/1.0\r\n\r\n" >&3 && grep -q "\"health\":\"true\"" <&3'
	start_daemon kube-apiserver
	wait_for kube-apiserver 90 kubectl get --raw /readyz
	start_daemon kube-controller-manager
	start_daemon kube-scheduler
	render Corefile >"$ROOT/Corefile"
	start coredns "$BIN/coredns" -conf "$ROOT/Corefile"
}

# runtime: the node's containerd (runtime_ready waits for it).
runtime() {
	mkdir -p "$NODE_ROOT/cni/net.d"
	render cni.conflist >"$NODE_ROOT/cni/net.d/10-showcase.conflist"
	render containerd.toml >"$NODE_ROOT/containerd.toml"
	mkdir -p "$NODE_ROOT/registry.d"
	if [ -n "$REGISTRY" ]; then
		mkdir -p "$NODE_ROOT/registry.d/$REGISTRY"
		render registry-hosts.toml >"$NODE_ROOT/registry.d/$REGISTRY/hosts.toml"
	fi
	start containerd containerd --config "$NODE_ROOT/containerd.toml"
}
runtime_ready() { wait_for "$NODE's containerd" 30 ctr --address "$NODE_ROOT/containerd.sock" version; }

# load IMAGE...: Docker's images into every node's containerd (nothing can
# be pulled here), saved once.
load() {
	((${#@})) || return 0
	local tar=$ROOT/images.tar k
	docker save -o "$tar" "$@"
	for k in 0 $(workers_up); do
		ctr --address "$(node_root "$k")/containerd.sock" -n k8s.io images import "$tar" >/dev/null
	done
	rm -f "$tar"
}

# build_image REF DOCKER-BUILD-ARGS...: an image of the node's own (the
# pause image, Prometheus's), labelled as such; recorded for down, which
# removes only what carries the label. A user's own image at REF is never
# built over.
IMAGE_LABEL=org.defect-showcase.kube-node
build_image() {
	local ref=$1 out
	shift
	if docker image inspect "$ref" >/dev/null 2>&1 && [ -z "$(image_ours "$ref")" ]; then
		die "an image $ref exists and is not kube-node's: choose another IMAGE_PREFIX or SHOWCASE_TAG"
	fi
	echo "$ref" >>"$ROOT/built-images"
	out=$(docker build -q --label "$IMAGE_LABEL=1" -t "$ref" "$@" 2>&1) || die "docker build of $ref: $out"
}
image_ours() { docker image inspect -f "{{index .Config.Labels \"$IMAGE_LABEL\"}}" "$1" 2>/dev/null || true; }

images() {
	build_image "$PREFIX/pause:$TAG" --target prebuilt --build-arg SERVICE=showcase-pause "$repo"
	local imgs=("$PREFIX/pause:$TAG") svc
	if [ "$OVERLAY" = none ]; then
		load "${imgs[@]}"
		return
	fi
	# The workload's, and for trials as Jobs the agent's and the reference
	# tool's: a node with no registry runs what it was given.
	for svc in gateway security-svc errors-svc conformance-svc performance-svc showcase-agent showcase-replay; do
		docker image inspect "$PREFIX/$svc:$TAG" >/dev/null 2>&1 || die "no image $PREFIX/$svc:$TAG: make images SHOWCASE_TAG=$TAG builds it"
		imgs+=("$PREFIX/$svc:$TAG")
	done
	load "${imgs[@]}"
}

# node: the node's kube-proxy and kubelet (node_ready waits for the node).
node() {
	render kubelet.yaml >"$NODE_ROOT/kubelet.yaml"
	: >"$NODE_ROOT/resolv.conf"
	render kube-proxy.yaml >"$NODE_ROOT/kube-proxy.yaml"
	start kube-proxy "$BIN/kube-proxy" --config "$NODE_ROOT/kube-proxy.yaml"
	start kubelet "$BIN/kubelet" --config "$NODE_ROOT/kubelet.yaml" --kubeconfig "$NODE_ROOT/kubelet.kubeconfig" \
		--root-dir "$NODE_ROOT/kubelet" --hostname-override "$NODE" --node-ip "$NODE_IP"
}
node_ready() {
	wait_for "the node $NODE" 60 kubectl get node "$NODE"
	kubectl wait --for=condition=Ready "node/$NODE" --timeout=60s >/dev/null
}

# firewall: kube-router's firewall, which enforces the NetworkPolicies
# (iptables and ipset in the node's namespace), as a user of its own
# (deploy/kube-node/kube-router.yaml); ready when its chains hook the
# node's FORWARD, before any Pod of ours starts.
firewall() {
	render kube-router.yaml | kubectl apply --server-side -f - >/dev/null
	wait_for "kube-router's RBAC" 30 kubectl auth can-i list networkpolicies.networking.k8s.io --all-namespaces --as system:kube-router
	each_node start_daemon kube-router
	each_node wait_for "kube-router's firewall" 60 firewall_synced
}
# firewall_synced: kube-router is alive, has finished a sync since it
# started (its log, at -v 1, says so) and its chains hook FORWARD.
firewall_synced() {
	alive "$(cat "$NODE_ROOT/pids/kube-router" 2>/dev/null)" &&
		[ "$(grep -c 'sync iptables took' "$NODE_ROOT/logs/kube-router.log")" -gt "${1:-0}" ] &&
		in_node iptables -w -S FORWARD | grep -q -- '-j KUBE-ROUTER-FORWARD'
}

# metrics: metrics-server, as the autoscaler needs it: a process of the
# node (as kube-proxy is) reading each kubelet's /metrics/resource over
# TLS it verifies (the cluster's CA: no --kubelet-insecure-tls), served
# to the cluster as metrics.k8s.io through the API server's aggregation
# layer (an APIService whose Service's endpoint is the node's address).
metrics() {
	# Its RBAC first, in force before it starts: without it metrics-server
	# cannot read the request-header CA, and exits.
	CA_BUNDLE=$(base64 -w0 "$ROOT/pki/ca.crt") render metrics-server.yaml | kubectl apply --server-side -f - >/dev/null
	wait_for "metrics-server's RBAC" 30 kubectl auth can-i get configmaps/extension-apiserver-authentication -n kube-system --as system:metrics-server
	start_daemon metrics-server
	if ! kubectl wait --for=condition=Available apiservice/v1beta1.metrics.k8s.io --timeout=60s >/dev/null; then
		tail -n 20 "$ROOT/logs/metrics-server.log" >&2
		die "metrics-server's API did not become Available"
	fi
}

# restricted NAME: a namespace that enforces, warns and audits PodSecurity restricted.
restricted() {
	NAMESPACE=$1 render namespace.yaml | kubectl apply --server-side -f - >/dev/null
	wait_for "the default ServiceAccount of $1" 30 kubectl get serviceaccount default -n "$1"
}

# kustomization DIR NAME...: ROOT/DIR/kustomization.yaml, the repository's
# kustomization at its path with the images NAME... at PREFIX and TAG.
kustomization() {
	local dir=$1 res=$2 name
	shift 2
	mkdir -p "$ROOT/$dir"
	{
		echo "apiVersion: kustomize.config.k8s.io/v1beta1"
		echo "kind: Kustomization"
		# kustomize takes no absolute path: the repository's, from here.
		echo "resources: [\"$(realpath -m --relative-to="$ROOT/$dir" "$res")\"]"
		echo "images:"
		for name in "$@"; do
			echo "  - {name: defect-showcase/$name, newName: $PREFIX/$name, newTag: \"$TAG\"}"
		done
	} >"$ROOT/$dir/kustomization.yaml"
}

workload() {
	local dir=$repo/deploy/k8s/$OVERLAY
	[ "$OVERLAY" = base ] || dir=$repo/deploy/k8s/overlays/$OVERLAY
	[ -f "$dir/kustomization.yaml" ] || die "no overlay $OVERLAY (base, embedded or defects-off)"
	kustomization overlay "$dir" gateway security-svc errors-svc conformance-svc performance-svc
	restricted "$NS"
	say "applying $OVERLAY in namespace $NS (PodSecurity restricted)"
	kubectl apply --server-side --validate=strict -n "$NS" -k "$ROOT/overlay" >&2
	if ! kubectl wait -n "$NS" --for=condition=Available deployment --all --timeout=180s >&2; then
		kubectl get pods -n "$NS" -o wide >&2 || true
		kubectl get events -n "$NS" >&2 || true
		die "the Deployments did not become Available"
	fi
}

forward() {
	local pod
	pod=$(kubectl get pods -n "$NS" -l app.kubernetes.io/name=gateway \
		-o jsonpath='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Ready")].status}{"\n"}{end}' |
		awk '$2 == "True" { print $1; exit }')
	[ -n "$pod" ] || die "no gateway Pod is Ready"
	start_host port-forward "$BIN/kubectl" --kubeconfig "$ROOT/admin.kubeconfig" port-forward --address 127.0.0.1 \
		-n "$NS" "pod/$pod" "$PORT:8080" "$ADMIN_PORT:9090"
	wait_for "the port forward" 30 bash -c "(exec 3<>/dev/tcp/127.0.0.1/$PORT) && (exec 3<>/dev/tcp/127.0.0.1/$ADMIN_PORT)"
	# Available Deployments are not yet reachable Services: kube-proxy
	# programs them a moment later. The gateway's /readyz asks every one
	# through its Service.
	wait_for "the gateway's services" 60 bash -c "exec 3<>/dev/tcp/127.0.0.1/$ADMIN_PORT && printf 'GET /readyz HTTP/1.0\r\n\r\n' >&3 && head -n 1 <&3 | grep -q ' 200 '"
	printf '%s\n' "overlay=$OVERLAY" "port=$PORT" "admin_port=$ADMIN_PORT" "pod=$pod" "tag=$TAG" "prefix=$PREFIX" "nodes=$NODES" >"$ROOT/up"
}

up() {
	require
	if is_up; then
		status
		say "already up: make kube-down first to bring it up again with other settings"
		return 0
	fi
	[ ! -e "$ROOT" ] || down
	for p in "$PORT" "$ADMIN_PORT"; do
		[[ $p =~ ^[0-9]+$ ]] && ((p > 0 && p < 65536)) || die "$p is not a port"
		! port_taken "$p" || die "port $p is taken (something listens on it); choose others: make kube-up PORT=... ADMIN_PORT=..."
	done
	[ "$PORT" != "$ADMIN_PORT" ] || die "PORT and ADMIN_PORT are the same"
	[[ $NODES =~ ^[1-8]$ ]] || die "NODES=$NODES: from 1 to 8 nodes"
	[[ -z $REGISTRY ]] || ((NODES == 1)) || die "REGISTRY is reached from one node alone: NODES=1"
	[[ $TAG =~ ^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$ ]] || die "$TAG is not an image tag"
	[[ $PREFIX =~ ^[a-z0-9]+([._/-][a-z0-9]+)*$ ]] || die "$PREFIX is not an image name"
	[[ -z $REGISTRY || $REGISTRY =~ ^${HOST_IP//./\\.}:[0-9]+$ ]] || die "REGISTRY $REGISTRY: the node reaches only the host's end of its link, $HOST_IP:PORT"
	! ip link show "$HOST_IF" >/dev/null 2>&1 || die "a link $HOST_IF exists already: another node? (make kube-down)"
	# The link's /30 must be free here (the Pods' and Services' ranges live only inside the node).
	[ -z "$(ip -4 route show to match "$NODE_IP" | grep -v '^default')" ] || die "$NODE_IP is routed on this machine already: the node's link $HOST_IP/30 would clash"
	local t0=$SECONDS rc=0
	mkdir -p "$ROOT"/{pids,logs,bin}
	touch "$ROOT/$MARK"
	# A failed or interrupted start leaves nothing behind either
	# (KEEP_ON_FAILURE=1 keeps a failed one to look at). bash runs a trap
	# only once its foreground command is done (a kubectl wait, a build):
	# so the steps run in a child this shell waits for, and a signal
	# stops the child and takes down at once.
	trap 'up_exit' EXIT
	trap 'up_interrupted INT 130' INT
	trap 'up_interrupted TERM 143' TERM
	trap 'up_interrupted HUP 129' HUP
	save_sysctls
	up_steps &
	UP_PID=$!
	wait "$UP_PID" || rc=$?
	((rc == 0)) || exit "$rc"
	say "up in $((SECONDS - t0))s"
	status
	echo "make kube-down removes it all"
}

# up_steps: everything up makes, in order; each stage said as it starts.
up_steps() {
	: >"$ROOT/built-images"
	stage "the node's namespaces"
	(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o bin/showcase-pause ./deploy/kube-node/pause)
	cp "$repo/bin/showcase-pause" "$ROOT/bin/pause"
	# Each node's namespaces, held by one pause process; the nodes' network.
	each_node namespaces
	((NODES == 1)) || lan
	stage network
	each_node network
	each_node private_mounts
	each_node cgroups
	pki
	stage "control plane"
	control_plane
	stage containerd
	each_node runtime
	each_node runtime_ready
	stage images
	images
	stage kubelet
	each_node node
	each_node node_ready
	stage metrics-server
	metrics
	stage firewall
	firewall
	if [ "$OVERLAY" = none ]; then
		printf '%s\n' "overlay=none" "tag=$TAG" "prefix=$PREFIX" "registry=$REGISTRY" "nodes=$NODES" >"$ROOT/up"
		return
	fi
	stage workload
	workload
	stage forward
	forward
}

# up_interrupted SIGNAL STATUS: up's steps stopped at once (the child and
# everything it started), then out with STATUS: up_exit takes down.
up_interrupted() {
	trap '' INT TERM HUP
	INTERRUPTED=SIG$1
	[ -z "${UP_PID:-}" ] || stop_tree "$UP_PID"
	exit "$2"
}

# up_exit: after up, failed or interrupted, down; a second Ctrl-C while
# it runs is ignored, so that it finishes.
up_exit() {
	local rc=$?
	((rc != 0)) || return 0
	trap '' INT TERM HUP
	set +e
	if [ -n "${INTERRUPTED:-}" ]; then
		say "kube-up interrupted by $INTERRUPTED: taking down what it made"
	elif [ -n "${KEEP_ON_FAILURE:-}" ]; then
		say "kube-up failed: KEEP_ON_FAILURE is set, so it is left as it is (make kube-down removes it)"
		return
	else
		say "kube-up failed: taking down what it made"
	fi
	[ -z "${UP_PID:-}" ] || stop_tree "$UP_PID"
	down >&2
}

# stop_tree PID: PID and every process below it, TERM then KILL. The tree
# is frozen first (freeze_tree): a shell in it that is not stopped forks
# on (a wait_for's kubectl every quarter second), and a child forked after
# the tree was listed would outlive the kill.
stop_tree() {
	local pids i
	pids=$(freeze_tree "$1")
	[ -n "$pids" ] || return 0
	# shellcheck disable=SC2086
	kill -TERM $pids 2>/dev/null || true
	# A stopped process takes its TERM once it is continued.
	# shellcheck disable=SC2086
	kill -CONT $pids 2>/dev/null || true
	# Gone, or a zombie (dead, its parent not yet told: init reaps the
	# orphans in its own time).
	for ((i = 0; i < 20; i++)); do
		ps -o stat= -p "${pids// /,}" 2>/dev/null | grep -qv '^Z' || return 0
		sleep 0.25
	done
	# shellcheck disable=SC2086
	kill -KILL $pids 2>/dev/null || true
}

# freeze_tree PID: stops (SIGSTOP) PID, then the children of what is
# stopped, from the process table read again, until a reading finds none
# that is not: a stopped process forks no more, so the tree then holds
# still. Prints the PIDs stopped.
freeze_tree() {
	local stopped pid ppid new
	kill -STOP "$1" 2>/dev/null || return 0
	stopped=" $1 "
	while :; do
		new=
		while read -r pid ppid; do
			[[ $stopped == *" $ppid "* && $stopped != *" $pid "* ]] || continue
			! kill -STOP "$pid" 2>/dev/null || new+="$pid "
		done < <(ps -e -o pid=,ppid=)
		[ -n "$new" ] || break
		stopped+="$new"
	done
	# shellcheck disable=SC2086 # one line of PIDs, the padding dropped
	echo $stopped
}

# prometheus: Prometheus in the node, in the namespace monitoring
# (PodSecurity restricted), built from the Go module proxy into an image
# FROM scratch; its API forwarded to 127.0.0.1:PROM_PORT.
prometheus() {
	[ -x "$BIN/prometheus" ] || die "missing: $BIN/prometheus (scripts/kube-deps.sh builds it)"
	! port_taken "$PROM_PORT" || die "port $PROM_PORT is taken; choose another: PROM_PORT=..."
	# The images' names and tag as up had them.
	TAG=$(recorded tag)
	PREFIX=$(recorded prefix)
	local ctx=$ROOT/prometheus-image
	mkdir -p "$ctx"
	cp "$BIN/prometheus" "$ctx/prometheus"
	printf 'FROM scratch\nCOPY prometheus /bin/prometheus\nUSER 65534:65534\nENTRYPOINT ["/bin/prometheus"]\n' >"$ctx/Dockerfile"
	build_image "$PREFIX/prometheus:$TAG" "$ctx"
	rm -rf "$ctx"
	load "$PREFIX/prometheus:$TAG"
	restricted monitoring
	kustomization prometheus "$repo/deploy/k8s/prometheus" prometheus
	kubectl apply --server-side --validate=strict -n monitoring -k "$ROOT/prometheus" >&2
	kubectl wait -n monitoring --for=condition=Available deployment/prometheus --timeout=120s >&2 ||
		die "Prometheus did not become Available"
	local pod
	pod=$(kubectl get pods -n monitoring -l app.kubernetes.io/name=prometheus -o jsonpath='{.items[0].metadata.name}')
	start_host prometheus-forward "$BIN/kubectl" --kubeconfig "$ROOT/admin.kubeconfig" port-forward --address 127.0.0.1 \
		-n monitoring "pod/$pod" "$PROM_PORT:9090"
	wait_for "the port forward to Prometheus" 30 bash -c "(exec 3<>/dev/tcp/127.0.0.1/$PROM_PORT)"
	echo "prom_port=$PROM_PORT" >>"$ROOT/up"
	echo "kube-node: Prometheus http://127.0.0.1:$PROM_PORT (Pod $pod), discovering the Pods (job kubernetes-pods)"
}

# ---------------------------------------------------------------- lose

# lose NAME: the worker NAME taken away as a power cut would, with no word
# to anyone: its port on the nodes' network down, then every process of it
# (the daemons, the shims, the containers, the anchor, so its namespaces
# go) killed with SIGKILL at once, until none is left. Its Node object and
# its Pods' objects stay as they are: the control plane finds the node
# NotReady once its lease is not renewed (kube-controller-manager.flags)
# and evicts its Pods by their tolerations (kube-apiserver.flags). Its
# folder stays until down.
lose() {
	local name=${1:-} k found="" pids i h
	for k in $(workers_made); do [ "$(node_name "$k")" != "$name" ] || found=$k; done
	[ "$name" != showcase-node ] || die "the control plane's node cannot be lost: lose takes a worker"
	[ -n "$found" ] || die "no worker $name"
	node_env "$found"
	[ ! -f "$NODE_ROOT/lost" ] || die "$name is lost already"
	date -u +%FT%TZ >"$NODE_ROOT/lost"
	! alive "$(lan_pid)" || in_lan ip link set "n$NODE_K" down 2>/dev/null || true
	# Rounds, until a reading finds none: a process forked after a reading
	# is found by the next. The anchor goes last: while it lives, the
	# namespaces it holds find every process in them.
	local anchor
	anchor=$(anchor_pid)
	for ((i = 0; i < 40; i++)); do
		pids=$({
			ns_pids "$anchor"
			for h in $(hierarchies); do
				[ ! -d "$h/$NODE_CGROUP" ] || find "$h/$NODE_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null
			done
		} | sort -u | { grep -vx "$anchor" || true; } | while read -r p; do ! alive "$p" || echo "$p"; done)
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		sleep 0.1
	done
	[ -z "$pids" ] || die "$name: processes left after SIGKILL: $pids"
	! anchored "$anchor" || kill -KILL "$anchor"
	# SIGKILL is delivered, not waited for: the anchor has exited once its
	# namespaces have been let go, which is after its executable.
	for ((i = 0; i < 100; i++)); do
		! exited "$anchor" || break
		sleep 0.1
	done
	exited "$anchor" || die "$name: its anchor $anchor still runs 10 s after SIGKILL"
	say "lost $name: its link down, its processes killed; the control plane will find it NotReady"
}

# ---------------------------------------------------------------- down

# node_pids: every process of the nodes: those in a node's network or
# mount namespace (the daemons and containerd's shims) or the LAN's, and
# those in the cgroups (the containers).
node_pids() {
	local k
	for k in 0 $(workers_made); do
		ns_pids "$(cat "$(node_root "$k")/pids/node" 2>/dev/null || true)"
	done
	ns_pids "$(lan_pid)"
	local dirs
	dirs=$(cgroup_dirs)
	# shellcheck disable=SC2086
	[ -z "$dirs" ] || find $dirs -name cgroup.procs -exec cat {} + 2>/dev/null || true
}

# ns_pids PID: the processes in the network or mount namespace of PID, an
# anchor of ours.
ns_pids() {
	local a=$1 net mnt p
	# Only a live anchor that is our pause, in namespaces other than ours
	# (a stale PID may belong to anything by now).
	if alive "$a" && [[ $(readlink "/proc/$a/exe" 2>/dev/null) == "$ROOT/bin/pause"* ]]; then
		net=$(readlink "/proc/$a/ns/net")
		mnt=$(readlink "/proc/$a/ns/mnt")
		[ "$net" != "$(readlink /proc/self/ns/net)" ] || net=none
		[ "$mnt" != "$(readlink /proc/self/ns/mnt)" ] || mnt=none
		for p in /proc/[0-9]*; do
			if [ "$(readlink "$p/ns/net" 2>/dev/null)" = "$net" ] || [ "$(readlink "$p/ns/mnt" 2>/dev/null)" = "$mnt" ]; then
				echo "${p#/proc/}"
			fi
		done
	fi
}

# anchors: the pause processes that hold the nodes' and the LAN's namespaces.
anchors() {
	local k
	for k in 0 $(workers_made); do cat "$(node_root "$k")/pids/node" 2>/dev/null || true; done
	lan_pid
}

# ours PID: a live process started by this script (its command line names ROOT).
ours() { alive "${1:-}" && tr '\0' ' ' <"/proc/$1/cmdline" 2>/dev/null | grep -qF "$ROOT"; }

down() {
	[ "$(id -u)" = 0 ] || die "needs root"
	if [ ! -e "$ROOT" ] && ! ip link show "$HOST_IF" >/dev/null 2>&1 && [ -z "$(cgroup_dirs)" ]; then
		say "nothing to take down"
		return 0
	fi
	if [ -e "$ROOT" ] && [ ! -f "$ROOT/$MARK" ]; then
		die "$ROOT exists but was not made by kube-node.sh; not touching it"
	fi
	local name pid i pids dirs k daemons=()
	# The daemons first, politely: the API server's clients before it, the
	# workers' before the control plane's node's.
	for k in $(workers_made); do
		for name in "${WORKER_DAEMONS[@]}"; do daemons+=("$(node_root "$k")/pids/$name"); done
	done
	for name in "${DAEMONS[@]}"; do daemons+=("$ROOT/pids/$name"); done
	for name in "${daemons[@]}"; do
		pid=$(cat "$name" 2>/dev/null || true)
		! ours "$pid" || kill -TERM "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 40; i++)); do
		local any=
		for name in "${daemons[@]}"; do
			! ours "$(cat "$name" 2>/dev/null || true)" || any=1
		done
		[ -n "$any" ] || break
		sleep 0.25
	done
	for name in "${daemons[@]}"; do
		pid=$(cat "$name" 2>/dev/null || true)
		! ours "$pid" || kill -KILL "$pid" 2>/dev/null || true
	done
	# Then everything left of the nodes: shims, containers, the anchors last.
	local held
	held=$(anchors)
	for ((i = 0; i < 40; i++)); do
		pids=$(node_pids | sort -u | grep -vxF "$held" || true)
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		sleep 0.25
	done
	for pid in $held; do
		if alive "$pid" && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$ROOT/bin/pause"* ]]; then
			kill -TERM "$pid" 2>/dev/null || true
			for ((i = 0; i < 20; i++)); do alive "$pid" || break; sleep 0.25; done
			! alive "$pid" || kill -KILL "$pid" 2>/dev/null || true
		fi
	done
	# The link goes with the namespace; wait for the kernel to say so.
	for ((i = 0; i < 40; i++)); do
		ip link show "$HOST_IF" >/dev/null 2>&1 || break
		sleep 0.25
	done
	if ip link show "$HOST_IF" >/dev/null 2>&1; then ip link del "$HOST_IF" || true; fi
	# The cgroups, deepest first (a group empties a moment after its last process).
	for ((i = 0; i < 40; i++)); do
		dirs=$(cgroup_dirs)
		[ -n "$dirs" ] || break
		# shellcheck disable=SC2086
		find $dirs -depth -type d -exec rmdir {} + 2>/dev/null || true
		sleep 0.25
	done
	if [ -f "$ROOT/sysctls" ]; then
		while IFS= read -r line; do
			[ -z "$line" ] || sysctl -qw "$line" || say "could not put back $line"
		done <"$ROOT/sysctls"
	fi
	# The images up built into Docker (pause, Prometheus), each only if it
	# still carries the node's label; those make images built stay.
	if [ -f "$ROOT/built-images" ]; then
		while IFS= read -r img; do
			[ -z "$img" ] || [ -z "$(image_ours "$img")" ] || docker rmi "$img" >/dev/null 2>&1 || say "could not remove the image $img"
		done <"$ROOT/built-images"
	fi
	if [ -f "$ROOT/made-on-host" ]; then
		while IFS= read -r p; do
			[ -z "$p" ] || rmdir "$p" 2>/dev/null || say "could not remove $p (not empty?)"
		done <"$ROOT/made-on-host"
	fi
	# Nothing of the node should still be mounted on the host; if it is,
	# undo it: mount points (mountinfo's fifth field) that are ROOT or below.
	awk -v root="$ROOT" '$5 == root || index($5, root "/") == 1 { print $5 }' /proc/self/mountinfo | sort -r | while read -r m; do
		umount -l "$m" || true
	done
	[ ! -e "$ROOT" ] || rm -rf --one-file-system "$ROOT"
	local left=()
	ip link show "$HOST_IF" >/dev/null 2>&1 && left+=("link $HOST_IF")
	[ -z "$(cgroup_dirs)" ] || left+=("cgroups $(cgroup_dirs | tr '\n' ' ')")
	[ ! -e "$ROOT" ] || left+=("$ROOT")
	((${#left[@]} == 0)) || die "could not remove: ${left[*]}"
	say "down: nothing of the node is left"
}

# restart NAME: one of the node's daemons stopped and started again as up
# started it (kube-router: on every node); kube-router's firewall is waited
# for until it has synced again.
restart() {
	local name=${1:-} k
	case $name in
	kube-router)
		for k in 0 $(workers_up); do on_node "$k" restart_one "$name"; done
		return
		;;
	metrics-server | kube-scheduler | kube-controller-manager) restart_one "$name" ;;
	*) die "restart takes kube-router, metrics-server, kube-scheduler or kube-controller-manager" ;;
	esac
}
restart_one() {
	local name=$1 pid before i
	before=$(grep -c 'sync iptables took' "$NODE_ROOT/logs/kube-router.log" 2>/dev/null || true)
	pid=$(cat "$NODE_ROOT/pids/$name" 2>/dev/null || true)
	if ours "$pid"; then
		kill -TERM "$pid"
		for ((i = 0; i < 40; i++)); do alive "$pid" || break; sleep 0.25; done
		! alive "$pid" || kill -KILL "$pid"
	fi
	start_daemon "$name"
	[ "$name" != kube-router ] || wait_for "kube-router's firewall" 60 firewall_synced "${before:-0}"
	say "restarted $name on $NODE"
}

cmd=${1:-}
shift || true
case $cmd in
up) up ;;
down) down ;;
status) status ;;
load)
	is_up || die "not up"
	load "$@"
	;;
prometheus)
	is_up || die "not up"
	prometheus
	;;
restart)
	is_up || die "not up"
	restart "$@"
	;;
render)
	[[ ${1:-} =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] && [ -f "$CONF/$1" ] || die "render takes a file of deploy/kube-node"
	render "$1"
	;;
exec)
	is_up || die "not up"
	# exec: the command gets this PID, and the signals sent to it.
	exec nsenter -t "$(anchor_pid)" -n -m -- "$@"
	;;
lose)
	is_up || die "not up"
	lose "$@"
	;;
on)
	is_up || die "not up"
	name=${1:-}
	shift || true
	for k in 0 $(workers_made); do
		[ "$(node_name "$k")" != "$name" ] || {
			node_env "$k"
			exec nsenter -t "$(anchor_pid)" -n -m -- "$@"
		}
	done
	die "no node $name"
	;;
*)
	echo "usage: $0 up|down|status|prometheus|load IMAGE...|exec CMD...|on NODE CMD...|lose NODE|restart NAME|render FILE" >&2
	exit 2
	;;
esac
