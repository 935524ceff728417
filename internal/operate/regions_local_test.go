package operate

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws/awsapi"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

// The peers of the tests' multi-Region pipeline: the stack's Region is
// the primary, the command runs against it.
const (
	primary = awsapi.DefaultRegion
	second  = "eu-west-1"
	third   = "ap-south-1"
)

// A pipeline of three Regions, in the primary: status shows each Region's
// heartbeat, state, pending and failed events and the claims, and a
// silent Region is a problem; failed, requeue, skip, drain and replay take
// the primary's events (and those without origin) by default, say what
// they left out, and take another Region's with --origin or every
// Region's with --all-origins.
func TestLocalRegions(t *testing.T) {
	t.Parallel()
	d := deploy(t, provision.Spec{Name: "regions", MultiRegion: provision.MultiRegionSpec{Regions: []string{primary, second, third}}})
	tbl := d.writer.Table()
	if d.cfg.Region != primary {
		t.Fatalf("the stack serves %s, the test expects %s", d.cfg.Region, primary)
	}

	// Events of the other Regions stay pending: the mapping passes only
	// the primary's.
	d.writeFrom(second, orderPlaced("com.example.regions", 3)...)
	d.writeFrom(third, orderPlaced("com.example.regions", 2)...)
	published := d.write(orderPlaced("com.example.regions", 2)...)
	waitUntil(t, "the primary's events published", func() bool {
		for _, r := range published {
			out, err := d.ddb.GetItem(d.ctx, &dynamodb.GetItemInput{TableName: aws.String(tbl.Name), Key: tbl.Key(r), ConsistentRead: aws.Bool(true)})
			if err != nil || statusOf(out.Item) != string(outbox.StatusPublished) {
				return false
			}
		}
		return true
	})
	d.putFailedFrom("", 2, "com.example.regions", func(int) string { return "EventBridge: AccessDeniedException" })
	elsewhere := d.putFailedFrom(second, 3, "com.example.regions", func(int) string { return "EventBridge: AccessDeniedException" })

	// The second Region went silent an hour ago; the third took it over.
	// The second's view is empty, as a Region's first run writes it.
	now := time.Now()
	view := map[string]time.Time{third: now.Add(-time.Minute)}
	d.put(tbl.PutHeartbeat(outbox.Heartbeat{Region: primary, At: now, Since: now.Add(-time.Hour), View: view}))
	d.put(tbl.PutHeartbeat(outbox.Heartbeat{Region: second, At: now.Add(-time.Hour), Since: now.Add(-2 * time.Hour), View: map[string]time.Time{}}))
	d.put(tbl.PutHeartbeat(outbox.Heartbeat{Region: third, At: now.Add(-time.Minute), Since: now.Add(-time.Hour), View: map[string]time.Time{primary: now}}))
	d.put(tbl.PutClaim(outbox.Claim{Silent: second, Successor: third, Since: now.Add(-40 * time.Minute), ID: "c1"}, ""))

	checkRegionsStatus(t, d)
	checkRegionsFailed(t, d, elsewhere)
	checkRegionsDrainReplay(t, d, published)
}

