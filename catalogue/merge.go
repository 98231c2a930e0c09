package catalogue

import (
	"fmt"
	"slices"
)

// MergeTruth is the ground truth of a deployment whose replicas answered
// parts, each as its /defects serves it, named by names (the same order):
// one instance that received every request any replica received. The
// replicas must serve the same catalogue with the same setting.
//
//   - Requests, and each defect's exposure and reached counts (by status
//     class and other methods), are summed.
//   - ExposureSince, and each first time, is the earliest; each last time
//     the latest; a defect's example is the one of its first trigger.
//   - Request indices (first_request) are a replica's own order, which no
//     merge can make one: the merged truth has none.
//
// Replicas is set to names. The result is the same whatever the order of
// parts, but for which example a tie of first times keeps (the first
// name's).
func MergeTruth(names []string, parts []Truth) (Truth, error) {
	if len(parts) == 0 || len(names) != len(parts) {
		return Truth{}, fmt.Errorf("merge of %d parts named %d times", len(parts), len(names))
	}
	out := parts[0]
	out.Replicas = slices.Clone(names)
	out.Defects = slices.Clone(parts[0].Defects)
	var requests uint64
	for i, p := range parts {
		if p.Version != out.Version || p.Setting != out.Setting || len(p.Defects) != len(out.Defects) {
			return Truth{}, fmt.Errorf("%s serves catalogue version %d with DEFECTS=%s, %s version %d with DEFECTS=%s: not replicas of one deployment",
				names[i], p.Version, p.Setting, names[0], out.Version, out.Setting)
		}
		if p.ExposureSince == nil || p.Requests == nil {
			return Truth{}, fmt.Errorf("%s answered a ground truth without its counts", names[i])
		}
		requests += *p.Requests
		if i == 0 || p.ExposureSince.Before(*out.ExposureSince) {
			out.ExposureSince = p.ExposureSince
		}
		for j, d := range p.Defects {
			if d.ID != out.Defects[j].ID {
				return Truth{}, fmt.Errorf("%s lists %s where %s lists %s: not replicas of one deployment", names[i], d.ID, names[0], out.Defects[j].ID)
			}
			if i == 0 {
				out.Defects[j].Exposure, out.Defects[j].Reached = &Exposure{}, &Reached{ByStatus: map[string]uint64{}}
				for _, c := range StatusClasses {
					out.Defects[j].Reached.ByStatus[c] = 0
				}
			}
			mergeExposure(out.Defects[j].Exposure, d.Exposure)
			mergeReached(out.Defects[j].Reached, d.Reached)
		}
	}
	out.Requests = &requests
	return out, nil
}

func mergeExposure(into, e *Exposure) {
	if e == nil || e.Count == 0 {
		return
	}
	if into.Count == 0 || e.First != nil && into.First != nil && e.First.Before(*into.First) {
		into.First, into.Example = e.First, e.Example
	}
	if into.Count == 0 || e.Last != nil && into.Last != nil && e.Last.After(*into.Last) {
		into.Last = e.Last
	}
	into.Count += e.Count
}

func mergeReached(into, r *Reached) {
	if r == nil {
		return
	}
	if r.Count > 0 && (into.Count == 0 || r.First != nil && into.First != nil && r.First.Before(*into.First)) {
		into.First = r.First
	}
	into.Count += r.Count
	into.NoAnswer += r.NoAnswer
	into.OtherMethods += r.OtherMethods
	for c, n := range r.ByStatus {
		into.ByStatus[c] += n
	}
}
