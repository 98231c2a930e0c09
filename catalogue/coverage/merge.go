package coverage

import (
	"cmp"
	"fmt"
	"slices"
)

// Merge is the API coverage of a deployment whose replicas answered reps,
// as one instance that received every request any of them received would
// count it: every count summed, an undocumented status or media type that
// any replica saw listed once, Since the earliest, and the criteria and
// the TCL computed again. A target is covered when any replica covered
// it: the covered targets are the union of the replicas' sets. The order
// of reps does not change the result. The replicas must serve the same
// contract; the inputs are not changed.
func Merge(reps ...*Report) (*Report, error) {
	if len(reps) == 0 {
		return nil, fmt.Errorf("no coverage to merge")
	}
	out := &Report{Since: reps[0].Since}
	for i, r := range reps {
		if len(r.Operations) != len(reps[0].Operations) {
			return nil, fmt.Errorf("coverage %d counts %d operations, coverage 1 %d: not the same contract", i+1, len(r.Operations), len(reps[0].Operations))
		}
		if r.Since.Before(out.Since) {
			out.Since = r.Since
		}
		out.Requests += r.Requests
		out.Undeclared.Paths += r.Undeclared.Paths
		out.Undeclared.Methods += r.Undeclared.Methods
		for j, o := range r.Operations {
			if i == 0 {
				out.Operations = append(out.Operations, cloneOperation(o))
				continue
			}
			into := &out.Operations[j]
			if into.Method != o.Method || into.Path != o.Path {
				return nil, fmt.Errorf("coverage %d has %s %s where coverage 1 has %s %s: not the same contract", i+1, o.Method, o.Path, into.Method, into.Path)
			}
			if err := mergeOperation(into, &o); err != nil {
				return nil, fmt.Errorf("coverage %d, %s %s: %w", i+1, o.Method, o.Path, err)
			}
		}
	}
	out.Compute()
	return out, nil
}

// mergeOperation adds o's counts to into's.
func mergeOperation(into, o *OperationCovered) error {
	into.Requests += o.Requests
	into.NoAnswer += o.NoAnswer
	var err error
	into.Parameters, err = mergeBy(into.Parameters, o.Parameters, false,
		func(p ParameterSent) string { return p.In + " " + p.Name },
		func(a *ParameterSent, b ParameterSent) error {
			a.Sent += b.Sent
			a.Values, err = mergeBy(a.Values, b.Values, false, func(v ValueSent) string { return v.Value },
				func(x *ValueSent, y ValueSent) error { x.Sent += y.Sent; return nil })
			return err
		})
	if err != nil {
		return err
	}
	mediaKey := func(m MediaCount) string { return m.Type }
	addMedia := func(a *MediaCount, b MediaCount) error { a.Count += b.Count; return nil }
	if into.RequestTypes, err = mergeBy(into.RequestTypes, o.RequestTypes, true, mediaKey, addMedia); err != nil {
		return err
	}
	if into.ResponseTypes, err = mergeBy(into.ResponseTypes, o.ResponseTypes, true, mediaKey, addMedia); err != nil {
		return err
	}
	sortUndocumented(into.RequestTypes)
	sortUndocumented(into.ResponseTypes)
	into.Responses, err = mergeBy(into.Responses, o.Responses, false, func(r ResponseAnswered) string { return r.Status },
		func(a *ResponseAnswered, b ResponseAnswered) error {
			a.Answered += b.Answered
			a.Properties, err = mergeBy(a.Properties, b.Properties, false, func(p PropertyCarried) string { return p.Name },
				func(x *PropertyCarried, y PropertyCarried) error { x.Carried += y.Carried; return nil })
			return err
		})
	if err != nil {
		return err
	}
	into.StatusClasses, err = mergeBy(into.StatusClasses, o.StatusClasses, false, func(c ClassAnswered) string { return c.Class },
		func(a *ClassAnswered, b ClassAnswered) error { a.Answered += b.Answered; return nil })
	if err != nil {
		return err
	}
	// The statuses answered differ from replica to replica: each is kept
	// once, in ascending order, as an instance lists them.
	into.Statuses, err = mergeBy(into.Statuses, o.Statuses, true, func(s StatusAnswered) string { return fmt.Sprint(s.Status) },
		func(a *StatusAnswered, b StatusAnswered) error {
			if a.Response != b.Response {
				return fmt.Errorf("status %d falls under response %q in one, %q in another", a.Status, a.Response, b.Response)
			}
			a.Answered += b.Answered
			return nil
		})
	slices.SortStableFunc(into.Statuses, func(a, b StatusAnswered) int { return cmp.Compare(a.Status, b.Status) })
	return err
}

// mergeBy adds the items of from to those of into with the same key. The
// contract declares the same items in every replica's list: with open
// false, an item of from that into lacks is an error. With open
// (undocumented media types and statuses, which differ by replica), it is
// added after the others.
func mergeBy[T any](into, from []T, open bool, key func(T) string, add func(*T, T) error) ([]T, error) {
	at := make(map[string]int, len(into))
	for i, v := range into {
		at[key(v)] = i
	}
	for _, f := range from {
		i, ok := at[key(f)]
		if !ok {
			if !open {
				return nil, fmt.Errorf("%s is not in every replica's contract", key(f))
			}
			into = append(into, f)
			at[key(f)] = len(into) - 1
			continue
		}
		if err := add(&into[i], f); err != nil {
			return nil, err
		}
	}
	return into, nil
}

// sortUndocumented puts the undocumented media types, which follow the
// documented ones, in the order of their names, as an instance lists them.
func sortUndocumented(m []MediaCount) {
	i := slices.IndexFunc(m, func(c MediaCount) bool { return !c.Documented })
	if i >= 0 {
		slices.SortStableFunc(m[i:], func(a, b MediaCount) int { return cmp.Compare(a.Type, b.Type) })
	}
}

// cloneOperation is a copy of o that shares no list with it.
func cloneOperation(o OperationCovered) OperationCovered {
	o.Parameters = slices.Clone(o.Parameters)
	for i := range o.Parameters {
		o.Parameters[i].Values = slices.Clone(o.Parameters[i].Values)
	}
	o.Responses = slices.Clone(o.Responses)
	for i := range o.Responses {
		o.Responses[i].Properties = slices.Clone(o.Responses[i].Properties)
	}
	o.RequestTypes, o.ResponseTypes = slices.Clone(o.RequestTypes), slices.Clone(o.ResponseTypes)
	o.Statuses, o.StatusClasses = slices.Clone(o.Statuses), slices.Clone(o.StatusClasses)
	return o
}
