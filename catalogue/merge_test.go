package catalogue

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// replicaTruth is the ground truth of a replica started at since that
// received requests, with the exposure and reached counts set by f.
func replicaTruth(since time.Time, requests uint64, f func(t *Truth)) Truth {
	t := GroundTruth(All())
	t.ExposureSince, t.Requests = &since, &requests
	for i := range t.Defects {
		t.Defects[i].Exposure = &Exposure{}
		t.Defects[i].Reached = &Reached{ByStatus: map[string]uint64{"2xx": 0, "3xx": 0, "4xx": 0, "5xx": 0}}
	}
	f(&t)
	return t
}

func at(t0 time.Time, s int) *time.Time { x := t0.Add(time.Duration(s) * time.Second); return &x }

// Two replicas' counts, merged as by hand: SEC-01 triggered 2 times on A
// (first at 5 s, last at 9 s) and 3 on B (first at 3 s, last at 7 s) is 5
// times, first at 3 s with B's example, last at 9 s; reached 4+1 times by
// status class; the fourth defect only on A; the request indices, a replica's own,
// are gone; the earliest start is the merged one. The order of the
// replicas changes only the list of names.
func TestMergeTruthSums(t *testing.T) {
	t0 := time.Date(2026, 11, 28, 7, 0, 0, 0, time.UTC)
	one := uint64(1)
	a := replicaTruth(*at(t0, 1), 10, func(tr *Truth) {
		tr.Defects[0].Exposure = &Exposure{Count: 2, First: at(t0, 5), Last: at(t0, 9), Example: &Example{Method: "GET", Target: "/a", RequestID: "ra"}, FirstRequest: &one}
		tr.Defects[0].Reached.Count, tr.Defects[0].Reached.ByStatus["2xx"], tr.Defects[0].Reached.ByStatus["4xx"] = 4, 3, 1
		tr.Defects[0].Reached.First, tr.Defects[0].Reached.FirstRequest = at(t0, 4), &one
		tr.Defects[3].Exposure = &Exposure{Count: 1, First: at(t0, 2), Last: at(t0, 2), Example: &Example{Method: "POST", Target: "/e"}}
		tr.Defects[3].Reached.Count, tr.Defects[3].Reached.ByStatus["5xx"], tr.Defects[3].Reached.OtherMethods = 1, 1, 2
	})
	b := replicaTruth(t0, 7, func(tr *Truth) {
		tr.Defects[0].Exposure = &Exposure{Count: 3, First: at(t0, 3), Last: at(t0, 7), Example: &Example{Method: "GET", Target: "/b", RequestID: "rb"}, FirstRequest: &one}
		tr.Defects[0].Reached.Count, tr.Defects[0].Reached.ByStatus["2xx"] = 1, 1
		tr.Defects[0].Reached.First, tr.Defects[0].Reached.FirstRequest = at(t0, 3), &one
	})
	ab, err := MergeTruth([]string{"a", "b"}, []Truth{a, b})
	if err != nil {
		t.Fatal(err)
	}
	ba, err := MergeTruth([]string{"b", "a"}, []Truth{b, a})
	if err != nil {
		t.Fatal(err)
	}
	ba.Replicas = ab.Replicas
	if x, y := js(t, ab), js(t, ba); x != y {
		t.Errorf("the order of the replicas changes the merge:\n%s\n%s", x, y)
	}
	sec, other := ab.Defects[0], ab.Defects[3]
	for what, ok := range map[string]bool{
		"requests":     *ab.Requests == 17,
		"since":        ab.ExposureSince.Equal(t0),
		"replicas":     strings.Join(ab.Replicas, ",") == "a,b",
		"count":        sec.Exposure.Count == 5,
		"first, last":  sec.Exposure.First.Equal(*at(t0, 3)) && sec.Exposure.Last.Equal(*at(t0, 9)),
		"example":      sec.Exposure.Example.RequestID == "rb",
		"no index":     sec.Exposure.FirstRequest == nil && sec.Reached.FirstRequest == nil,
		"reached":      sec.Reached.Count == 5 && sec.Reached.ByStatus["2xx"] == 4 && sec.Reached.ByStatus["4xx"] == 1 && sec.Reached.First.Equal(*at(t0, 3)),
		"one replica":  other.Exposure.Count == 1 && other.Exposure.Example.Target == "/e" && other.Reached.ByStatus["5xx"] == 1 && other.Reached.OtherMethods == 2,
		"none":         ab.Defects[1].Exposure.Count == 0 && ab.Defects[1].Exposure.First == nil && ab.Defects[1].Reached.First == nil,
		"inputs as is": a.Defects[0].Exposure.Count == 2 && *a.Requests == 10 && a.Replicas == nil,
	} {
		if !ok {
			t.Errorf("merged %s wrong:\n%s", what, js(t, ab))
		}
	}
}

func TestMergeTruthRefusesAnotherSetting(t *testing.T) {
	now := time.Now()
	a := replicaTruth(now, 0, func(*Truth) {})
	b := replicaTruth(now, 0, func(tr *Truth) { tr.Setting = "none" })
	if _, err := MergeTruth([]string{"10.0.0.1:9090", "10.0.0.2:9090"}, []Truth{a, b}); err == nil ||
		err.Error() != fmt.Sprintf("10.0.0.2:9090 serves catalogue version %d with DEFECTS=none, 10.0.0.1:9090 version %d with DEFECTS=all: not replicas of one deployment", Version, Version) {
		t.Errorf("another setting: %v", err)
	}
	c := GroundTruth(All()) // a file: no counts
	if _, err := MergeTruth([]string{"x", "y"}, []Truth{a, c}); err == nil || !strings.Contains(err.Error(), "y answered a ground truth without its counts") {
		t.Errorf("no counts: %v", err)
	}
}

func js(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
