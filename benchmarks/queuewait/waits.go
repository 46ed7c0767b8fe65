package main

import (
	"slices"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
)

// key is an activity type on a task queue.
type key struct{ Activity, Queue string }

// waits are, per activity type and task queue, how long each activity waited from being
// scheduled to the start of the attempt that completed it (a retried activity's waits include
// its backoffs, so they are counted apart).
type waits struct {
	first map[key][]time.Duration // activities started on their first attempt
	retry map[key]int             // activities that needed more attempts
}

// waitsOf reads one history's events.
func waitsOf(events []*historypb.HistoryEvent, into *waits) {
	if into.first == nil {
		into.first, into.retry = map[key][]time.Duration{}, map[key]int{}
	}
	scheduled := map[int64]*historypb.HistoryEvent{}
	for _, e := range events {
		switch e.GetEventType() {
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
			scheduled[e.GetEventId()] = e
		case enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED:
			a := e.GetActivityTaskStartedEventAttributes()
			s, ok := scheduled[a.GetScheduledEventId()]
			if !ok {
				continue
			}
			sa := s.GetActivityTaskScheduledEventAttributes()
			k := key{sa.GetActivityType().GetName(), sa.GetTaskQueue().GetName()}
			if a.GetAttempt() > 1 {
				into.retry[k]++
				continue
			}
			into.first[k] = append(into.first[k], e.GetEventTime().AsTime().Sub(s.GetEventTime().AsTime()))
		}
	}
}

// stats summarises one key's waits.
type stats struct {
	N                         int
	Total, Median, P95, Worst time.Duration
}

func summarise(ds []time.Duration) stats {
	if len(ds) == 0 {
		return stats{}
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	out := stats{N: len(s), Median: s[len(s)/2], P95: s[(len(s)*95)/100], Worst: s[len(s)-1]}
	if len(s)%2 == 0 {
		out.Median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	for _, d := range s {
		out.Total += d
	}
	return out
}
