package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
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
	slices.Sort(v)
	return v[len(v)/2]
}

func report(out string, targets []*target, clientCPU float64, ep9, ep10 []point, idle1000, busy1000, fib []time.Duration, fibRSS, fibCPU float64, iso []time.Duration) error {
	var b strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	w("# Benchmark report\n\n%s, %d CPUs. GET %s with wrk, 64 connections; %d interleaved rounds per target, medians shown; ratios are per round against the yardstick of the same round.\n\n",
		time.Now().UTC().Format("2006-01-02 15:04 MST"), numCPU(), missingField, len(targets[0].rounds))
	yard := targets[0]
	w("| target | requests/s | × yardstick | p50 ms | p90 ms | p99 ms | errors | CPU µs/request (per process) | RSS MB after (idle) | ready ms |\n|---|---|---|---|---|---|---|---|---|---|\n")
	var errorsTotal int64
	ratios := map[string]float64{}
	for _, t := range targets {
		var rs []float64
		for i, r := range t.rounds {
			rs = append(rs, r.rps/yard.rounds[i].rps)
			errorsTotal += r.errors
		}
		slices.Sort(rs)
		ratios[t.name] = rs[len(rs)/2]
		var cpu, mem, ready []string
		for _, p := range t.procs {
			cpu = append(cpu, fmt.Sprintf("%s %.1f", p.name, medianOf(t.rounds, func(r roundResult) float64 { return r.cpuPerReq[p.name] })))
			mem = append(mem, fmt.Sprintf("%s %.1f (%.1f)", p.name, medianOf(t.rounds, func(r roundResult) float64 { return r.rss[p.name] }), t.idleRSS[p.name]))
			ready = append(ready, fmt.Sprintf("%s %d", p.name, t.ready[p.name].Milliseconds()))
		}
		var errs int64
		for _, r := range t.rounds {
			errs += r.errors
		}
		w("| %s | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %s | %s | %s |\n", t.name,
			medianOf(t.rounds, func(r roundResult) float64 { return r.rps }), ratios[t.name],
			medianOf(t.rounds, func(r roundResult) float64 { return float64(r.p50.Microseconds()) / 1000 }),
			medianOf(t.rounds, func(r roundResult) float64 { return float64(r.p90.Microseconds()) / 1000 }),
			medianOf(t.rounds, func(r roundResult) float64 { return float64(r.p99.Microseconds()) / 1000 }),
			errs, strings.Join(cpu, ", "), strings.Join(mem, ", "), strings.Join(ready, ", "))
	}
	w("\nRows marked → are references, not ours: other proxies in front of the yardstick, measured in the same rounds, so the gateway's cost can be read against what proxying costs on this machine at this moment.\n")
	split := targets[2]
	gwCPU := medianOf(split.rounds, func(r roundResult) float64 { return r.cpuPerReq["gateway"] })
	proxyCPU := map[string]float64{"gateway": gwCPU}
	for _, t := range targets {
		if t.reference {
			proxyCPU[t.procs[0].name] = medianOf(t.rounds, func(r roundResult) float64 { return r.cpuPerReq[t.procs[0].name] })
		}
	}
	dev := func(ds []time.Duration) float64 { return 100 * (median(ds).Seconds() - 1) }
	var idleMax, readyMax float64
	for _, t := range targets[1:] {
		if t.reference {
			continue
		}
		for _, p := range t.procs {
			idleMax = math.Max(idleMax, t.idleRSS[p.name])
			readyMax = math.Max(readyMax, float64(t.ready[p.name].Milliseconds()))
		}
	}
	grows := true
	for i := 1; i < len(ep10); i++ {
		grows = grows && ep10[i].secs > ep10[i-1].secs
	}
	isoP99 := float64(quantile(iso, 0.99).Microseconds()) / 1000
	check := func(ok bool) string {
		if ok {
			return "met"
		}
		return "**not met**"
	}
	w("\n## Targets\n\n| target | measured | |\n|---|---|---|\n")
	w("| split gateway ≥ 0.45× yardstick | %.2f× | %s |\n", ratios["split"], check(ratios["split"] >= 0.45))
	w("| split gateway ≤ 30 µs CPU per proxied request | %.1f µs | %s |\n", gwCPU, check(gwCPU <= 30))
	for _, ref := range []string{"nginx", "reverseproxy"} {
		if c, ok := proxyCPU[ref]; ok {
			w("| (reference, not a target) %s's CPU per proxied request, same run | %.1f µs; the gateway spends %.2f× that | |\n", ref, c, gwCPU/c)
		}
	}
	serverCPU := medianOf(yard.rounds, func(r roundResult) float64 { return r.cpuPerReq["yardstick"] })
	w("| (reference, not a target) floor of any net/http gateway, same run: the yardstick's server %.1f µs + net/http's client %.1f µs | %.1f µs | |\n", serverCPU, clientCPU, serverCPU+clientCPU)
	w("| one process ≥ 0.7× yardstick (logging and metrics on) | %.2f× | %s |\n", ratios["one-process"], check(ratios["one-process"] >= 0.7))
	w("| endpoint 9, limit=1000: 1.000 s ± 0.5 %%, idle | %s s (%+.2f %%) | %s |\n", fmt.Sprintf("%.4f", median(idle1000).Seconds()), dev(idle1000), check(math.Abs(dev(idle1000)) <= 0.5))
	w("| endpoint 9, limit=1000: 1.000 s ± 0.5 %%, all cores saturated | %s s (%+.2f %%) | %s |\n", fmt.Sprintf("%.4f", median(busy1000).Seconds()), dev(busy1000), check(math.Abs(dev(busy1000)) <= 0.5))
	w("| endpoint 10, n=100000: 1.1-1.5 s | %.3f s | %s |\n", median(fib).Seconds(), check(median(fib).Seconds() >= 1.1 && median(fib).Seconds() <= 1.5))
	w("| endpoint 10, n=100000: real CPU work, a core busy for most of the request | %.2f CPU s per request (%.0f %% of its time) | %s |\n", fibCPU, 100*fibCPU/median(fib).Seconds(), check(fibCPU >= 0.8*median(fib).Seconds()))
	offCurve := 0.0 // the largest distance from the cost model, n ≥ 30000
	for _, p := range ep10 {
		if p.x >= 30000 {
			model := 1.2 * math.Pow(float64(p.x)/100000, 2)
			if d := 100 * (p.secs - model) / model; math.Abs(d) > math.Abs(offCurve) {
				offCurve = d
			}
		}
	}
	w("| endpoint 10 on the curve 1.2 s·(n/100000)², n = 30000 to 100000: within ±10 %% | worst %+.1f %% | %s |\n", offCurve, check(math.Abs(offCurve) <= 10))
	w("| endpoint 10, n=100000: ≤ 16 MB more resident memory | %.1f MB (peak RSS growth) | %s |\n", fibRSS, check(fibRSS <= 16))
	w("| endpoint 10: time grows with n | %v | %s |\n", grows, check(grows))
	w("| isolation: missing-field p99 ≤ 10 ms while 8 clients hammer n=100000 | %.2f ms (p50 %s ms) | %s |\n", isoP99, ms(median(iso)), check(isoP99 <= 10))
	w("| every process idles at ≤ 15 MB resident | max %.1f MB | %s |\n", idleMax, check(idleMax <= 15))
	w("| every process ready ≤ 200 ms after start | max %.0f ms | %s |\n", readyMax, check(readyMax <= 200))
	w("| no errors | %d | %s |\n", errorsTotal, check(errorsTotal == 0))
	w("\n## Cost models\n\n![endpoint 9](endpoint9.svg)\n\n![endpoint 10](endpoint10.svg)\n\n| limit | seconds |\n|---|---|\n")
	for _, p := range ep9 {
		w("| %d | %.4f |\n", p.x, p.secs)
	}
	w("\n| n | seconds |\n|---|---|\n")
	for _, p := range ep10 {
		w("| %d | %.3f |\n", p.x, p.secs)
	}
	if err := os.WriteFile(filepath.Join(out, "endpoint9.svg"), []byte(plot("Endpoint 9: latency against limit", "limit", ep9)), 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(out, "endpoint10.svg"), []byte(plot("Endpoint 10: latency against n", "n", ep10)), 0o644); err != nil {
		return err
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
