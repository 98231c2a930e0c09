#!/usr/bin/env bash
# A real single-node Kubernetes on this machine, for the showcase: `make
# kube-up` and `make kube-down` call it.
#
#   kube-node.sh up      bring the node up, load the images, apply OVERLAY,
#                        wait until every Deployment is Available, forward
#                        one gateway Pod's API to 127.0.0.1:PORT and its
#                        admin port to 127.0.0.1:ADMIN_PORT
#   kube-node.sh down    stop and remove everything up made
#   kube-node.sh status  say whether it is up, and where
#   kube-node.sh prometheus      run Prometheus in the node (deploy/k8s/prometheus),
#                        discovering the Pods itself; its API forwarded to
#                        127.0.0.1:PROM_PORT
#   kube-node.sh load IMAGE...   import Docker images into the node
#   kube-node.sh exec CMD...     run CMD in the node's network namespace
#
# The node lives in namespaces of its own, held by one process (the pause
# program): a network namespace joined to the host only by a veth pair
# (host 10.243.255.1, node 10.243.255.2), with no default route, so nothing
# in it can reach past the host's end of that link; and a mount namespace
# whose mounts never propagate to the host, so they all go when its last
# process does. In it: etcd, kube-apiserver, kube-controller-manager,
# kube-scheduler, CoreDNS, a containerd of its own (Docker's is left
# alone), kubelet, kube-proxy and metrics-server (behind the API server's
# aggregation layer, for the gateway's autoscaler). Pods sit on a CNI bridge (10.244.0.0/24,
# no masquerade); a raw-table fence, in place before containerd starts,
# drops every packet from the bridge that is not for a Pod, a Service or
# the node itself. What touches the host outside that is recorded and
# undone by down: the sysctls kubelet rewrites, the cgroups under
# /defect-showcase, two mount points it may create (/run/containerd,
# /var/lib/cni), and SHOWCASE_KUBE_ROOT (everything on disk).
set -euo pipefail
umask 022

repo=$(cd "$(dirname "$0")/.." && pwd)
KUBE_VERSION=v1.34.2
ROOT=${SHOWCASE_KUBE_ROOT:-/var/lib/defect-showcase-kube}
BIN=${SHOWCASE_KUBE_BIN:-${XDG_CACHE_HOME:-$HOME/.cache}/defect-showcase/kube-$KUBE_VERSION}
OVERLAY=${OVERLAY:-base}
PORT=${PORT:-8080}
ADMIN_PORT=${ADMIN_PORT:-9090}
PROM_PORT=${PROM_PORT:-9099}
TAG=${SHOWCASE_TAG:-latest}
PREFIX=${IMAGE_PREFIX:-defect-showcase}
NS=showcase

NODE=showcase-node
HOST_IF=showcase-kube # the host's end of the link
HOST_IP=10.243.255.1
NODE_IP=10.243.255.2
POD_CIDR=10.244.0.0/24
SVC_CIDR=10.96.0.0/16
SVC_API=10.96.0.1
CGROUP=defect-showcase
MARK=.defect-showcase-kube # ROOT is removed only when it holds this file
# What kubelet rewrites at start (kubeadm's and kind's nodes let it): put back by down.
SYSCTLS=(kernel.panic kernel.panic_on_oops vm.overcommit_memory vm.panic_on_oom kernel.keys.root_maxkeys kernel.keys.root_maxbytes)
DAEMONS=(prometheus-forward port-forward metrics-server kubelet kube-proxy coredns kube-scheduler kube-controller-manager kube-apiserver containerd etcd)

say() { echo "kube-node: $*" >&2; }
die() {
	say "$*"
	exit 1
}
kubectl() { "$BIN/kubectl" --kubeconfig "$ROOT/admin.kubeconfig" "$@"; }
anchor_pid() { cat "$ROOT/pids/node" 2>/dev/null || true; }
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }
anchored() { [ "$(readlink "/proc/$(anchor_pid)/exe" 2>/dev/null)" = "$ROOT/bin/pause" ]; }
is_up() { alive "$(anchor_pid)" && [ -f "$ROOT/up" ]; }
in_node() { nsenter -t "$(anchor_pid)" -n -m -- "$@"; }

