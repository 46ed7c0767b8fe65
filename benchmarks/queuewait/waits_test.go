package main

import (
	"testing"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	taskqueuepb "go.temporal.io/api/taskqueue/v1"
	"google.golang.org/protobuf/types/known/timestamppb"
)

var t0 = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

func scheduledAt(id int64, at time.Duration, activity, queue string) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventId: id, EventTime: timestamppb.New(t0.Add(at)), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
		Attributes: &historypb.HistoryEvent_ActivityTaskScheduledEventAttributes{ActivityTaskScheduledEventAttributes: &historypb.ActivityTaskScheduledEventAttributes{
			ActivityType: &commonpb.ActivityType{Name: activity}, TaskQueue: &taskqueuepb.TaskQueue{Name: queue}}}}
}

func startedAt(id, scheduled int64, at time.Duration, attempt int32) *historypb.HistoryEvent {
	return &historypb.HistoryEvent{EventId: id, EventTime: timestamppb.New(t0.Add(at)), EventType: enumspb.EVENT_TYPE_ACTIVITY_TASK_STARTED,
		Attributes: &historypb.HistoryEvent_ActivityTaskStartedEventAttributes{ActivityTaskStartedEventAttributes: &historypb.ActivityTaskStartedEventAttributes{
			ScheduledEventId: scheduled, Attempt: attempt}}}
}

func TestWaitsPairEachStartWithItsSchedule(t *testing.T) {
	var w waits
	waitsOf([]*historypb.HistoryEvent{
		scheduledAt(1, 0, "InstrumentPrograms", "mlerl-exec"),
		scheduledAt(2, time.Second, "ExecuteProgram", "mlerl-exec"),
		startedAt(3, 2, 4*time.Second, 1),
		startedAt(4, 1, 60*time.Second, 1),
		scheduledAt(5, 61*time.Second, "InstrumentPrograms", "mlerl-exec"),
		startedAt(6, 5, 63*time.Second, 1),
		scheduledAt(7, 70*time.Second, "InstrumentPrograms", "mlerl-exec"),
		startedAt(8, 7, 90*time.Second, 2),  // a retry: its wait holds a backoff
		startedAt(9, 99, 91*time.Second, 1), // its schedule is in another run's history
	}, &w)
	instr := summarise(w.first[key{"InstrumentPrograms", "mlerl-exec"}])
	if instr.N != 2 || instr.Total != 62*time.Second || instr.Worst != 60*time.Second || instr.Median != 31*time.Second {
		t.Fatalf("instrumenting: %+v, want 2 waits of 60 s and 2 s", instr)
	}
	if got := w.retry[key{"InstrumentPrograms", "mlerl-exec"}]; got != 1 {
		t.Fatalf("retried %d, want 1", got)
	}
	if exec := summarise(w.first[key{"ExecuteProgram", "mlerl-exec"}]); exec.N != 1 || exec.Total != 3*time.Second {
		t.Fatalf("execution: %+v, want one wait of 3 s", exec)
	}
}

func TestSummariseOddAndEven(t *testing.T) {
	s := time.Second
	for _, c := range []struct {
		in               []time.Duration
		median, p95, tot time.Duration
	}{
		{nil, 0, 0, 0},
		{[]time.Duration{3 * s, 1 * s, 2 * s}, 2 * s, 3 * s, 6 * s},
		{[]time.Duration{4 * s, 1 * s, 2 * s, 3 * s}, 2500 * time.Millisecond, 4 * s, 10 * s},
	} {
		got := summarise(c.in)
		if got.Median != c.median || got.P95 != c.p95 || got.Total != c.tot {
			t.Errorf("%v: %+v, want median %v, p95 %v, total %v", c.in, got, c.median, c.p95, c.tot)
		}
	}
}