func checkRegionsStatus(t *testing.T, d *deployed) {
	t.Helper()
	out, _, code := d.run("status", "regions", "--json")
	var s Status
	parseJSON(t, out, &s)
	if code != ExitStuck || s.Healthy || s.Regions == nil || s.Regions.Region != primary || s.Regions.TakeoverAfterSeconds != 900 || len(s.Regions.Peers) != 3 {
		t.Fatalf("status --json: exit %d, regions %+v", code, s.Regions)
	}
	if s.Pending.Total != 0 || s.Failed.Total != 2 {
		t.Errorf("status counts %d pending and %d FAILED, want the primary's 0 and 2", s.Pending.Total, s.Failed.Total)
	}
	want := []struct {
		region, state   string
		pending, failed int
		claim           string
		holds           []string
	}{
		{primary, RegionFresh, 0, 2, "", nil},
		{second, RegionSilent, 3, 3, third, nil},
		{third, RegionFresh, 2, 0, "", []string{second}},
	}
	for i, w := range want {
		p := s.Regions.Peers[i]
		claim := ""
		if p.Claim != nil && p.Claim.Standing {
			claim = p.Claim.Successor
		}
		if p.Region != w.region || p.Primary != (i == 0) || p.State != w.state || p.Pending != w.pending || p.Failed != w.failed || claim != w.claim ||
			!slices.Equal(p.Holds, w.holds) && len(w.holds)+len(p.Holds) > 0 || p.HeartbeatAt == nil || p.HeartbeatAgeSeconds == nil {
			t.Errorf("Region %d: %+v, want %+v", i, p, w)
		}
	}
	if p := s.Regions.Peers[1]; p.OldestPendingAgeSeconds <= 0 || *p.HeartbeatAgeSeconds < 3500 {
		t.Errorf("the silent Region's ages: oldest pending %gs, heartbeat %gs", p.OldestPendingAgeSeconds, *p.HeartbeatAgeSeconds)
	}
	silent := false
	for _, p := range s.Problems {
		silent = silent || strings.HasPrefix(p, "Region "+second+" is silent: its heartbeat is 1h0m0s old (silent after 15m), 3 events pending, taken over by "+third)
	}
	if !silent {
		t.Errorf("the problems do not say that %s is silent and taken over: %q", second, s.Problems)
	}

	out, _, code = d.run("status", "regions")
	for _, want := range []string{
		"regions             takeover after 15m; pending, failed and the backlog below count the events written in " + primary,
		"  " + primary + "         primary, this Region: fresh, heartbeat ",
		"  " + second + "         SILENT, heartbeat ",
		"; 3 pending, oldest ", "; 3 failed; taken over by " + third + " since ",
		"  " + third + "        fresh, heartbeat ", "; holds " + second,
		"STUCK", "Region " + second + " is silent",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status (exit %d) lacks %q", code, want)
		}
	}
}

func checkRegionsFailed(t *testing.T, d *deployed, elsewhere []outbox.Record) {
	t.Helper()
	out, errOut, code := d.run("failed", "regions", "--json")
	var list FailedList
	parseJSON(t, out, &list)
	if code != ExitOK || len(list.Events) != 2 || list.Origins == nil || list.Origins.Origin != primary || list.Origins.LeftOut[second] != 3 || len(list.Origins.LeftOut) != 1 {
		t.Errorf("failed --json: exit %d, %d events, origins %+v", code, len(list.Events), list.Origins)
	}
	if !strings.Contains(errOut, "left out FAILED events written in other Regions (3 of "+second+"): only "+primary+"'s are taken here; pass --origin REGION") {
		t.Errorf("failed does not say what it left out: %q", errOut)
	}
	out, _, _ = d.run("failed", "regions", "--all-origins", "--json")
	list = FailedList{}
	parseJSON(t, out, &list)
	if len(list.Events) != 5 || list.Origins == nil || list.Origins.Origin != "all" || len(list.Origins.LeftOut) != 0 {
		t.Errorf("failed --all-origins: %d events, origins %+v", len(list.Events), list.Origins)
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"failed", "regions", "--origin", "us-west-2"}, ExitUsage, "--origin us-west-2 is not a Region of pipeline regions: pass one of " + primary + ", " + second + ", " + third},
		{[]string{"failed", "regions", "--origin", second, "--all-origins"}, ExitUsage, "pass one of them"},
		{[]string{"requeue", "regions", "--id", elsewhere[0].EventID}, ExitNotFound, "FAILED event " + elsewhere[0].EventID + " was written in " + second + ": pass --origin " + second},
		{[]string{"skip", "regions", "--event-id", elsewhere[0].EventID}, ExitNotFound, "was written in " + second},
		{[]string{"skip", "regions", "--event-id", elsewhere[0].EventID, "--origin", second}, ExitUsage, "is not an ordered event"},
	} {
		if _, errOut, code := d.run(c.args...); code != c.code || !strings.Contains(errOut, c.want) {
			t.Errorf("%s: exit %d, %q; want exit %d and %q", strings.Join(c.args, " "), code, errOut, c.code, c.want)
		}
	}

	// The lost Region's FAILED events, requeued by hand from the primary.
	out, errOut, code = d.run("requeue", "regions", "--origin", second, "--now", "--json")
	var res RequeueOutput
	parseJSON(t, out, &res)
	if code != ExitOK || res.Requeued != 3 || res.Origins == nil || res.Origins.Origin != second || res.Origins.LeftOut[primary] != 2 {
		t.Errorf("requeue --origin %s: exit %d, %+v", second, code, res)
	}
	if !strings.Contains(errOut, "--now runs the reconciler of "+primary) {
		t.Errorf("requeue --origin --now does not say whose reconciler ran: %q", errOut)
	}
	if out, _, _ := d.run("failed", "regions", "--all-origins"); !strings.Contains(out, "2 FAILED events") {
		t.Errorf("after the requeue of %s's events, failed --all-origins lists:\n%s", second, out)
	}
}

