package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d.Microseconds())/1000) }

// medianOf is the median over rounds of f.
func medianOf(rs []roundResult, f func(roundResult) float64) float64 {
	var v []float64
	for _, r := range rs {
		v = append(v, f(r))
	}
	return medianFloat(v)
}

// costs are the figures measured after the rounds, for the full report.
type costs struct {
	ep9, ep10               []point
	idle1000, busy1000, fib []time.Duration
	fibRSS, fibCPU          float64
	iso                     []time.Duration
	load                    []ceilingStep // the load tool's ceiling, every rate tried
}

// medianRatio is the median over rounds of f(round i, its result): for
// ratios against other targets' round i, measured in the same round.
func medianRatio(rs []roundResult, f func(i int, r roundResult) float64) float64 {
	var v []float64
	for i, r := range rs {
		v = append(v, f(i, r))
	}
	return medianFloat(v)
}

func report(out string, targets []*target, clientCPU, rate float64, c *costs) error {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmark report\n\n%s, %d CPUs. GET %s with wrk, 64 connections; %d interleaved rounds per target, medians shown; ratios are per round against the yardstick of the same round.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), numCPU(), missingField, len(targets[0].rounds))
	yard := targets[0]
	byName := map[string]*target{}
	var errorsTotal int64
	for _, t := range targets {
		byName[t.name] = t
		for _, r := range t.rounds {
			errorsTotal += r.errors
		}
	}
	cpuOf := func(t *target, proc string) float64 {
		return medianOf(t.rounds, func(r roundResult) float64 { return r.cpuPerReq[proc] })
	}
	ratio := func(t *target) float64 {
		return medianRatio(t.rounds, func(i int, r roundResult) float64 { return r.rps / yard.rounds[i].rps })
	}
	errs := func(t *target) (n int64) {
		for _, r := range t.rounds {
			n += r.errors
		}
		return n
	}
	med := func(t *target, f func(roundResult) time.Duration) float64 {
		return medianOf(t.rounds, func(r roundResult) float64 { return float64(f(r).Microseconds()) / 1000 })
	}

	if c != nil {
		w("## Our service\n\n| target | requests/s | × yardstick | p50 ms | p90 ms | p99 ms | errors | CPU µs/request (per process) | RSS MB after (idle) | ready ms |\n|---|---|---|---|---|---|---|---|---|---|\n")
		for _, t := range targets {
			if t.proxy {
				continue
			}
			var cpu, mem, ready []string
			for _, p := range t.procs {
				cpu = append(cpu, fmt.Sprintf("%s %.1f", p.name, cpuOf(t, p.name)))
				mem = append(mem, fmt.Sprintf("%s %.1f (%.1f)", p.name, medianOf(t.rounds, func(r roundResult) float64 { return r.rss[p.name] }), t.idleRSS[p.name]))
				ready = append(ready, fmt.Sprintf("%s %d", p.name, t.ready[p.name].Milliseconds()))
			}
			w("| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %s | %s | %s |\n", t.name,
				medianOf(t.rounds, func(r roundResult) float64 { return r.rps }), ratio(t),
				med(t, func(r roundResult) time.Duration { return r.p50 }), med(t, func(r roundResult) time.Duration { return r.p90 }),
				med(t, func(r roundResult) time.Duration { return r.p99 }),
				errs(t), strings.Join(cpu, ", "), strings.Join(mem, ", "), strings.Join(ready, ", "))
		}
		w("\n")
		writeCeiling(w, c.load, medianOf(byName["one-process"].rounds, func(r roundResult) float64 { return r.rps }))
	}

	// The proxies, each in front of the yardstick: flat out, then all at
	// one rate.
	nginx, caddy := byName[references[0].name], byName[references[2].name]
	var gw *target
	for _, t := range targets {
		if t.gateway != nil {
			gw = t
		}
	}
	upstream := func(r roundResult) float64 { return r.cpuPerReq["yardstick"] }
	front := func(t *target) string { return t.procs[0].name }
	flatFloor := func(i int) float64 { return yard.rounds[i].cpuPerReq["yardstick"] + clientCPU }
	pacedFloor := func(i int) float64 { return yard.paced[i].cpuPerReq["yardstick"] + yard.paced[i].cpuPerReq["client"] }
	// vsFloor and vsNginx are ratios within each round, medians.
	vsFloor := func(rs []roundResult, floor func(int) float64, proc string) float64 {
		return medianRatio(rs, func(i int, r roundResult) float64 { return r.cpuPerReq[proc] / floor(i) })
	}
	vsNginx := func(rs, ng []roundResult) float64 {
		return medianRatio(rs, func(i int, r roundResult) float64 { return upstream(r) / upstream(ng[i]) })
	}
	name := func(t *target) string {
		if t.ours {
			return "**" + t.name + "**"
		}
		return t.name
	}
	w("## In front of the same server\n\nEach proxy in front of the yardstick, in the same rounds. *Proxy CPU* is the proxy's own (all its processes and threads); *upstream CPU* the yardstick's while that proxy drove it. The *floor* is what any `net/http` proxy must spend at least: the yardstick's server alone plus `net/http`'s client alone, measured in the same run (the `GOMAXPROCS=1` row is measured against the same floor, of programs at Go's default).\n\n")
	w("### Flat out\n\nwrk, 64 connections, as fast as each answers; `net/http`'s client alone against the yardstick: %.1f µs per request.\n\n", clientCPU)
	w("| in front of the yardstick | requests/s | × alone | p50 ms | p99 ms | errors | proxy CPU µs/request | × floor | upstream CPU µs/request | × behind nginx | proxy RSS MB after (idle) |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
	w("| nothing: the yardstick alone | %.0f | 1.00 | %.2f | %.2f | %d | — | — | %.1f | | |\n",
		medianOf(yard.rounds, func(r roundResult) float64 { return r.rps }),
		med(yard, func(r roundResult) time.Duration { return r.p50 }), med(yard, func(r roundResult) time.Duration { return r.p99 }),
		errs(yard), cpuOf(yard, "yardstick"))
	behindNginx := func(rs func(*target) []roundResult, t *target) string {
		if nginx == nil {
			return "—"
		}
		return fmt.Sprintf("%.2f", vsNginx(rs(t), rs(nginx)))
	}
	flat := func(t *target) []roundResult { return t.rounds }
	atRate := func(t *target) []roundResult { return t.paced }
	for _, t := range targets {
		if !t.proxy {
			continue
		}
		p := front(t)
		w("| %s | %.0f | %.2f | %.2f | %.2f | %d | %.1f | %.2f | %.1f | %s | %.1f (%.1f) |\n", name(t),
			medianOf(t.rounds, func(r roundResult) float64 { return r.rps }), ratio(t),
			med(t, func(r roundResult) time.Duration { return r.p50 }), med(t, func(r roundResult) time.Duration { return r.p99 }),
			errs(t), cpuOf(t, p), vsFloor(t.rounds, flatFloor, p),
			medianOf(t.rounds, upstream), behindNginx(flat, t),
			medianOf(t.rounds, func(r roundResult) float64 { return r.rss[p] }), t.idleRSS[p])
	}
	w("| floor of a `net/http` proxy | | | | | | %.1f | 1.00 | | | |\n", medianRatio(yard.rounds, func(i int, _ roundResult) float64 { return flatFloor(i) }))

	if len(yard.paced) > 0 {
		w("\n### At %.0f requests/s, every row\n\nA Go server spends less CPU per request the busier it is (fewer wake-ups per request), so flat-out figures mix what a proxy costs with how fast it goes. Here `net/http`'s client drives each row at the same rate, half the flat-out rate of the slowest proxy (the plain ReverseProxy apart), 64 connections; the floor is the yardstick's CPU and the client's own while the client drives the yardstick alone at that rate.\n\n", rate)
		w("| in front of the yardstick | requests/s reached | proxy CPU µs/request | × floor | upstream CPU µs/request | × behind nginx | client CPU µs/request |\n|---|---|---|---|---|---|---|\n")
		w("| nothing: the yardstick alone | %.0f | — | — | %.1f | | %.1f |\n", medianOf(yard.paced, func(r roundResult) float64 { return r.rps }), medianOf(yard.paced, upstream),
			medianOf(yard.paced, func(r roundResult) float64 { return r.cpuPerReq["client"] }))
		for _, t := range targets {
			if !t.proxy {
				continue
			}
			p := front(t)
			w("| %s | %.0f | %.1f | %.2f | %.1f | %s | %.1f |\n", name(t),
				medianOf(t.paced, func(r roundResult) float64 { return r.rps }),
				medianOf(t.paced, func(r roundResult) float64 { return r.cpuPerReq[p] }), vsFloor(t.paced, pacedFloor, p),
				medianOf(t.paced, upstream), behindNginx(atRate, t),
				medianOf(t.paced, func(r roundResult) float64 { return r.cpuPerReq["client"] }))
		}
		w("| floor of a `net/http` proxy | | %.1f | 1.00 | | | |\n", medianRatio(yard.paced, func(i int, _ roundResult) float64 { return pacedFloor(i) }))
	}

	check := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	w("\n## Targets\n\n| target | measured | |\n|---|---|---|\n")
	if gw != nil {
		if nginx != nil && len(gw.paced) > 0 {
			x := vsNginx(gw.paced, nginx.paced)
			w("| the upstream's CPU per request behind our gateway ≤ 1.1× behind nginx, at the same rate | %.2f× | %s |\n", x, check(x <= 1.1))
			w("| (the same, flat out: not a target, the rates differ) | %.2f× | |\n", vsNginx(gw.rounds, nginx.rounds))
		}
		if len(gw.paced) > 0 {
			x := vsFloor(gw.paced, pacedFloor, "gateway")
			w("| our gateway's CPU per request ≤ 1.15× the floor, at the same rate | %.2f× | %s |\n", x, check(x <= 1.15))
		}
		w("| (the same, flat out against the flat-out floor: not a target, the rates differ) | %.2f× | |\n", vsFloor(gw.rounds, flatFloor, "gateway"))
		if caddy != nil {
			rps := medianRatio(gw.rounds, func(i int, r roundResult) float64 { return r.rps / caddy.rounds[i].rps })
			w("| our gateway ahead of Caddy in requests/s, flat out | %.2f× Caddy's | %s |\n", rps, check(rps > 1))
			cpu := func(rs, cd []roundResult) float64 {
				return medianRatio(rs, func(i int, r roundResult) float64 { return r.cpuPerReq["gateway"] / cd[i].cpuPerReq["caddy"] })
			}
			x := cpu(gw.rounds, caddy.rounds)
			w("| our gateway ahead of Caddy in CPU per request, flat out | %.2f× Caddy's | %s |\n", x, check(x < 1))
			if len(gw.paced) > 0 {
				x := cpu(gw.paced, caddy.paced)
				w("| our gateway ahead of Caddy in CPU per request, at the same rate | %.2f× Caddy's | %s |\n", x, check(x < 1))
			}
		}
	}
	if c != nil {
		split, one := byName["split"], byName["one-process"]
		gwCPU := cpuOf(split, "gateway")
		dev := func(ds []time.Duration) float64 { return 100 * (median(ds).Seconds() - 1) }
		var idleMax, readyMax float64
		for _, t := range targets {
			if !t.ours {
				continue
			}
			procs := t.procs
			if t.proxy {
				procs = procs[:1] // the yardstick behind it is not ours
			}
			for _, p := range procs {
				idleMax = math.Max(idleMax, t.idleRSS[p.name])
				readyMax = math.Max(readyMax, float64(t.ready[p.name].Milliseconds()))
			}
		}
		grows := true
		for i := 1; i < len(c.ep10); i++ {
			grows = grows && c.ep10[i].secs > c.ep10[i-1].secs
		}
		isoP99 := float64(quantile(c.iso, 0.99).Microseconds()) / 1000
		w("| split gateway ≥ 0.45× yardstick | %.2f× | %s |\n", ratio(split), check(ratio(split) >= 0.45))
		w("| split gateway ≤ 30 µs CPU per proxied request | %.1f µs | %s |\n", gwCPU, check(gwCPU <= 30))
		w("| one process ≥ 0.7× yardstick (logging and metrics on) | %.2f× | %s |\n", ratio(one), check(ratio(one) >= 0.7))
		w("| endpoint 9, limit=1000: 1.000 s ± 0.5 %%, idle | %s s (%+.2f %%) | %s |\n", fmt.Sprintf("%.4f", median(c.idle1000).Seconds()), dev(c.idle1000), check(math.Abs(dev(c.idle1000)) <= 0.5))
		w("| endpoint 9, limit=1000: 1.000 s ± 0.5 %%, all cores saturated | %s s (%+.2f %%) | %s |\n", fmt.Sprintf("%.4f", median(c.busy1000).Seconds()), dev(c.busy1000), check(math.Abs(dev(c.busy1000)) <= 0.5))
		w("| endpoint 10, n=100000: 1.1-1.5 s | %.3f s | %s |\n", median(c.fib).Seconds(), check(median(c.fib).Seconds() >= 1.1 && median(c.fib).Seconds() <= 1.5))
		w("| endpoint 10, n=100000: real CPU work, a core busy for most of the request | %.2f CPU s per request (%.0f %% of its time) | %s |\n", c.fibCPU, 100*c.fibCPU/median(c.fib).Seconds(), check(c.fibCPU >= 0.8*median(c.fib).Seconds()))
		offCurve := 0.0 // the largest distance from the cost model, n ≥ 30000
		for _, p := range c.ep10 {
			if p.x >= 30000 {
				model := 1.2 * math.Pow(float64(p.x)/100000, 2)
				if d := 100 * (p.secs - model) / model; math.Abs(d) > math.Abs(offCurve) {
					offCurve = d
				}
			}
		}
		w("| endpoint 10 on the curve 1.2 s·(n/100000)², n = 30000 to 100000: within ±10 %% | worst %+.1f %% | %s |\n", offCurve, check(math.Abs(offCurve) <= 10))
		w("| endpoint 10, n=100000: ≤ 16 MB more resident memory | %.1f MB (peak RSS growth) | %s |\n", c.fibRSS, check(c.fibRSS <= 16))
		w("| endpoint 10: time grows with n | %v | %s |\n", grows, check(grows))
		w("| isolation: missing-field p99 ≤ 10 ms while 8 clients hammer n=100000 | %.2f ms (p50 %s ms) | %s |\n", isoP99, ms(median(c.iso)), check(isoP99 <= 10))
		w("| every process idles at ≤ 15 MB resident | max %.1f MB | %s |\n", idleMax, check(idleMax <= 15))
		w("| every process ready ≤ 200 ms after start | max %.0f ms | %s |\n", readyMax, check(readyMax <= 200))
	}
	w("| no errors | %d | %s |\n", errorsTotal, check(errorsTotal == 0))

	if bd, err := breakdown(filepath.Join(out, "gateway.pprof")); err == nil && gw != nil {
		cpu := cpuOf(gw, "gateway")
		w("\n## Where our gateway's CPU goes\n\nA CPU profile of our gateway in front of the yardstick, flat out, in a round of its own after the others ([gateway.pprof](gateway.pprof), for `go tool pprof` with `bin/gateway`; its heaviest functions in [gateway-profile.txt](gateway-profile.txt)). Each sample goes to the first part that matches it: system calls whoever makes them, then the runtime's own work, then the code nearest the sample. µs per request are the shares of the flat-out %.1f µs above.\n\n| part | share | µs per request |\n|---|---|---|\n", cpu)
		for _, p := range bd {
			w("| %s | %.1f %% | %.1f |\n", p.name, 100*p.share, p.share*cpu)
		}
	} else if err != nil && gw != nil {
		w("\n(no profile of our gateway: %v)\n", err)
	}

	if c != nil {
		w("\n## Cost models\n\n![endpoint 9](endpoint9.svg)\n\n![endpoint 10](endpoint10.svg)\n\n| limit | seconds |\n|---|---|\n")
		for _, p := range c.ep9 {
			w("| %d | %.4f |\n", p.x, p.secs)
		}
		w("\n| n | seconds |\n|---|---|\n")
		for _, p := range c.ep10 {
			w("| %d | %.3f |\n", p.x, p.secs)
		}
		if err := os.WriteFile(filepath.Join(out, "endpoint9.svg"), []byte(plot("Endpoint 9: latency against limit", "limit", c.ep9)), 0o644); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, "endpoint10.svg"), []byte(plot("Endpoint 10: latency against n", "n", c.ep10)), 0o644); err != nil {
			return err
		}
	}
	path := filepath.Join(out, "report.md")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return err
	}
	fmt.Print(b.String())
	fmt.Println("\nreport:", path)
	return nil
}

