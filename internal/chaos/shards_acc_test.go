package chaos

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/control"
)

// The stream has several shards and rolls them over during the run, as
// AWS's streams do (there about every four hours): every open shard
// closes and a child shard opens for each, taking its parent's keys.
const (
	streamShards = 4
	// shardLifetime is short enough for rollovers while the writers write
	// and while the mapping works through its backlog.
	shardLifetime = 30 * time.Second
)

// shardWatch records every shard of the table's stream that DescribeStream
// lists during the run, with its parent: the stack drops a closed shard
// from the listing once its records are trimmed, so the run samples it.
type shardWatch struct {
	streams   *dynamodbstreams.Client
	streamARN string

	mu     sync.Mutex
	parent map[string]string
}

// watch samples the stream's shards every interval until stop or ctx is
// done.
func (w *shardWatch) watch(ctx context.Context, stop <-chan struct{}, interval time.Duration) error {
	for {
		if err := w.sample(ctx); err != nil {
			return err
		}
		select {
		case <-stop:
			return w.sample(ctx)
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
	}
}

// sample records the shards DescribeStream lists now, page by page.
func (w *shardWatch) sample(ctx context.Context) error {
	in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(w.streamARN)}
	for {
		out, err := w.streams.DescribeStream(ctx, in)
		if err != nil {
			return fmt.Errorf("describing the stream %s: %w", w.streamARN, err)
		}
		w.mu.Lock()
		if w.parent == nil {
			w.parent = map[string]string{}
		}
		for _, sh := range out.StreamDescription.Shards {
			w.parent[aws.ToString(sh.ShardId)] = aws.ToString(sh.ParentShardId)
		}
		w.mu.Unlock()
		last := out.StreamDescription.LastEvaluatedShardId
		if last == nil {
			return nil
		}
		in.ExclusiveStartShardId = last
	}
}

// rollover is what the run saw of the stream's shards and of the mapping's
// work on them.
type rollover struct {
	// Shards counts the shards seen; Roots those without a parent,
	// Children those whose parent was seen.
	Shards, Roots, Children int
	// ChildrenProcessed counts the children the mapping read records of
	// after finishing their parent.
	ChildrenProcessed int
}

func (ro rollover) String() string {
	return fmt.Sprintf("shards_seen=%d roots=%d children=%d children_processed_after_parent=%d", ro.Shards, ro.Roots, ro.Children, ro.ChildrenProcessed)
}

// check fails unless the stream had several shards, rolled over at least
// once, and the mapping finished a parent and then processed its child.
func (ro rollover) check() error {
	var errs []error
	if ro.Roots < streamShards {
		errs = append(errs, fmt.Errorf("the stream listed %d shards without a parent, want %d", ro.Roots, streamShards))
	}
	if ro.Children == 0 {
		errs = append(errs, errors.New("no shard rolled over: DescribeStream never listed a child shard"))
	}
	if ro.ChildrenProcessed == 0 {
		errs = append(errs, errors.New("the mapping never processed a child shard after finishing its parent"))
	}
	return errors.Join(errs...)
}

// result compares the shards seen with the mapping's status: a child was
// processed after its parent when the mapping finished the parent and
// holds a checkpoint in the child.
func (w *shardWatch) result(ms control.MappingStatus) rollover {
	w.mu.Lock()
	defer w.mu.Unlock()
	byID := map[string]bool{}
	checkpointed := map[string]bool{}
	for _, sh := range ms.Shards {
		byID[sh.ShardID] = sh.Finished
		checkpointed[sh.ShardID] = sh.Checkpoint != ""
	}
	ro := rollover{Shards: len(w.parent)}
	ids := make([]string, 0, len(w.parent))
	for id := range w.parent {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		p := w.parent[id]
		if p == "" {
			ro.Roots++
			continue
		}
		if _, seen := w.parent[p]; !seen {
			continue
		}
		ro.Children++
		if byID[p] && checkpointed[id] {
			ro.ChildrenProcessed++
		}
	}
	return ro
}