func checkRegionsDrainReplay(t *testing.T, d *deployed, published []outbox.Record) {
	t.Helper()
	out, errOut, code := d.run("drain", "regions", "--timeout", "10s", "--json")
	var dr DrainOutput
	parseJSON(t, out, &dr)
	if code != ExitOK || !dr.Drained || dr.Origins == nil || dr.Origins.LeftOut[second] != 6 || dr.Origins.LeftOut[third] != 2 {
		t.Errorf("drain of the primary: exit %d, %+v", code, dr)
	}
	if !strings.Contains(errOut, "left out pending events written in other Regions (2 of "+third+", 6 of "+second+")") {
		t.Errorf("drain does not say what it left out: %q", errOut)
	}
	out, _, code = d.run("drain", "regions", "--origin", third, "--timeout", "1s", "--interval", "200ms", "--json")
	dr = DrainOutput{}
	parseJSON(t, out, &dr)
	if code != ExitStuck || dr.Drained || dr.Pending != 2 || dr.Origins.Origin != third {
		t.Errorf("drain --origin %s: exit %d, %+v", third, code, dr)
	}

	tbl := d.writer.Table()
	other := published[0]
	other.EventID, other.Origin = other.EventID[:len(other.EventID)-1]+"Z", third
	other.PartitionKey, other.SortKey = tbl.SortKeyFor(other.EventID), tbl.SortKeyFor(other.EventID)
	item := tbl.Item(other)
	item[outbox.AttrStatus] = &types.AttributeValueMemberS{Value: string(outbox.StatusPublished)}
	d.put(&dynamodb.PutItemInput{TableName: aws.String(tbl.Name), Item: item})
	out, errOut, code = d.run("replay", "regions", "--since", "1h", "--json")
	var rp ReplayOutput
	parseJSON(t, out, &rp)
	if code != ExitOK || rp.Selected != 2 || rp.Published != 2 || rp.Origins == nil || rp.Origins.LeftOut[third] != 1 {
		t.Errorf("replay of the primary: exit %d, %+v", code, rp)
	}
	if !strings.Contains(errOut, "left out events of the window written in other Regions (1 of "+third+")") {
		t.Errorf("replay does not say what it left out: %q", errOut)
	}
	out, _, _ = d.run("replay", "regions", "--since", "1h", "--all-origins", "--json")
	rp = ReplayOutput{}
	parseJSON(t, out, &rp)
	if rp.Selected != 3 || rp.Published != 3 || rp.Origins == nil || rp.Origins.Origin != "all" || len(rp.Origins.LeftOut) != 0 {
		t.Errorf("replay --all-origins: %+v", rp)
	}
}

// statusOf is the status attribute of an item.
func statusOf(item map[string]types.AttributeValue) string {
	s, _ := item[outbox.AttrStatus].(*types.AttributeValueMemberS)
	if s == nil {
		return ""
	}
	return s.Value
}

// writeFrom commits events through a writer of the same table that stamps
// origin on them, as a writer in that Region of the global table does.
func (d *deployed) writeFrom(origin string, events ...outbox.Event) []outbox.Record {
	d.t.Helper()
	w, err := outbox.NewWriter(d.ddb, d.writer.Table(), outbox.WithOrigin(origin))
	if err != nil {
		d.t.Fatal(err)
	}
	recs, err := w.Write(d.ctx, nil, events...)
	if err != nil {
		d.t.Fatalf("writing events of %s: %v", origin, err)
	}
	return recs
}

// put stores an item of the pipeline's table.
func (d *deployed) put(in *dynamodb.PutItemInput) {
	d.t.Helper()
	if _, err := d.ddb.PutItem(d.ctx, in); err != nil {
		d.t.Fatal(err)
	}
}
