// Command queuewait reports how long a run's activities waited on their task queues, from
// scheduled to started, per activity type and queue, over every run (continue-as-new segment)
// of the given workflows. It reads the histories from a Temporal server, or from a finished
// experiment's or run's state file, on which it starts the dev server itself.
//
//	go run ./benchmarks/queuewait --db <experiment-dir>/temporal.db train-exp-leafhost-rl-leaf-classification-s431 ...
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"text/tabwriter"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	historypb "go.temporal.io/api/history/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"

	"mlerl/devserver"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

func run() error {
	db := flag.String("db", "", "a Temporal dev server state file (a run's or experiment's temporal.db) to read; the server must not be running on it")
	address := flag.String("address", "", "a running Temporal server's host:port, instead of --db")
	namespace := flag.String("namespace", "default", "Temporal namespace")
	flag.Parse()
	ids := flag.Args()
	if len(ids) == 0 || (*db == "") == (*address == "") {
		return fmt.Errorf("usage: queuewait (--db FILE | --address HOST:PORT) WORKFLOW-ID...")
	}
	ctx := context.Background()
	if *db != "" {
		cli, err := devserver.FindCLI()
		if err != nil {
			return err
		}
		if _, err := os.Stat(*db); err != nil {
			return fmt.Errorf("--db: %w", err)
		}
		s, err := devserver.Start(ctx, devserver.Options{CLI: cli, DBFile: *db,
			LogFile: filepath.Join(os.TempDir(), "queuewait-temporal.log")})
		if err != nil {
			return err
		}
		defer s.Stop()
		*address = s.Address
	}
	c, err := client.Dial(client.Options{HostPort: *address, Namespace: *namespace, Logger: devserver.Quiet})
	if err != nil {
		return err
	}
	defer c.Close()
	for _, id := range ids {
		var w waits
		runs, err := runsOf(ctx, c, id)
		if err != nil {
			return err
		}
		for _, runID := range runs {
			events, err := historyOf(ctx, c, id, runID)
			if err != nil {
				return err
			}
			waitsOf(events, &w)
		}
		report(id, len(runs), w)
	}
	return nil
}

// runsOf lists every run of a workflow ID, oldest first.
func runsOf(ctx context.Context, c client.Client, id string) ([]string, error) {
	var runs []string
	var token []byte
	for {
		resp, err := c.ListWorkflow(ctx, listRequest(id, token))
		if err != nil {
			return nil, fmt.Errorf("listing the runs of %s: %w", id, err)
		}
		for _, e := range resp.GetExecutions() {
			runs = append(runs, e.GetExecution().GetRunId())
		}
		if token = resp.GetNextPageToken(); len(token) == 0 {
			break
		}
	}
	if len(runs) == 0 {
		return nil, fmt.Errorf("no workflow %q on this server", id)
	}
	// Visibility lists newest first.
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs, nil
}

func listRequest(id string, token []byte) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Query: fmt.Sprintf("WorkflowId = %q", id), NextPageToken: token}
}

func historyOf(ctx context.Context, c client.Client, id, runID string) ([]*historypb.HistoryEvent, error) {
	var events []*historypb.HistoryEvent
	it := c.GetWorkflowHistory(ctx, id, runID, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	for it.HasNext() {
		e, err := it.Next()
		if err != nil {
			return nil, fmt.Errorf("history of %s run %s: %w", id, runID, err)
		}
		events = append(events, e)
	}
	return events, nil
}

func report(id string, runs int, w waits) {
	fmt.Printf("%s (%d runs)\n", id, runs)
	keys := make([]key, 0, len(w.first))
	for k := range w.first {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Activity != keys[j].Activity {
			return keys[i].Activity < keys[j].Activity
		}
		return keys[i].Queue < keys[j].Queue
	})
	tw := tabwriter.NewWriter(os.Stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "activity\tqueue\tn\ttotal s\tmedian s\tp95 s\tworst s\tretried\t")
	sec := func(d time.Duration) string { return fmt.Sprintf("%.1f", d.Seconds()) }
	for _, k := range keys {
		s := summarise(w.first[k])
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\t%d\t\n", k.Activity, k.Queue, s.N, sec(s.Total), sec(s.Median), sec(s.P95), sec(s.Worst), w.retry[k])
	}
	tw.Flush()
}
