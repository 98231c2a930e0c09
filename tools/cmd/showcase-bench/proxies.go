package main

import (
	"embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"text/template"
	"time"
)

// The reference proxies' configurations, each as it is run in production in
// front of a keep-alive upstream; see the comment at the top of each file.
//
//go:embed proxies
var proxyConfs embed.FS

// confValues fill in a configuration: a scratch directory, the proxy's
// address (whole, and as host and port) and its upstream's.
type confValues struct {
	Dir, Listen, Host, Port, Upstream string
}

// reference is a proxy made by others, measured in front of the yardstick.
type reference struct {
	name    string // the row's name
	bin     string // the program, looked up in PATH
	pkg     string // the Debian package it comes from
	conf    string // its configuration under proxies/
	args    func(dir, conf string) []string
	process string // the name its CPU is reported under
	dir     string // its scratch directory under the report's; the program's name if empty
}

var references = []reference{
	{name: "nginx 1.22", bin: "nginx", pkg: "nginx-light", conf: "nginx.conf", process: "nginx",
		args: func(dir, conf string) []string { return []string{"-p", dir, "-c", conf, "-g", "daemon off;"} }},
	{name: "HAProxy 2.6", bin: "haproxy", pkg: "haproxy", conf: "haproxy.cfg", process: "haproxy",
		args: func(_, conf string) []string { return []string{"-db", "-f", conf} }},
	{name: "Caddy 2.6", bin: "caddy", pkg: "caddy", conf: "Caddyfile", process: "caddy", args: caddyArgs},
	{name: "Caddy 2.6, idle pool sized to the load", bin: "caddy", pkg: "caddy", conf: "Caddyfile-pooled", process: "caddy", dir: "caddy-pooled", args: caddyArgs},
}

func caddyArgs(_, conf string) []string {
	return []string{"run", "--adapter", "caddyfile", "--config", conf}
}

// startReference writes ref's configuration into its own directory under
// out and starts it in front of upstream. It returns nil, nil when the
// program is not installed.
func startReference(ref reference, out, upstream string) (*target, error) {
	if _, err := exec.LookPath(ref.bin); err != nil {
		fmt.Printf("%s is not installed (apt-get install %s): its row is left out\n", ref.bin, ref.pkg)
		return nil, nil
	}
	name := ref.dir
	if name == "" {
		name = ref.bin
	}
	dir, err := filepath.Abs(filepath.Join(out, name))
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	listen := freeAddr()
	conf, err := writeConf(ref, dir, listen, upstream)
	if err != nil {
		return nil, err
	}
	// Caddy keeps its state under XDG directories: the scratch one.
	env := []string{"XDG_DATA_HOME=" + dir, "XDG_CONFIG_HOME=" + dir, "HOME=" + dir}
	p, took, err := start(ref.process, ref.bin, ref.args(dir, conf), env, "http://"+listen+missingField)
	if err != nil {
		return nil, err
	}
	return &target{name: ref.name, base: "http://" + listen, procs: []*proc{p}, ready: map[string]time.Duration{ref.process: took}}, nil
}

// writeConf fills in ref's configuration for a proxy on listen in front of
// upstream, with dir as its scratch directory, and writes it there.
func writeConf(ref reference, dir, listen, upstream string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", err
	}
	tmpl, err := template.ParseFS(proxyConfs, "proxies/"+ref.conf)
	if err != nil {
		return "", err
	}
	tmpl.Option("missingkey=error")
	path := filepath.Join(dir, ref.conf)
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	err = tmpl.Execute(f, confValues{Dir: dir, Listen: listen, Host: host, Port: port, Upstream: upstream})
	return path, errors.Join(err, f.Close())
}

// plainProxy is the naive reference: httputil.ReverseProxy with its default
// settings, as most Go gateways start.
func plainProxy(addr, target string) {
	u, err := url.Parse(target)
	if err != nil {
		panic(err)
	}
	_ = http.ListenAndServe(addr, httputil.NewSingleHostReverseProxy(u))
}
