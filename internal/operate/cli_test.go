package operate

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/target"
)

var subcommands = []string{"status", "failed", "requeue", "drain", "replay", "redrive"}

// testCLI runs a command line that must not reach AWS.
func testCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut, Config: func(context.Context, Settings) (aws.Config, error) {
		t.Fatalf("outbox %s loaded the AWS configuration", strings.Join(args, " "))
		return aws.Config{}, nil
	}}
	code = cli.Run(context.Background(), args)
	return out.String(), errOut.String(), code
}

func TestHelpListsSubcommands(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
		out, _, code := testCLI(t, args...)
		if code != ExitOK {
			t.Errorf("outbox %v exited %d", args, code)
		}
		for _, name := range subcommands {
			if !strings.Contains(out, "\n  "+name+" ") {
				t.Errorf("outbox %v does not list %s:\n%s", args, name, out)
			}
		}
	}
	if _, _, code := testCLI(t); code != ExitUsage {
		t.Errorf("outbox without arguments exited %d, want %d", code, ExitUsage)
	}
}

func TestSubcommandHelpHasExample(t *testing.T) {
	t.Parallel()
	for _, name := range subcommands {
		for _, args := range [][]string{{name, "--help"}, {"help", name}} {
			out, _, code := testCLI(t, args...)
			if code != ExitOK || !strings.Contains(out, "Example:\n  outbox "+name+" ") || !strings.Contains(out, "-endpoint-url") {
				t.Errorf("outbox %v: exit %d, no example or no common flags:\n%s", args, code, out)
			}
		}
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts", "orders"}, `unknown subcommand "stauts"`},
		{[]string{"status"}, "takes one pipeline name, got 0"},
		{[]string{"status", "a", "b"}, "takes one pipeline name, got 2"},
		{[]string{"failed", "orders", "--since", "yesterday"}, `"yesterday" is not a time`},
		{[]string{"drain", "orders", "--timeout", "soon"}, "invalid value"},
		{[]string{"requeue", "orders", "--bogus"}, "flag provided but not defined: -bogus"},
	} {
		_, errOut, code := testCLI(t, tc.args...)
		if code != ExitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("outbox %v: exit %d, stderr %q; want exit %d and %q", tc.args, code, errOut, ExitUsage, tc.want)
		}
	}
}

func TestParseTime(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90m":                       now.Add(-90 * time.Minute),
		"7d":                        now.Add(-7 * 24 * time.Hour),
		"0s":                        now,
		"2026-11-30":                time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC),
		"2026-11-30T10:15":          time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		"2026-11-30T10:15:00Z":      time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
		"2026-11-30T11:15:00+01:00": time.Date(2026, 11, 30, 10, 15, 0, 0, time.UTC),
	} {
		got, err := parseTime(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1h", "yesterday", "7days"} {
		if _, err := parseTime(in, now); err == nil {
			t.Errorf("parseTime(%q) accepted it", in)
		}
	}
}

func TestParseInterspersed(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--json", "orders"}, {"orders", "--json"}} {
		fs := newTestFlagSet()
		asJSON := fs.Bool("json", false, "")
		pos, err := parseInterspersed(fs, args)
		if err != nil || len(pos) != 1 || pos[0] != "orders" || !*asJSON {
			t.Errorf("parseInterspersed(%v) = %v, %v, json %t", args, pos, err, *asJSON)
		}
	}
}

func TestProblems(t *testing.T) {
	t.Parallel()
	healthy := Status{Mapping: MappingStatus{State: "Enabled", LastProcessingResult: "OK"}}
	if p := problems("orders", healthy, time.Minute); len(p) != 0 {
		t.Errorf("a healthy pipeline has problems: %v", p)
	}
	for _, tc := range []struct {
		change func(*Status)
		want   string
	}{
		{func(s *Status) { s.Failed.Total = 2 }, "outbox requeue orders"},
		{func(s *Status) { s.DLQ.Messages = 1 }, "outbox redrive orders"},
		{func(s *Status) { s.DLQ.InFlight = 1 }, "outbox redrive orders"},
		{func(s *Status) { s.DLQ.Missing = true }, "does not exist: the mapping cannot record"},
		{func(s *Status) { s.Pending.Oldest = time.Hour }, "the oldest pending event is 1h0m0s old"},
		{func(s *Status) { s.Mapping.State = "Disabled" }, "mapping is Disabled"},
		{func(s *Status) { s.Mapping.LastProcessingResult = "PROBLEM: Function call failed" }, "PROBLEM: Function call failed"},
	} {
		s := healthy
		tc.change(&s)
		p := problems("orders", s, time.Minute)
		if len(p) != 1 || !strings.Contains(p[0], tc.want) {
			t.Errorf("problems = %q, want one with %q", p, tc.want)
		}
	}
}

func TestReplayInDeleteModeHasNothingToReplay(t *testing.T) {
	t.Parallel()
	p := &Pipeline{Name: "orders", Config: config.Config{PublishedAction: config.ActionDelete}}
	_, err := (&Clients{}).Replay(context.Background(), p, ReplayOptions{Filter: Filter{Since: time.Now()}})
	if !errors.Is(err, ErrNothingToReplay) || !strings.Contains(err.Error(), `published.action = "delete"`) {
		t.Errorf("Replay in delete mode = %v", err)
	}
}