// plot renders a line chart of seconds against x as SVG.
func plot(title, xlabel string, pts []point) string {
	const W, H, L, R, T, B = 660, 360, 70, 40, 40, 50
	maxX, maxY := 0.0, 0.0
	for _, p := range pts {
		maxX, maxY = math.Max(maxX, float64(p.x)), math.Max(maxY, p.secs)
	}
	maxY *= 1.1
	sx := func(x float64) float64 { return L + x/maxX*(W-L-R) }
	sy := func(y float64) float64 { return H - B - y/maxY*(H-T-B) }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`, W, H)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/><text x="%d" y="24" font-size="15">%s</text>`, L, title)
	fmt.Fprintf(&s, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/><line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>`, L, H-B, W-R, H-B, L, T, L, H-B)
	for i := 0; i <= 4; i++ {
		y := maxY * float64(i) / 4
		fmt.Fprintf(&s, `<text x="%d" y="%.1f" text-anchor="end">%.2f s</text><line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`, L-6, sy(y)+4, y, L, sy(y), W-R, sy(y))
		x := maxX * float64(i) / 4
		fmt.Fprintf(&s, `<text x="%.1f" y="%d" text-anchor="middle">%.0f</text>`, sx(x), H-B+18, x)
	}
	fmt.Fprintf(&s, `<text x="%d" y="%d" text-anchor="middle">%s</text>`, (W+L)/2, H-12, xlabel)
	var d []string
	for _, p := range pts {
		d = append(d, fmt.Sprintf("%.1f,%.1f", sx(float64(p.x)), sy(p.secs)))
		fmt.Fprintf(&s, `<circle cx="%.1f" cy="%.1f" r="3" fill="#1f77b4"/>`, sx(float64(p.x)), sy(p.secs))
	}
	fmt.Fprintf(&s, `<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="%s"/></svg>`, strings.Join(d, " "))
	return s.String()
}

func numCPU() int { return runtime.NumCPU() }

// writeCeiling writes the load tool's own ceiling beside what wrk holds
// against the same process and endpoint in the same run: above that rate
// a load test measures showcase-load, not the service.
func writeCeiling(w func(string, ...any), steps []ceilingStep, wrk float64) {
	held := 0.0
	for _, s := range steps {
		if s.held && s.asked > held {
			held = s.asked
		}
	}
	w("## The load tool's own ceiling\n\nThe highest rate `showcase-load` holds against `GET %s` of the one-process service (every answer 200, the rate sent within 5 %% of the rate asked, p99 under %d ms): **%.0f requests/s**, %.2f× what wrk (64 connections, flat out) gets from the same process above. Above that rate a load test measures the load tool, not the service.\n\n| asked /s | sent /s | p99 ms | held |\n|---|---|---|---|\n",
		missingField, ceilingP99, held, held/wrk)
	for _, s := range steps {
		w("| %.0f | %.0f | %.2f | %v |\n", s.asked, s.sent, s.p99, s.held)
	}
	w("\n")
}
