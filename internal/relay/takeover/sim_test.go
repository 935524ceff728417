package takeover_test

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// world models the replicas of a global table (version 2019.11.21) as the
// takeover sees them: each Region's writes apply to its own replica at
// once, conditions are checked there only, and reach every other replica
// after lag, where last writer wins by the write's time (ties to the
// Region first in name order). A cut Region neither sends nor receives
// replication until it is healed; what it missed arrives then, in order.
// It is a model of those rules for this package's tests, not the local
// stack.
type world struct {
	mu       sync.Mutex
	now      time.Time
	lag      time.Duration
	table    outbox.Table
	replicas map[string]map[string]version
	queue    []delivery
	cut      map[string]bool
}

type version struct {
	item map[string]types.AttributeValue // nil: deleted
	at   time.Time
	from string
}

type delivery struct {
	at       time.Time
	from, to string
	key      string
	v        version
}

func newWorld(table outbox.Table, lag time.Duration, start time.Time, regions []string) *world {
	w := &world{now: start, lag: lag, table: table.WithDefaults(), replicas: map[string]map[string]version{}, cut: map[string]bool{}}
	for _, r := range regions {
		w.replicas[r] = map[string]version{}
	}
	return w
}

func (w *world) Now() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.now
}

// setNow moves the clock and delivers what replication has brought.
func (w *world) setNow(now time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.now = now
	w.deliver()
}

func (w *world) setCut(region string, cut bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.cut[region] = cut
	w.deliver()
}

func (w *world) deliver() {
	var held []delivery
	for _, d := range w.queue {
		if d.at.After(w.now) || w.cut[d.from] || w.cut[d.to] {
			held = append(held, d)
			continue
		}
		cur, ok := w.replicas[d.to][d.key]
		if !ok || d.v.at.After(cur.at) || (d.v.at.Equal(cur.at) && d.v.from < cur.from) {
			w.replicas[d.to][d.key] = d.v
		}
	}
	w.queue = held
}

func (w *world) key(k map[string]types.AttributeValue) string {
	return k[w.table.PartitionKey].(*types.AttributeValueMemberS).Value + "|" + k[w.table.SortKey].(*types.AttributeValueMemberS).Value
}

// write applies item (nil: a delete) in region if condition holds there,
// and queues its replication.
func (w *world) write(region string, key map[string]types.AttributeValue, item map[string]types.AttributeValue, condition *string, names map[string]string, values map[string]types.AttributeValue) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.deliver()
	k := w.key(key)
	if condition != nil && !holds(*condition, w.replicas[region][k].item, names, values) {
		return &types.ConditionalCheckFailedException{Message: new(string)}
	}
	v := version{item: item, at: w.now, from: region}
	w.replicas[region][k] = v
	for to := range w.replicas {
		if to != region {
			w.queue = append(w.queue, delivery{at: w.now.Add(w.lag), from: region, to: to, key: k, v: v})
		}
	}
	return nil
}

// holds evaluates the conditions this package writes: terms joined by OR,
// each attribute_not_exists(#n) or #n = :v.
func holds(condition string, item map[string]types.AttributeValue, names map[string]string, values map[string]types.AttributeValue) bool {
	for _, term := range strings.Split(condition, " OR ") {
		if name, ok := strings.CutPrefix(term, "attribute_not_exists("); ok {
			if _, exists := item[names[strings.TrimSuffix(name, ")")]]; !exists {
				return true
			}
			continue
		}
		name, value, ok := strings.Cut(term, " = ")
		if !ok {
			panic("condition not modelled: " + term)
		}
		got, _ := item[names[name]].(*types.AttributeValueMemberS)
		if want := values[value].(*types.AttributeValueMemberS); got != nil && got.Value == want.Value {
			return true
		}
	}
	return false
}

// replica is a Region's DynamoDB endpoint.
type replica struct {
	w      *world
	region string
}

func (r replica) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	r.w.mu.Lock()
	defer r.w.mu.Unlock()
	r.w.deliver()
	return &dynamodb.GetItemOutput{Item: maps.Clone(r.w.replicas[r.region][r.w.key(in.Key)].item)}, nil
}

func (r replica) PutItem(_ context.Context, in *dynamodb.PutItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error) {
	return &dynamodb.PutItemOutput{}, r.w.write(r.region, in.Item, maps.Clone(in.Item), in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
}

func (r replica) DeleteItem(_ context.Context, in *dynamodb.DeleteItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error) {
	return &dynamodb.DeleteItemOutput{}, r.w.write(r.region, in.Key, nil, in.ConditionExpression, in.ExpressionAttributeNames, in.ExpressionAttributeValues)
}

// scheduler runs Regions' calls concurrently on the world's clock: a call
// that sleeps waits until the clock reaches its wake time, and step moves
// the clock only once every running call sleeps or has returned.
type scheduler struct {
	w        *world
	mu       sync.Mutex
	cond     *sync.Cond
	active   int
	sleepers []sleeper
}

type sleeper struct {
	until time.Time
	wake  chan struct{}
}

func newScheduler(w *world) *scheduler {
	s := &scheduler{w: w}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// Sleep is the sleeper given to Takeover.
func (s *scheduler) Sleep(_ context.Context, d time.Duration) error {
	wake := make(chan struct{})
	s.mu.Lock()
	s.sleepers = append(s.sleepers, sleeper{until: s.w.Now().Add(d), wake: wake})
	s.active--
	s.cond.Broadcast()
	s.mu.Unlock()
	<-wake
	return nil
}

// start runs f concurrently.
func (s *scheduler) start(f func()) {
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	go func() {
		defer func() {
			s.mu.Lock()
			s.active--
			s.cond.Broadcast()
			s.mu.Unlock()
		}()
		f()
	}()
}

// quiesce waits until every running call sleeps or has returned.
func (s *scheduler) quiesce() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.active > 0 {
		s.cond.Wait()
	}
}

// step moves the clock to now, wakes the calls due and waits for quiet.
func (s *scheduler) step(now time.Time) {
	s.quiesce()
	s.w.setNow(now)
	s.mu.Lock()
	s.sleepers = slices.DeleteFunc(s.sleepers, func(sl sleeper) bool {
		if sl.until.After(now) {
			return false
		}
		s.active++
		close(sl.wake)
		return true
	})
	s.mu.Unlock()
	s.quiesce()
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}
