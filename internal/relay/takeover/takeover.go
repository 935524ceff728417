package takeover

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// IntervalsBeforeTakeover is how many reconciler intervals a Region's
// heartbeat may miss before it is silent, by default.
const IntervalsBeforeTakeover = 3

// MinTakeoverAfter is the floor of the default takeover delay: a Region is
// not taken over for replication that lags a few minutes.
const MinTakeoverAfter = 5 * time.Minute

// DefaultSettle is how long a successor waits, by default, between writing
// its claim and reading it back: longer than replication between Regions
// usually takes (under a second, with no SLA).
const DefaultSettle = 30 * time.Second

// DefaultTakeoverAfter is the takeover delay of a reconciler that runs
// every interval: three intervals, at least MinTakeoverAfter.
func DefaultTakeoverAfter(interval time.Duration) time.Duration {
	return max(IntervalsBeforeTakeover*interval, MinTakeoverAfter)
}

// API is the part of the DynamoDB client Takeover uses.
type API interface {
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	PutItem(ctx context.Context, in *dynamodb.PutItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.PutItemOutput, error)
	DeleteItem(ctx context.Context, in *dynamodb.DeleteItemInput, opts ...func(*dynamodb.Options)) (*dynamodb.DeleteItemOutput, error)
}

// Config configures the Takeover of one Region.
type Config struct {
	Table outbox.Table
	// Region is this Region; Regions the peers, in the same order in
	// every Region (multi_region.regions).
	Region  string
	Regions []string
	// Interval is the reconciler's; TakeoverAfter defaults to
	// DefaultTakeoverAfter(Interval).
	Interval      time.Duration
	TakeoverAfter time.Duration
	// Settle defaults to DefaultSettle; it must be below TakeoverAfter.
	Settle time.Duration
	// Now, Sleep and NewID default to the clock, a timer honouring the
	// context and random claim ids.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error
	NewID func() string
}

// Takeover carries out a Region's decisions in its local replica.
type Takeover struct {
	api API
	cfg Config
}