# start NAME CMD...: a daemon in the node's namespaces, in a session of its
# own (it outlives make), its output in ROOT/logs/NAME.log. start_host: the
# same on the host.
start() {
	local name=$1
	shift
	start_host "$name" nsenter -t "$(anchor_pid)" -n -m -- "$@"
}
start_host() {
	local name=$1
	shift
	# Started in the background by a shell without job control, setsid
	# need not fork: $! is the daemon's own PID.
	(exec setsid "$@" </dev/null >>"$ROOT/logs/$name.log" 2>&1) &
	echo $! >"$ROOT/pids/$name"
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
	for f in "$ROOT"/logs/*.log; do
		echo "--- $f (end)" >&2
		tail -n 15 "$f" >&2
	done
	exit 1
}

require() {
	local missing=()
	[ "$(id -u)" = 0 ] || die "needs root (network and mount namespaces, cgroups, iptables)"
	for c in containerd ctr runc nsenter unshare ip iptables ip6tables openssl etcd docker go; do
		command -v "$c" >/dev/null 2>&1 || missing+=("$c")
	done
	for c in kube-apiserver kube-controller-manager kube-scheduler kubelet kube-proxy kubectl coredns metrics-server; do
		[ -x "$BIN/$c" ] || missing+=("$BIN/$c")
	done
	for c in bridge host-local loopback; do
		[ -x "/usr/lib/cni/$c" ] || missing+=("/usr/lib/cni/$c")
	done
	((${#missing[@]} == 0)) || die "missing: ${missing[*]} (scripts/kube-deps.sh installs and builds them)"
	docker info >/dev/null 2>&1 || die "no Docker engine answers (the images are built and saved with it)"
}

port_taken() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

status() {
	if is_up; then
		# shellcheck disable=SC1091
		. "$ROOT/up" # overlay, port, admin_port and pod: up's record
		# shellcheck disable=SC2154
		echo "kube-node: up (overlay $overlay, Kubernetes $KUBE_VERSION): API http://127.0.0.1:$port, admin http://127.0.0.1:$admin_port (Pod $pod)"
		[ -z "${prom_port:-}" ] || echo "kube-node: Prometheus http://127.0.0.1:$prom_port"
		echo "KUBECONFIG=$ROOT/admin.kubeconfig"
		return 0
	fi
	echo "kube-node: not up"
	return 3
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
	issue kubelet "/CN=$NODE" serverAuth "IP:$NODE_IP,DNS:$NODE"
	issue metrics-server "/CN=metrics-server" serverAuth "DNS:metrics-server.kube-system.svc,IP:$NODE_IP"
	CA=front-proxy-ca issue front-proxy-client "/CN=front-proxy-client" clientAuth
	openssl ecparam -name prime256v1 -genkey -noout -out "$d/sa.key" 2>/dev/null
	openssl ec -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null
	chmod 600 "$d"/*.key

	# One token per component, each with the identity Kubernetes' default
	# RBAC knows; the admin's is the user's (and CoreDNS's).
	local user tok
	: >"$ROOT/tokens.csv"
	for user in admin kubelet kube-proxy kube-scheduler kube-controller-manager metrics-server; do
		tok=$(openssl rand -hex 24)
		case $user in
		admin) echo "$tok,admin,admin,system:masters" ;;
		kubelet) echo "$tok,system:node:$NODE,$NODE,system:nodes" ;;
		metrics-server) echo "$tok,system:metrics-server,metrics-server" ;;
		*) echo "$tok,system:$user,$user" ;;
		esac >>"$ROOT/tokens.csv"
		cat >"$ROOT/$user.kubeconfig" <<-EOF
			apiVersion: v1
			kind: Config
			clusters:
			- name: $NODE
			  cluster: {server: "https://$NODE_IP:6443", certificate-authority: "$d/ca.crt"}
			users:
			- name: $user
			  user: {token: "$tok"}
			contexts:
			- name: $NODE
			  context: {cluster: $NODE, user: $user}
			current-context: $NODE
		EOF
	done
	chmod 600 "$ROOT/tokens.csv" "$ROOT"/*.kubeconfig
}

# The node's network: its namespace, the link to the host, and the fence,
# all before anything of Kubernetes runs.
network() {
	ip link add "$HOST_IF" type veth peer name "$HOST_IF-n"
	ip link set "$HOST_IF-n" netns "$(anchor_pid)"
	# The host's end speaks IPv4 to the node only: no IPv6 chatter on the link.
	sysctl -qw "net.ipv6.conf.$HOST_IF.disable_ipv6=1"
	ip addr add "$HOST_IP/30" dev "$HOST_IF"
	ip link set "$HOST_IF" up
	in_node sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	in_node ip link set "$HOST_IF-n" name eth0
	in_node ip addr add "$NODE_IP/30" dev eth0
	in_node ip link set lo up
	in_node ip link set eth0 up
	# Pods are routed by the node (kube-proxy's Services need it), and
	# bridged traffic passes iptables (a Service's answer from a Pod on the
	# same bridge must be un-NATed): both sysctls are the node's own.
	in_node sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
	# The fence: from the bridge, only to Pods, Services and the node.
	in_node iptables -w -t raw -N SHOWCASE-FENCE
	in_node iptables -w -t raw -A SHOWCASE-FENCE -d "$POD_CIDR" -j RETURN
	in_node iptables -w -t raw -A SHOWCASE-FENCE -d "$SVC_CIDR" -j RETURN
	in_node iptables -w -t raw -A SHOWCASE-FENCE -d "$NODE_IP/32" -j RETURN
	in_node iptables -w -t raw -A SHOWCASE-FENCE -m comment --comment "pod traffic never leaves the node" -j DROP
	in_node iptables -w -t raw -A PREROUTING -i cni0 -j SHOWCASE-FENCE
	# The node itself: out of eth0 only to the host's end of the link. In
	# POSTROUTING, where the device is the one a packet really leaves by
	# (OUTPUT's is the route chosen before kube-proxy's NAT).
	in_node iptables -w -t mangle -A POSTROUTING -o eth0 ! -d "$HOST_IP/32" -m comment --comment "the node speaks only to the host" -j DROP
	in_node iptables -w -A FORWARD -o eth0 -m comment --comment "nothing is forwarded off the node" -j DROP
	# The node's own clients (a load test run in it) reach Services: a
	# route for their range, which kube-proxy's NAT turns into a Pod's
	# address; one it does not is dropped by the rule above.
	in_node ip route add "$SVC_CIDR" dev eth0
	in_node ip6tables -w -P FORWARD DROP
	in_node ip6tables -w -P OUTPUT DROP
	in_node ip6tables -w -A OUTPUT -o lo -j ACCEPT
	# Proven before anything starts: no default route, the fence in place.
	[ -z "$(in_node ip route show default)" ] || die "the node has a default route"
	in_node iptables -w -t raw -C PREROUTING -i cni0 -j SHOWCASE-FENCE || die "the fence is not in place"
}

# Private mounts for paths containerd and kubelet write regardless of
# their configuration: shim sockets and runc state (/run/containerd), the
# CNI cache (/var/lib/cni), Pod logs and their links (/var/log).
private_mounts() {
	local p
	: >"$ROOT/made-on-host"
	# mount(8) keeps its userspace table in /run/mount, the host's /run:
	# made by the first mount below if the host has none, and removed by down.
	[ -e /run/mount ] || echo /run/mount >>"$ROOT/made-on-host"
	for p in /run/containerd /var/lib/cni; do
		if [ ! -e "$p" ]; then
			mkdir -p "$p"
			echo "$p" >>"$ROOT/made-on-host"
		fi
		in_node mount -t tmpfs -o mode=0755 "showcase-node" "$p"
	done
	in_node mount -t tmpfs -o mode=0755 "showcase-node" /var/log
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

cgroups() {
	local h
	for h in $(hierarchies); do
		mkdir -p "$h/$CGROUP"
	done
	# cpuset: a new group starts with no CPUs or memory nodes; copy the parent's.
	if [ -d /sys/fs/cgroup/cpuset/$CGROUP ]; then
		cat /sys/fs/cgroup/cpuset/cpuset.cpus >/sys/fs/cgroup/cpuset/$CGROUP/cpuset.cpus
		cat /sys/fs/cgroup/cpuset/cpuset.mems >/sys/fs/cgroup/cpuset/$CGROUP/cpuset.mems
	fi
}

control_plane() {
	start etcd etcd --name "$NODE" --data-dir "$ROOT/etcd" \
		--listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
		--listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
		--initial-cluster "$NODE=http://127.0.0.1:2380" --listen-metrics-urls ""
	wait_for etcd 30 in_node bash -c 'exec 3<>/dev/tcp/127.0.0.1/2379 && printf "GET /health HTTP/1.0\r\n\r\n" >&3 && grep -q "\"health\":\"true\"" <&3'
	local p=$ROOT/pki
	start kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:2379 \
		--bind-address "$NODE_IP" --advertise-address "$NODE_IP" --secure-port 6443 \
		--tls-cert-file "$p/apiserver.crt" --tls-private-key-file "$p/apiserver.key" \
		--client-ca-file "$p/ca.crt" --token-auth-file "$ROOT/tokens.csv" --anonymous-auth=false \
		--authorization-mode Node,RBAC --enable-admission-plugins NodeRestriction \
		--service-account-issuer https://kubernetes.default.svc.cluster.local \
		--service-account-key-file "$p/sa.pub" --service-account-signing-key-file "$p/sa.key" \
		--service-cluster-ip-range "$SVC_CIDR" \
		--kubelet-client-certificate "$p/apiserver-kubelet-client.crt" --kubelet-client-key "$p/apiserver-kubelet-client.key" \
		--kubelet-certificate-authority "$p/ca.crt" --kubelet-preferred-address-types InternalIP \
		--requestheader-client-ca-file "$p/front-proxy-ca.crt" --requestheader-allowed-names front-proxy-client \
		--requestheader-username-headers X-Remote-User --requestheader-group-headers X-Remote-Group \
		--requestheader-extra-headers-prefix X-Remote-Extra- \
		--proxy-client-cert-file "$p/front-proxy-client.crt" --proxy-client-key-file "$p/front-proxy-client.key" \
		--enable-aggregator-routing=true \
		--profiling=false
	wait_for kube-apiserver 90 kubectl get --raw /readyz
	start kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$ROOT/kube-controller-manager.kubeconfig" \
		--use-service-account-credentials --service-account-private-key-file "$p/sa.key" --root-ca-file "$p/ca.crt" \
		--leader-elect=false --bind-address 127.0.0.1 --secure-port 0 --profiling=false
	start kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$ROOT/kube-scheduler.kubeconfig" \
		--leader-elect=false --bind-address 127.0.0.1 --secure-port 0 --profiling=false
	cat >"$ROOT/Corefile" <<-EOF
		# The cluster's names only: no forward, so no query ever leaves the node.
		cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
		    bind $NODE_IP
		    errors
		    kubernetes cluster.local in-addr.arpa ip6.arpa {
		        kubeconfig $ROOT/admin.kubeconfig
		        pods insecure
		        fallthrough in-addr.arpa ip6.arpa
		    }
		    cache 30
		}
		.:53 {
		    bind $NODE_IP
		    errors
		    template ANY ANY {
		        rcode NXDOMAIN
		    }
		}
	EOF
	start coredns "$BIN/coredns" -conf "$ROOT/Corefile"
}

runtime() {
	mkdir -p "$ROOT/cni/net.d"
	cat >"$ROOT/cni/net.d/10-showcase.conflist" <<-EOF
		{
		  "cniVersion": "1.0.0",
		  "name": "showcase-pods",
		  "plugins": [
		    {
		      "type": "bridge",
		      "bridge": "cni0",
		      "isGateway": true,
		      "ipMasq": false,
		      "hairpinMode": true,
		      "ipam": {
		        "type": "host-local",
		        "dataDir": "$ROOT/cni/ipam",
		        "ranges": [[{"subnet": "$POD_CIDR"}]],
		        "routes": [{"dst": "0.0.0.0/0"}]
		      }
		    }
		  ]
		}
	EOF
	cat >"$ROOT/containerd.toml" <<-EOF
		version = 2
		root = "$ROOT/containerd/root"
		state = "$ROOT/containerd/state"
		disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs"]
		[grpc]
		  address = "$ROOT/containerd.sock"
		[ttrpc]
		  address = "$ROOT/containerd.sock.ttrpc"
		[metrics]
		  address = ""
		[plugins."io.containerd.internal.v1.opt"]
		  path = "$ROOT/containerd/opt"
		[plugins."io.containerd.grpc.v1.cri"]
		  sandbox_image = "docker.io/$PREFIX/pause:$TAG"
		  # This machine gives root no CAP_SYS_RESOURCE: a negative oom_score_adj fails.
		  restrict_oom_score_adj = true
		  netns_mounts_under_state_dir = true
		  stream_server_address = "127.0.0.1"
		  stream_server_port = "0"
		  [plugins."io.containerd.grpc.v1.cri".containerd]
		    snapshotter = "overlayfs"
		    default_runtime_name = "runc"
		    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
		      runtime_type = "io.containerd.runc.v2"
		      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
		        SystemdCgroup = false
		  [plugins."io.containerd.grpc.v1.cri".cni]
		    bin_dir = "/usr/lib/cni"
		    conf_dir = "$ROOT/cni/net.d"
		    max_conf_num = 1
	EOF
	start containerd containerd --config "$ROOT/containerd.toml"
	wait_for containerd 30 ctr --address "$ROOT/containerd.sock" version
}

# load IMAGE...: Docker's images into the node's containerd (nothing can
# be pulled here).
load() {
	((${#@})) || return 0
	docker save "$@" | ctr --address "$ROOT/containerd.sock" -n k8s.io images import - >/dev/null
}

images() {
	local out
	out=$(docker build -q --target prebuilt --build-arg SERVICE=showcase-pause -t "$PREFIX/pause:$TAG" "$repo" 2>&1) ||
		die "docker build of the pause image: $out"
	local imgs=("$PREFIX/pause:$TAG") svc
	for svc in gateway security-svc errors-svc conformance-svc performance-svc; do
		docker image inspect "$PREFIX/$svc:$TAG" >/dev/null 2>&1 || die "no image $PREFIX/$svc:$TAG: make images SHOWCASE_TAG=$TAG builds it"
		imgs+=("$PREFIX/$svc:$TAG")
	done
	load "${imgs[@]}"
}

node() {
	cat >"$ROOT/kubelet.yaml" <<-EOF
		apiVersion: kubelet.config.k8s.io/v1beta1
		kind: KubeletConfiguration
		address: $NODE_IP
		readOnlyPort: 0
		healthzBindAddress: 127.0.0.1
		authentication:
		  anonymous: {enabled: false}
		  webhook: {enabled: true}
		  x509: {clientCAFile: $ROOT/pki/ca.crt}
		authorization: {mode: Webhook}
		tlsCertFile: $ROOT/pki/kubelet.crt
		tlsPrivateKeyFile: $ROOT/pki/kubelet.key
		containerRuntimeEndpoint: unix://$ROOT/containerd.sock
		cgroupDriver: cgroupfs
		cgroupRoot: /$CGROUP
		failCgroupV1: false
		failSwapOn: false
		clusterDNS: [$NODE_IP]
		clusterDomain: cluster.local
		resolvConf: $ROOT/resolv.conf
		podLogsDir: /var/log/pods
		# Nothing can be pulled again: never collect an image, never evict for disk (kind's settings).
		imageGCHighThresholdPercent: 100
		evictionHard: {nodefs.available: "0%", nodefs.inodesFree: "0%", imagefs.available: "0%"}
		hairpinMode: hairpin-veth
		serializeImagePulls: false
	EOF
	: >"$ROOT/resolv.conf"
	cat >"$ROOT/kube-proxy.yaml" <<-EOF
		apiVersion: kubeproxy.config.k8s.io/v1alpha1
		kind: KubeProxyConfiguration
		mode: iptables
		clientConnection: {kubeconfig: $ROOT/kube-proxy.kubeconfig}
		hostnameOverride: $NODE
		clusterCIDR: $POD_CIDR
		bindAddress: $NODE_IP
		healthzBindAddress: 127.0.0.1:10256
		metricsBindAddress: 127.0.0.1:10249
		# The machine's conntrack table and timeouts are the host's: leave them.
		conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
	EOF
	start kube-proxy "$BIN/kube-proxy" --config "$ROOT/kube-proxy.yaml"
	start kubelet "$BIN/kubelet" --config "$ROOT/kubelet.yaml" --kubeconfig "$ROOT/kubelet.kubeconfig" \
		--root-dir "$ROOT/kubelet" --hostname-override "$NODE" --node-ip "$NODE_IP"
	wait_for "the node" 60 kubectl get node "$NODE"
	kubectl wait --for=condition=Ready "node/$NODE" --timeout=60s >/dev/null
}

# metrics: metrics-server, as the autoscaler needs it: a process of the
# node (as kube-proxy is) reading each kubelet's /metrics/resource over
# TLS it verifies (the cluster's CA: no --kubelet-insecure-tls), served
# to the cluster as metrics.k8s.io through the API server's aggregation
# layer (an APIService whose Service's endpoint is the node's address).
metrics() {
	# Its RBAC first, in force before it starts: without it metrics-server
	# cannot read the request-header CA, and exits.
	kubectl apply --server-side -f - >/dev/null <<-EOF
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRole
		metadata:
		  name: system:metrics-server
		rules:
		  - apiGroups: [""]
		    resources: [nodes/metrics]
		    verbs: [get]
		  - apiGroups: [""]
		    resources: [pods, nodes]
		    verbs: [get, list, watch]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRoleBinding
		metadata:
		  name: system:metrics-server
		roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:metrics-server}
		subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRoleBinding
		metadata:
		  name: metrics-server:system:auth-delegator
		roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: system:auth-delegator}
		subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: RoleBinding
		metadata:
		  name: metrics-server-auth-reader
		  namespace: kube-system
		roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: extension-apiserver-authentication-reader}
		subjects: [{apiGroup: rbac.authorization.k8s.io, kind: User, name: system:metrics-server}]
		---
		apiVersion: rbac.authorization.k8s.io/v1
		kind: ClusterRole
		metadata:
		  name: system:aggregated-metrics-reader
		  labels:
		    rbac.authorization.k8s.io/aggregate-to-view: "true"
		    rbac.authorization.k8s.io/aggregate-to-edit: "true"
		    rbac.authorization.k8s.io/aggregate-to-admin: "true"
		rules:
		  - apiGroups: [metrics.k8s.io]
		    resources: [pods, nodes]
		    verbs: [get, list, watch]
		---
		apiVersion: v1
		kind: Service
		metadata:
		  name: metrics-server
		  namespace: kube-system
		spec:
		  ports: [{name: https, port: 443, targetPort: 4443, protocol: TCP}]
		---
		apiVersion: discovery.k8s.io/v1
		kind: EndpointSlice
		metadata:
		  name: metrics-server
		  namespace: kube-system
		  labels: {kubernetes.io/service-name: metrics-server}
		addressType: IPv4
		ports: [{name: https, port: 4443, protocol: TCP}]
		endpoints: [{addresses: ["$NODE_IP"], conditions: {ready: true}}]
		---
		apiVersion: apiregistration.k8s.io/v1
		kind: APIService
		metadata:
		  name: v1beta1.metrics.k8s.io
		spec:
		  group: metrics.k8s.io
		  version: v1beta1
		  groupPriorityMinimum: 100
		  versionPriority: 100
		  service: {name: metrics-server, namespace: kube-system, port: 443}
		  caBundle: $(base64 -w0 "$ROOT/pki/ca.crt")
	EOF
	wait_for "metrics-server's RBAC" 30 kubectl auth can-i get configmaps/extension-apiserver-authentication -n kube-system --as system:metrics-server
	start metrics-server "$BIN/metrics-server" --bind-address "$NODE_IP" --secure-port 4443 \
		--tls-cert-file "$ROOT/pki/metrics-server.crt" --tls-private-key-file "$ROOT/pki/metrics-server.key" \
		--kubeconfig "$ROOT/metrics-server.kubeconfig" --authentication-kubeconfig "$ROOT/metrics-server.kubeconfig" \
		--authorization-kubeconfig "$ROOT/metrics-server.kubeconfig" \
		--kubelet-certificate-authority "$ROOT/pki/ca.crt" --kubelet-preferred-address-types InternalIP \
		--kubelet-use-node-status-port --metric-resolution 15s --profiling=false
	if ! kubectl wait --for=condition=Available apiservice/v1beta1.metrics.k8s.io --timeout=60s >/dev/null; then
		tail -n 20 "$ROOT/logs/metrics-server.log" >&2
		die "metrics-server's API did not become Available"
	fi
}

# restricted NAME: a namespace that enforces, warns and audits PodSecurity restricted.
restricted() {
	kubectl apply --server-side -f - >/dev/null <<-EOF
		apiVersion: v1
		kind: Namespace
		metadata:
		  name: $1
		  labels:
		    pod-security.kubernetes.io/enforce: restricted
		    pod-security.kubernetes.io/enforce-version: latest
		    pod-security.kubernetes.io/warn: restricted
		    pod-security.kubernetes.io/warn-version: latest
		    pod-security.kubernetes.io/audit: restricted
		    pod-security.kubernetes.io/audit-version: latest
	EOF
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
	cat >"$ROOT/up" <<-EOF
		overlay=$OVERLAY
		port=$PORT
		admin_port=$ADMIN_PORT
		pod=$pod
		tag=$TAG
	EOF
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
	! ip link show "$HOST_IF" >/dev/null 2>&1 || die "a link $HOST_IF exists already: another node? (make kube-down)"
	# The link's /30 must be free here (the Pods' and Services' ranges live only inside the node).
	[ -z "$(ip -4 route show to match "$NODE_IP" | grep -v '^default')" ] || die "$NODE_IP is routed on this machine already: the node's link $HOST_IP/30 would clash"
	local t0=$SECONDS
	mkdir -p "$ROOT"/{pids,logs,bin}
	touch "$ROOT/$MARK"
	# A failed start leaves nothing behind either (KEEP_ON_FAILURE=1 keeps it to look at).
	trap 'rc=$?; if ((rc != 0)) && [ -z "${KEEP_ON_FAILURE:-}" ]; then say "kube-up failed: taking down what it made"; down >&2 || true; fi' EXIT
	save_sysctls
	echo "$PREFIX/pause:$TAG" >"$ROOT/built-images"
	(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o bin/showcase-pause ./deploy/kube-node/pause)
	cp "$repo/bin/showcase-pause" "$ROOT/bin/pause"
	# The node's namespaces, held by one pause process.
	start_host node unshare --net --mount --propagation slave -- "$ROOT/bin/pause"
	wait_for "the node's namespaces" 10 anchored
	network
	private_mounts
	cgroups
	pki
	control_plane
	runtime
	images
	node
	metrics
	workload
	forward
	say "up in $((SECONDS - t0))s"
	status
	echo "make kube-down removes it all"
}

# prometheus: Prometheus in the node, in the namespace monitoring
# (PodSecurity restricted), built from the Go module proxy into an image
# FROM scratch; its API forwarded to 127.0.0.1:PROM_PORT.
prometheus() {
	[ -x "$BIN/prometheus" ] || die "missing: $BIN/prometheus (scripts/kube-deps.sh builds it)"
	! port_taken "$PROM_PORT" || die "port $PROM_PORT is taken; choose another: PROM_PORT=..."
	# shellcheck disable=SC1091
	. "$ROOT/up"
	# shellcheck disable=SC2154 # up's record
	TAG=$tag
	local ctx out
	ctx=$(mktemp -d)
	cp "$BIN/prometheus" "$ctx/prometheus"
	printf 'FROM scratch\nCOPY prometheus /bin/prometheus\nUSER 65534:65534\nENTRYPOINT ["/bin/prometheus"]\n' >"$ctx/Dockerfile"
	out=$(docker build -q -t "$PREFIX/prometheus:$TAG" "$ctx" 2>&1) || die "docker build of the Prometheus image: $out"
	rm -rf "$ctx"
	echo "$PREFIX/prometheus:$TAG" >>"$ROOT/built-images"
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

# ---------------------------------------------------------------- down

# node_pids: every process of the node: those in its network or mount
# namespace (the daemons and containerd's shims), and those in its
# cgroups (the containers).
node_pids() {
	local a net mnt p
	a=$(anchor_pid)
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
	local dirs
	dirs=$(cgroup_dirs)
	# shellcheck disable=SC2086
	[ -z "$dirs" ] || find $dirs -name cgroup.procs -exec cat {} + 2>/dev/null || true
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
	local name pid i pids dirs
	# The daemons first, politely: the API server's clients before it.
	for name in "${DAEMONS[@]}"; do
		pid=$(cat "$ROOT/pids/$name" 2>/dev/null || true)
		! ours "$pid" || kill -TERM "$pid" 2>/dev/null || true
	done
	for ((i = 0; i < 40; i++)); do
		local any=
		for name in "${DAEMONS[@]}"; do
			! ours "$(cat "$ROOT/pids/$name" 2>/dev/null || true)" || any=1
		done
		[ -n "$any" ] || break
		sleep 0.25
	done
	for name in "${DAEMONS[@]}"; do
		pid=$(cat "$ROOT/pids/$name" 2>/dev/null || true)
		! ours "$pid" || kill -KILL "$pid" 2>/dev/null || true
	done
	# Then everything left of the node: shims, containers, the anchor last.
	for ((i = 0; i < 40; i++)); do
		pids=$(node_pids | sort -u | grep -vx "$(anchor_pid)" || true)
		[ -n "$pids" ] || break
		# shellcheck disable=SC2086
		kill -KILL $pids 2>/dev/null || true
		sleep 0.25
	done
	pid=$(anchor_pid)
	if alive "$pid" && [[ $(readlink "/proc/$pid/exe" 2>/dev/null) == "$ROOT/bin/pause"* ]]; then
		kill -TERM "$pid" 2>/dev/null || true
		for ((i = 0; i < 20; i++)); do alive "$pid" || break; sleep 0.25; done
		! alive "$pid" || kill -KILL "$pid" 2>/dev/null || true
	fi
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
	# The images up built into Docker (pause, Prometheus); those make images built stay.
	if [ -f "$ROOT/built-images" ]; then
		# shellcheck disable=SC2046
		docker rmi $(cat "$ROOT/built-images") >/dev/null 2>&1 || true
	fi
	if [ -f "$ROOT/made-on-host" ]; then
		while IFS= read -r p; do
			[ -z "$p" ] || rmdir "$p" 2>/dev/null || say "could not remove $p (not empty?)"
		done <"$ROOT/made-on-host"
	fi
	# Nothing of the node should still be mounted on the host; if it is, undo it.
	{ grep -F " $ROOT" /proc/self/mountinfo || true; } | awk '{print $5}' | sort -r | while read -r m; do
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
exec)
	is_up || die "not up"
	# exec: the command gets this PID, and the signals sent to it.
	exec nsenter -t "$(anchor_pid)" -n -m -- "$@"
	;;
*)
	echo "usage: $0 up|down|status|prometheus|load IMAGE...|exec CMD..." >&2
	exit 2
	;;
esac
