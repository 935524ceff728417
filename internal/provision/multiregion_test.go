package provision

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/eventpattern"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// streamRecord is an INSERT of an outbox item as Lambda filters it, from a
// NEW_AND_OLD_IMAGES stream; origin "" leaves the attribute out.
func streamRecord(t *testing.T, table outbox.Table, origin string) []byte {
	t.Helper()
	image := map[string]any{table.SortKey: map[string]string{"S": table.SortKeyFor("01JDQ8Z7K5V6W3X2Y1Z0ABCDEF")}}
	if origin != "" {
		image[outbox.AttrOrigin] = map[string]string{"S": origin}
	}
	b, err := json.Marshal(map[string]any{"eventName": "INSERT", "dynamodb": map[string]any{
		"Keys":     map[string]any{table.SortKey: image[table.SortKey]},
		"NewImage": image, "StreamViewType": "NEW_AND_OLD_IMAGES",
	}})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The mapping of each Region's pipeline passes the inserts written in that
// Region, and the primary's those without origin too, as the stack's
// filter evaluation (Lambda's pattern syntax) reads its patterns; a
// single-Region pipeline passes every insert.
func TestStreamFiltersPassOnlyTheRegionsEvents(t *testing.T) {
	t.Parallel()
	peers := []string{"us-east-1", "eu-west-1"}
	origins := []string{"us-east-1", "eu-west-1", "", "ap-south-1"}
	for _, c := range []struct {
		name, region string
		peers        []string
		filters      int
		passes       []bool // for each origin
	}{
		{"single-Region", "us-east-1", nil, 1, []bool{true, true, true, true}},
		{"primary", "us-east-1", peers, 2, []bool{true, false, true, false}},
		{"secondary", "eu-west-1", peers, 1, []bool{false, true, false, false}},
	} {
		s := Spec{Name: "orders", MultiRegion: MultiRegionSpec{Regions: c.peers}}.WithDefaults()
		filters := s.streamFilters(State{Region: c.region})
		if len(filters) != c.filters {
			t.Errorf("%s: %d filters %q, want %d", c.name, len(filters), filters, c.filters)
		}
		for i, origin := range origins {
			passed := false
			for _, f := range filters {
				passed = passed || eventpattern.MustCompile(f).Matches(streamRecord(t, s.OutboxTable(), origin))
			}
			if passed != c.passes[i] {
				t.Errorf("%s: an insert of origin %q passes %t, want %t (filters %s)", c.name, origin, passed, c.passes[i], filters)
			}
		}
	}
}

// The peers reach the relay's environment and come back from it (import),
// the takeover's delay and settle time as set or as the relay's defaults;
// a single-Region pipeline has no such variable.
func TestMultiRegionEnvironment(t *testing.T) {
	t.Parallel()
	for _, m := range []MultiRegionSpec{
		{Regions: []string{"us-east-1", "eu-west-1"}},
		{Regions: []string{"us-east-1", "eu-west-1"}, TakeoverAfter: 20 * time.Minute, TakeoverSettle: 10 * time.Second},
	} {
		s := Spec{Name: "orders", MultiRegion: m}
		env := s.Environment("")
		if env[config.EnvRegions] != "us-east-1,eu-west-1" {
			t.Fatalf("%s = %q", config.EnvRegions, env[config.EnvRegions])
		}
		rc, err := config.FromEnv(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		if got, want := specFromEnv("orders", rc, env).MultiRegion, m.withDefaults(); !reflect.DeepEqual(got, want) {
			t.Errorf("read back %+v, want %+v", got, want)
		}
	}
	if _, ok := (Spec{Name: "orders"}).Environment("")[config.EnvRegions]; ok {
		t.Errorf("a single-Region pipeline sets %s", config.EnvRegions)
	}
}

// The peers are validated before anything is created, each error naming
// the field and the fix; the provider's own Region must be one of them.
func TestMultiRegionValidated(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		regions []string
		want    string
	}{
		"empty":   {regions: []string{}, want: "needs at least 2"},
		"one":     {regions: []string{"us-east-1"}, want: "needs at least 2"},
		"invalid": {regions: []string{"us-east-1", "EU"}, want: `"EU", which is not an AWS Region name`},
		"twice":   {regions: []string{"us-east-1", "eu-west-1", "eu-west-1"}, want: `"eu-west-1" twice`},
	} {
		err := Spec{Name: "orders", MultiRegion: MultiRegionSpec{Regions: c.regions}}.Validate()
		if err == nil || !strings.Contains(err.Error(), "MultiRegion.Regions") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: Validate = %v, want an error on MultiRegion.Regions with %q", name, err, c.want)
		}
	}
	s := Spec{Name: "orders", MultiRegion: MultiRegionSpec{Regions: []string{"us-east-1", "eu-west-1"}}}
	if err := s.Validate(); err != nil {
		t.Errorf("two Regions: %v", err)
	}
	slow := Spec{Name: "orders", MultiRegion: MultiRegionSpec{Regions: []string{"us-east-1", "eu-west-1"}, TakeoverAfter: time.Minute, TakeoverSettle: time.Minute}}
	if err := slow.Validate(); err == nil || !strings.Contains(err.Error(), "MultiRegion.TakeoverSettle") || !strings.Contains(err.Error(), "is not below the takeover delay (1m0s)") {
		t.Errorf("a settle time as long as the takeover delay: Validate = %v, want an error on MultiRegion.TakeoverSettle", err)
	}
	if err := s.CheckRegion("ap-south-1"); err == nil || !strings.Contains(err.Error(), `add "ap-south-1"`) {
		t.Errorf("CheckRegion outside the peers = %v, want the fix", err)
	}
	if err := s.CheckRegion("eu-west-1"); err != nil {
		t.Errorf("CheckRegion of a peer = %v", err)
	}
}