// New checks cfg and fills its defaults.
func New(api API, cfg Config) (*Takeover, error) {
	cfg.Table = cfg.Table.WithDefaults()
	if cfg.TakeoverAfter == 0 {
		cfg.TakeoverAfter = DefaultTakeoverAfter(cfg.Interval)
	}
	if cfg.Settle == 0 {
		cfg.Settle = DefaultSettle
	}
	if err := check(cfg); err != nil {
		return nil, err
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Sleep == nil {
		cfg.Sleep = sleep
	}
	if cfg.NewID == nil {
		cfg.NewID = randomID
	}
	return &Takeover{api: api, cfg: cfg}, nil
}

func check(cfg Config) error {
	for i, r := range cfg.Regions {
		if slices.Contains(cfg.Regions[:i], r) {
			return fmt.Errorf("takeover: Regions lists %q twice: list each peer Region once, in the same order in every Region", r)
		}
	}
	switch {
	case !slices.Contains(cfg.Regions, cfg.Region):
		return fmt.Errorf("takeover: Region %q is not among Regions %q: add it to the peers", cfg.Region, cfg.Regions)
	case cfg.TakeoverAfter <= 0 || cfg.Settle < 0:
		return errors.New("takeover: TakeoverAfter and Settle must be positive: leave them 0 for the defaults")
	case cfg.Settle >= cfg.TakeoverAfter:
		return fmt.Errorf("takeover: Settle %s is not below TakeoverAfter %s: lower Settle or raise TakeoverAfter", cfg.Settle, cfg.TakeoverAfter)
	}
	return cfg.Table.RegionItemsProblem()
}

// Plan is what a reconciler run does across Regions.
type Plan struct {
	// Publish are the Regions whose events the run publishes: its own
	// unless HeldBy, then those it holds claims on, in the peers' order.
	Publish []string
	// Heartbeat is the heartbeat the run wrote.
	Heartbeat outbox.Heartbeat
	// HeldBy is the successor whose claim on this Region stands.
	HeldBy string
	// Claimed are the Regions newly taken over; Lost those claimed whose
	// claim another Region's replaced; Released those handed back.
	Claimed, Lost, Released []string
}

// Plan reads the heartbeats and claims in the local replica, writes this
// Region's heartbeat, hands back and claims as Decide says, and returns
// the Regions the run publishes. pending is what the Region's reconciler
// last found pending, for the heartbeat.
func (t *Takeover) Plan(ctx context.Context, pending int64) (Plan, error) {
	v, err := t.read(ctx, pending)
	if err != nil {
		return Plan{}, err
	}
	d := Decide(v)
	if _, err := t.api.PutItem(ctx, t.cfg.Table.PutHeartbeat(d.Heartbeat)); err != nil {
		return Plan{}, fmt.Errorf("writing the heartbeat of %s: %w", t.cfg.Region, err)
	}
	p := Plan{Publish: d.Publish, Heartbeat: d.Heartbeat, HeldBy: d.HeldBy}
	for _, c := range d.Release {
		if err := t.Release(ctx, c); err != nil {
			return Plan{}, err
		}
		p.Released = append(p.Released, c.Silent)
	}
	if len(d.Claim) == 0 {
		return p, nil
	}
	won, err := t.Claim(ctx, d.Claim, v.Claims)
	if err != nil {
		return Plan{}, err
	}
	for _, r := range d.Claim {
		if slices.Contains(won, r) {
			p.Claimed = append(p.Claimed, r)
		} else {
			p.Lost = append(p.Lost, r)
		}
	}
	p.Publish = inOrder(t.cfg.Regions, t.cfg.Region, append(p.Publish, won...))
	return p, nil
}

// inOrder puts self first, then the others in the peers' order.
func inOrder(regions []string, self string, publish []string) []string {
	out := make([]string, 0, len(publish))
	if slices.Contains(publish, self) {
		out = append(out, self)
	}
	for _, r := range regions {
		if r != self && slices.Contains(publish, r) {
			out = append(out, r)
		}
	}
	return out
}

// read returns the View of this Region's run at now.
func (t *Takeover) read(ctx context.Context, pending int64) (View, error) {
	v := View{Self: t.cfg.Region, Regions: t.cfg.Regions, Now: t.cfg.Now(), After: t.cfg.TakeoverAfter, Pending: pending,
		Heartbeats: map[string]outbox.Heartbeat{}, Claims: map[string]outbox.Claim{}}
	for _, r := range t.cfg.Regions {
		h, err := get(ctx, t.api, t.cfg.Table.GetHeartbeat(r), outbox.ParseHeartbeat)
		if err != nil {
			return View{}, fmt.Errorf("reading the heartbeat of %s: %w", r, err)
		}
		c, err := get(ctx, t.api, t.cfg.Table.GetClaim(r), outbox.ParseClaim)
		if err != nil {
			return View{}, fmt.Errorf("reading the takeover claim on %s: %w", r, err)
		}
		if h.Region != "" {
			v.Heartbeats[r] = h
		}
		if c.ID != "" {
			v.Claims[r] = c
		}
	}
	return v, nil
}

// Claim claims the silent Regions, each replacing the claim found (a void
// one, whose successor is silent), waits the settle time and reads the
// claims back: it returns the Regions whose claim is still its own. Of two
// Regions that claimed at once, last writer wins leaves every replica the
// same claim, so only one acts.
func (t *Takeover) Claim(ctx context.Context, silent []string, found map[string]outbox.Claim) ([]string, error) {
	mine := map[string]string{}
	for _, r := range silent {
		c := outbox.Claim{Silent: r, Successor: t.cfg.Region, Since: t.cfg.Now(), ID: t.cfg.NewID()}
		_, err := t.api.PutItem(ctx, t.cfg.Table.PutClaim(c, found[r].ID))
		if ccf := (*types.ConditionalCheckFailedException)(nil); errors.As(err, &ccf) {
			continue // another Region's claim arrived in the local replica meanwhile
		}
		if err != nil {
			return nil, fmt.Errorf("claiming %s for %s: %w", r, t.cfg.Region, err)
		}
		mine[r] = c.ID
	}
	if len(mine) == 0 {
		return nil, nil
	}
	if err := t.cfg.Sleep(ctx, t.cfg.Settle); err != nil {
		return nil, err
	}
	var won []string
	for _, r := range silent {
		c, err := get(ctx, t.api, t.cfg.Table.GetClaim(r), outbox.ParseClaim)
		if err != nil {
			return nil, fmt.Errorf("reading back the takeover claim on %s: %w", r, err)
		}
		if id, ok := mine[r]; ok && c.ID == id {
			won = append(won, r)
		}
	}
	return won, nil
}

// Release deletes this Region's claim c, handing its Region back; a claim
// already replaced or deleted in the local replica is left alone.
func (t *Takeover) Release(ctx context.Context, c outbox.Claim) error {
	_, err := t.api.DeleteItem(ctx, t.cfg.Table.DeleteClaim(c.Silent, c.ID))
	if ccf := (*types.ConditionalCheckFailedException)(nil); err != nil && !errors.As(err, &ccf) {
		return fmt.Errorf("handing %s back from %s: %w", c.Silent, t.cfg.Region, err)
	}
	return nil
}

func get[T any](ctx context.Context, api API, in *dynamodb.GetItemInput, parse func(map[string]types.AttributeValue) (T, error)) (T, error) {
	out, err := api.GetItem(ctx, in)
	if err != nil {
		var zero T
		return zero, err
	}
	return parse(out.Item)
}

func sleep(ctx context.Context, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-timer.C:
		return nil
	}
}

func randomID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