func TestCallNamesThePermission(t *testing.T) {
	t.Parallel()
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized"}
	err := call("dynamodb:Scan", "table orders-outbox", denied)
	var pe *PermissionError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "grant dynamodb:Scan on it") || !errors.Is(err, denied) {
		t.Errorf("call(AccessDenied) = %v", err)
	}
	other := &smithy.GenericAPIError{Code: "ValidationException"}
	if err := call("dynamodb:Scan", "table t", other); errors.As(err, &pe) || !strings.Contains(err.Error(), "dynamodb:Scan on table t") {
		t.Errorf("call(ValidationException) = %v", err)
	}
}

func TestParseReconcileRun(t *testing.T) {
	t.Parallel()
	line := `{"time":"2026-12-01T10:00:00Z","level":"INFO","msg":"reconcile finished","found":5,"published":4,"failed":1,"poison":0,"complete":true}`
	run, ok := parseReconcileRun(line, 0)
	if !ok || run.Found != 5 || run.Published != 4 || run.Failed != 1 || !run.Complete || !run.Time.Equal(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)) {
		t.Errorf("parseReconcileRun = %+v, %t", run, ok)
	}
	if _, ok := parseReconcileRun(`{"msg":"reconcile stopped before the deadline"}`, 0); ok {
		t.Error("parseReconcileRun accepted another message")
	}
}

func TestProgress(t *testing.T) {
	t.Parallel()
	var tty bytes.Buffer
	p := &progress{w: &tty, terminal: true}
	p.update("a")
	p.update("b")
	p.done("c")
	if got := tty.String(); got != "\r\033[Ka\r\033[Kb\r\033[Kc\n" {
		t.Errorf("terminal progress = %q", got)
	}
	var plain bytes.Buffer
	p = &progress{w: &plain}
	p.update("a")
	p.update("b") // within plainEvery of a: not printed
	p.done("c")
	if got := plain.String(); got != "a\nc\n" {
		t.Errorf("plain progress = %q", got)
	}
	if got := bar(5, 10); got != "[===============               ] 5/10  50%" {
		t.Errorf("bar = %q", got)
	}
}

func newTestFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// The operations guide lists the permissions of every subcommand, as its
// help does.
func TestGuideListsThePermissions(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/guides/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	guide := string(b)
	_, section, ok := strings.Cut(guide, "### Permissions of the outbox command")
	if !ok {
		t.Fatal("the operations guide has no section on the command's permissions")
	}
	for _, p := range findPermissions {
		if !strings.Contains(section, "`"+p+"`") {
			t.Errorf("the guide does not say that every subcommand needs %s", p)
		}
	}
	for _, c := range commands() {
		_, row, ok := strings.Cut(section, "\n| `"+c.name+"` |")
		if !ok {
			t.Errorf("the guide's permissions table has no row for %s", c.name)
			continue
		}
		row, _, _ = strings.Cut(row, "\n")
		for _, p := range c.permissions {
			if !strings.Contains(row, "`"+p+"`") {
				t.Errorf("the guide's row for %s lacks %s: %s", c.name, p, row)
			}
		}
	}
}

func TestReplayTargets(t *testing.T) {
	t.Parallel()
	c := &Clients{}
	ebPipeline := &Pipeline{Config: config.Config{Target: target.Settings{Type: config.TargetEventBridge, EventBus: "orders"}}}
	snsPipeline := &Pipeline{Config: config.Config{Target: target.Settings{Type: config.TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"}}}
	for _, tc := range []struct {
		p                       *Pipeline
		target, want            string
		wantSNS, wantSQS, fails bool
	}{
		{p: ebPipeline, want: "orders"},
		{p: snsPipeline, want: "arn:aws:sns:eu-west-1:123456789012:orders", wantSNS: true},
		{p: snsPipeline, target: "analytics", want: "analytics"},
		{p: ebPipeline, target: "arn:aws:events:eu-west-1:123456789012:event-bus/analytics", want: "arn:aws:events:eu-west-1:123456789012:event-bus/analytics"},
		{p: ebPipeline, target: "arn:aws:sns:eu-west-1:123456789012:analytics", want: "arn:aws:sns:eu-west-1:123456789012:analytics", wantSNS: true},
		{p: ebPipeline, target: "arn:aws:sqs:eu-west-1:123456789012:queue", want: "arn:aws:sqs:eu-west-1:123456789012:queue", wantSQS: true},
		{p: ebPipeline, target: "arn:aws:lambda:eu-west-1:123456789012:function:f", fails: true},
		{p: ebPipeline, target: "arn:nope", fails: true},
	} {
		pub, got, err := c.publisher(tc.p, tc.target)
		if tc.fails {
			if err == nil || !strings.Contains(err.Error(), "an event bus name, or the ARN of an event bus, SNS topic or SQS queue") {
				t.Errorf("publisher(%q) = %v, want an error naming the accepted targets", tc.target, err)
			}
			continue
		}
		_, isSNS := pub.(*target.SNSPublisher)
		_, isSQS := pub.(*target.SQSPublisher)
		if err != nil || got != tc.want || isSNS != tc.wantSNS || isSQS != tc.wantSQS {
			t.Errorf("publisher(%q) = %T %q %v; want %q, SNS %t, SQS %t", tc.target, pub, got, err, tc.want, tc.wantSNS, tc.wantSQS)
		}
	}
}

func TestReconcileWithoutReconciler(t *testing.T) {
	t.Parallel()
	p := &Pipeline{Name: "orders", Names: provision.NamesFor("orders")}
	_, err := (&Clients{}).Reconcile(context.Background(), p, nil)
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "orders-reconciler does not exist") || !strings.Contains(err.Error(), "enable reconciler") {
		t.Errorf("Reconcile without a reconciler = %v", err)
	}
}
