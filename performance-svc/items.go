package performancesvc

import (
	"context"
	"strconv"
	"time"
)

// itemMap builds the body of endpoint 9: {"item_0":"value_0", ...}.
//
// Every item costs itemCost (1 ms by default as planted; 0 with the defect
// switched off) and nothing bounds the total but the clamp to 1000, so the
// default request takes a full second. The pace is held against the clock: item i is
// done at start + (i+1)*itemCost, so sleeping late never adds up to drift.
//
// It gives up when ctx ends, returning ctx's error.
func itemMap(ctx context.Context, limit int, itemCost time.Duration) ([]byte, error) {
	body := make([]byte, 0, 32+limit*24)
	body = append(body, '{')
	start := time.Now()
	timer := time.NewTimer(time.Hour) // re-armed for each item
	defer timer.Stop()
	for i := 0; i < limit; i++ {
		if i > 0 {
			body = append(body, ',')
		}
		body = append(body, `"item_`...)
		body = strconv.AppendInt(body, int64(i), 10)
		body = append(body, `":"value_`...)
		body = strconv.AppendInt(body, int64(i), 10)
		body = append(body, '"')
		if wait := time.Until(start.Add(time.Duration(i+1) * itemCost)); wait > 0 {
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-timer.C:
			}
		} else if ctx.Err() != nil {
			return nil, ctx.Err()
		}
	}
	return append(body, '}'), nil
}
