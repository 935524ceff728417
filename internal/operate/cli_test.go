package operate

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/smithy-go"

	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relay/config"
	"github.com/outboxkit/terraform-provider-outbox/internal/targetkind"
	"github.com/outboxkit/terraform-provider-outbox/outbox"
)

var subcommands = []string{"status", "failed", "requeue", "skip", "drain", "replay", "redrive"}

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
		out, errOut, code := testCLI(t, args...)
		if code != ExitOK || errOut != "" {
			t.Errorf("outbox %v exited %d, stderr %q", args, code, errOut)
		}
		for _, name := range subcommands {
			if !strings.Contains(out, "\n  "+name+" ") {
				t.Errorf("outbox %v does not list %s:\n%s", args, name, out)
			}
		}
		for _, c := range exitCodes {
			if !strings.Contains(out, fmt.Sprintf("\n  %-3d  %s\n", c.code, c.meaning)) {
				t.Errorf("outbox %v does not list exit code %d:\n%s", args, c.code, out)
			}
		}
	}
	// Without a subcommand, the usage is the error: on standard error.
	if out, errOut, code := testCLI(t); code != ExitUsage || out != "" || !strings.Contains(errOut, "Subcommands:") {
		t.Errorf("outbox without arguments: exit %d, stdout %q, stderr %q; want %d, the usage on stderr", code, out, errOut, ExitUsage)
	}
}

// singleDashFlag is a long flag spelled with one dash, as the flag package
// prints them.
var singleDashFlag = regexp.MustCompile(`(^|\s)-[a-z][a-z-]+`)

func TestSubcommandHelp(t *testing.T) {
	t.Parallel()
	for _, name := range subcommands {
		for _, args := range [][]string{{name, "--help"}, {"help", name}, {name, "-h"}} {
			out, errOut, code := testCLI(t, args...)
			if code != ExitOK || errOut != "" || !strings.Contains(out, "Example:\n  outbox "+name+" ") {
				t.Errorf("outbox %v: exit %d, stderr %q, no example:\n%s", args, code, errOut, out)
			}
			for _, want := range []string{"\n  --endpoint-url URL ", "\n  --region REGION ", "\n  --json ", "Exit codes:\n"} {
				if !strings.Contains(out, want) {
					t.Errorf("outbox %v lacks %q:\n%s", args, want, out)
				}
			}
			_, flags, _ := strings.Cut(out, "Flags:\n")
			if m := singleDashFlag.FindString(flags); m != "" {
				t.Errorf("outbox %v spells a flag %q:\n%s", args, m, flags)
			}
			if strings.Contains(flags, " value ") {
				t.Errorf("outbox %v has a flag whose placeholder is \"value\":\n%s", args, flags)
			}
		}
	}
	out, _, _ := testCLI(t, "replay", "--help")
	for _, want := range []string{"\n  --since DURATION|TIME ", "\n  --until DURATION|TIME ", "\n  --rate N ", "\n  --target BUS|TOPIC|QUEUE "} {
		if !strings.Contains(out, want) {
			t.Errorf("replay's help lacks %q:\n%s", want, out)
		}
	}
	out, _, _ = testCLI(t, "drain", "--help")
	if !strings.Contains(out, "\n  --timeout DURATION ") || !strings.Contains(out, "(default 10m)") {
		t.Errorf("drain's help lacks --timeout DURATION (default 10m):\n%s", out)
	}
}

// A wrong command line writes nothing on standard output (a pipe to jq
// gets nothing), and on standard error the error once and where the usage
// is.
func TestUsageErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stauts", "orders"}, `unknown subcommand "stauts": use one of status, failed`},
		{[]string{"status"}, "takes one pipeline name, got 0 arguments"},
		{[]string{"status", "a", "b"}, "takes one pipeline name, got 2 arguments"},
		{[]string{"status", ""}, "takes one pipeline name"},
		{[]string{"status", "x", "--jsn"}, "flag provided but not defined: --jsn"},
		{[]string{"status", "x", "-jsn"}, "flag provided but not defined: --jsn"},
		{[]string{"failed", "orders", "--since", "yesterday"}, `invalid value "yesterday" for flag --since: "yesterday" is not a time`},
		{[]string{"failed", "orders", "--since"}, "flag needs an argument: --since"},
		{[]string{"failed", "orders", "--since", "2999-01-01"}, "--since 2999-01-01T00:00:00Z is in the future"},
		{[]string{"drain", "orders", "--timeout", "soon"}, `"soon" is not a duration: use a number and a unit`},
		{[]string{"drain", "orders", "--timeout", "-1m"}, `"-1m" is not a duration`},
		{[]string{"drain", "orders", "--interval", "0s"}, "--interval must be longer than 0s"},
		{[]string{"status", "orders", "--stuck-after", "0s"}, "--stuck-after must be longer than 0s"},
		{[]string{"requeue", "orders", "--bogus"}, "flag provided but not defined: --bogus"},
		{[]string{"replay", "orders"}, "replay needs --since"},
		{[]string{"replay", "orders", "--since", "1h", "--rate", "-5"}, `"-5" is not a rate`},
		{[]string{"redrive", "orders", "--visibility", "13h"}, "--visibility 13h is out of range"},
	} {
		out, errOut, code := testCLI(t, tc.args...)
		if code != ExitUsage || out != "" || !strings.Contains(errOut, tc.want) {
			t.Errorf("outbox %v: exit %d, stdout %q, stderr %q; want exit %d, nothing on stdout and %q", tc.args, code, out, errOut, ExitUsage, tc.want)
		}
		if n := strings.Count(errOut, "outbox: "); n != 1 {
			t.Errorf("outbox %v writes %d errors, want 1: %q", tc.args, n, errOut)
		}
		if !strings.Contains(errOut, "--help\" for") || strings.Contains(errOut, "Flags:") {
			t.Errorf("outbox %v: stderr %q has no hint to --help, or the whole usage", tc.args, errOut)
		}
	}
}

// A flag may be spelled with one or two dashes, before or after the
// pipeline's name, and with its value after "=".
func TestFlagSpellings(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"drain", "orders", "--timeout", "1m"}, {"drain", "orders", "-timeout", "1m"},
		{"drain", "--timeout=1m", "orders"}, {"drain", "-timeout=1m", "orders", "--json"},
	} {
		_, errOut, code := testCLIWithConfigError(t, args...)
		if code != ExitNotFound || !strings.Contains(errOut, "no AWS region is set") {
			t.Errorf("outbox %v: exit %d, %q; want the flags accepted and the missing region reported", args, code, errOut)
		}
	}
}

// An empty or inverted replay window is a usage error naming both flags
// and the fix, before anything reaches AWS.
func TestReplayRefusesAnEmptyWindow(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"replay", "orders", "--since", "30m", "--until", "2h"},
		{"replay", "orders", "--since", "2026-11-30", "--until", "2026-11-30"},
		{"replay", "orders", "--until", "2026-11-29", "--since", "2026-11-30T10:00:00Z"},
	} {
		out, errOut, code := testCLI(t, args...)
		for _, want := range []string{"the window is empty", "--until (", "is not after --since (", "for example --since 2h --until 30m"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("outbox %v: stderr %q lacks %q", args, errOut, want)
			}
		}
		if code != ExitUsage || out != "" {
			t.Errorf("outbox %v: exit %d, stdout %q; want %d and nothing", args, code, out, ExitUsage)
		}
	}
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	if err := checkWindow(now.Add(-2*time.Hour), now.Add(-30*time.Minute), now); err != nil {
		t.Errorf("checkWindow refuses --since 2h --until 30m: %v", err)
	}
	if err := checkWindow(now.Add(-2*time.Hour), time.Time{}, now); err != nil {
		t.Errorf("checkWindow refuses --since 2h without --until: %v", err)
	}
	err := checkWindow(now.Add(-30*time.Minute), now.Add(-2*time.Hour), now)
	if err == nil || !strings.Contains(err.Error(), "(2026-12-01T10:00:00Z, 2h0m0s ago) is not after --since (2026-12-01T11:30:00Z, 30m0s ago)") {
		t.Errorf("checkWindow(--since 30m --until 2h) = %v", err)
	}
}

// Each outcome has its own exit code, decided from the error's type.
func TestExitCodes(t *testing.T) {
	t.Parallel()
	denied := &smithy.GenericAPIError{Code: "AccessDeniedException"}
	unknownKey := &smithy.GenericAPIError{Code: "UnrecognizedClientException"}
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, ExitOK},
		{stuck("3 events are still pending"), ExitStuck},
		{fmt.Errorf("redrive: %w", stuck("left")), ExitStuck},
		{usageError("drain", "bad"), ExitUsage},
		{fmt.Errorf("pipeline %q: %w", "x", ErrNotFound), ExitNotFound},
		{notFoundError{errors.New("no AWS region is set")}, ExitNotFound},
		{fmt.Errorf("replay: %w", ErrNothingToReplay), ExitNotFound},
		{call("dynamodb:Scan", "table t", unknownKey), ExitNotFound},
		{call("dynamodb:Scan", "table t", denied), ExitFailed},
		{call("dynamodb:Scan", "table t", &smithy.GenericAPIError{Code: "ThrottlingException"}), ExitFailed},
		{errors.New("connection refused"), ExitFailed},
		{fmt.Errorf("waiting: %w", context.Canceled), ExitInterrupted},
	} {
		if got := exitCode(tc.err); got != tc.want {
			t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// The AWS configuration's own failures: no region, or a profile that
// does not exist, are "not found".
func TestConfigNotFound(t *testing.T) {
	isolateAWSEnv(t)
	if _, err := LoadConfig(context.Background(), Settings{}); exitCode(err) != ExitNotFound || !strings.Contains(err.Error(), "no AWS region is set: pass --region") {
		t.Errorf("LoadConfig without a region = %v (exit %d)", err, exitCode(err))
	}
	_, err := LoadConfig(context.Background(), Settings{Region: "eu-west-1", Profile: "nosuch"})
	if exitCode(err) != ExitNotFound || !strings.Contains(err.Error(), `the AWS profile "nosuch" does not exist`) {
		t.Errorf("LoadConfig with an unknown profile = %v (exit %d)", err, exitCode(err))
	}
	_, err = LoadConfig(context.Background(), Settings{Region: "eu-west-1"})
	if exitCode(err) != ExitNotFound || !strings.Contains(err.Error(), "no AWS credentials were found: pass --profile") {
		t.Errorf("LoadConfig without credentials = %v (exit %d)", err, exitCode(err))
	}
}

// isolateAWSEnv clears the AWS configuration of the environment, so that
// the default chain finds no region, profile or credentials.
func isolateAWSEnv(t *testing.T) {
	t.Helper()
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "AWS_") {
			t.Setenv(k, "")
			_ = os.Unsetenv(k)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_CONFIG_FILE", empty)
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", empty)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
}

// testCLIWithConfigError runs a command line whose AWS configuration
// fails as without a region.
func testCLIWithConfigError(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut, Config: func(context.Context, Settings) (aws.Config, error) {
		return aws.Config{}, notFoundError{errors.New("no AWS region is set: pass --region")}
	}}
	code = cli.Run(context.Background(), args)
	return out.String(), errOut.String(), code
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
		{func(s *Status) {
			s.Pending.Oldest, s.Reconciler.LastRun = time.Hour, &ReconcileRun{Waiting: 18, Blocked: 0}
		}, "the reconciler's last run left 18 events behind an earlier event of their ordering key"},
		{func(s *Status) {
			s.Failed.brokenEvents = []FailedEvent{{Record: outbox.Record{EventID: "01BROKEN"}, Broken: "malformed outbox item: attribute detail is not a JSON object"}}
		}, "FAILED event 01BROKEN breaks the record contract (malformed outbox item: attribute detail is not a JSON object): it can never be published as it is; fix its item, then `outbox requeue orders --id 01BROKEN --now`"},
	} {
		s := healthy
		tc.change(&s)
		p := problems("orders", s, time.Minute)
		if len(p) != 1 || !strings.Contains(p[0], tc.want) {
			t.Errorf("problems = %q, want one with %q", p, tc.want)
		}
	}
}

// A broken ordered event's key is shown held with why its item is broken,
// and the commands that release it.
func TestProblemsNameABrokenEventsKey(t *testing.T) {
	t.Parallel()
	s := Status{Mapping: MappingStatus{State: "Enabled"}, Failed: FailedStatus{Total: 1, Broken: 1, Keys: heldKeys([]FailedEvent{{
		Record:   outbox.Record{EventID: "01BROKEN", OrderingKey: "K", Sequence: 4},
		HoldsKey: true, WaitingBehind: 6, Broken: "malformed outbox item: attribute detail is not a JSON object",
	}})}}
	p := strings.Join(problems("orders", s, time.Minute), "\n")
	for _, want := range []string{
		"ordering key K is held by its FAILED event 01BROKEN (event 4), whose item breaks the record contract (malformed outbox item: attribute detail is not a JSON object), 6 events wait behind it",
		"fix its item and `outbox requeue orders --id 01BROKEN --now`, or `outbox skip orders --event-id 01BROKEN --yes`",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("problems %q do not say %q", p, want)
		}
	}
}

// `outbox failed --json` writes what a broken event is and whether it holds
// its key, and reads it back.
func TestFailedEventJSONRoundTrip(t *testing.T) {
	t.Parallel()
	for _, e := range []FailedEvent{
		{Record: outbox.Record{EventID: "01A", OrderingKey: "K", Sequence: 4, Status: outbox.StatusFailed}, HoldsKey: true, WaitingBehind: 6, Broken: "malformed"},
		{Record: outbox.Record{EventID: "01B", OrderingKey: "K", Sequence: 2, Status: outbox.StatusFailed}},
	} {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		var back FailedEvent
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatal(err)
		}
		if back.HoldsKey != e.HoldsKey || back.WaitingBehind != e.WaitingBehind || back.Broken != e.Broken || back.Record.Sequence != e.Record.Sequence ||
			strings.Contains(string(b), "waitingBehind") != e.HoldsKey {
			t.Errorf("%s read back as %+v", b, back)
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

func newTestFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// The operations guide lists the permissions of every subcommand, as its
// help does.
func TestGuideListsThePermissions(t *testing.T) {
	t.Parallel()
	guide := readOperationsGuide(t)
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
	ebPipeline := &Pipeline{Config: config.Config{Target: targetkind.Settings{Type: config.TargetEventBridge, EventBus: "orders"}}}
	snsPipeline := &Pipeline{Config: config.Config{Target: targetkind.Settings{Type: config.TargetSNS, TopicARN: "arn:aws:sns:eu-west-1:123456789012:orders"}}}
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
		_, isSNS := targetkind.KindPublisher(pub).(*targetkind.SNSPublisher)
		_, isSQS := targetkind.KindPublisher(pub).(*targetkind.SQSPublisher)
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

// A signal (the command's context canceled) stops the work with its own
// exit code.
func TestInterruptedExits130(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	cli := &CLI{Stdout: &out, Stderr: &errOut, Config: func(context.Context, Settings) (aws.Config, error) {
		return aws.Config{Region: "eu-west-1", BaseEndpoint: aws.String("http://127.0.0.1:9"),
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", "")}, nil
	}}
	code := cli.Run(ctx, []string{"drain", "orders", "--json"})
	if code != ExitInterrupted || out.Len() != 0 || !strings.HasPrefix(errOut.String(), "outbox: interrupted before the work was done: ") {
		t.Errorf("outbox drain, interrupted: exit %d, stdout %q, stderr %q", code, out.String(), errOut.String())
	}
}

// TestReplayInSequence: replay puts each key's ordered events in the order
// of their sequence, in the places its events hold, and leaves unordered
// events where their time puts them.
func TestReplayInSequence(t *testing.T) {
	t.Parallel()
	rec := func(id, key string, seq int64) outbox.Record {
		return outbox.Record{EventID: id, OrderingKey: key, Sequence: seq}
	}
	records := []outbox.Record{rec("a3", "a", 3), rec("x", "", 0), rec("b1", "b", 1), rec("a1", "a", 1), rec("a2", "a", 2)}
	inSequence(records)
	var got []string
	for _, r := range records {
		got = append(got, r.EventID)
	}
	if want := []string{"a1", "x", "b1", "a2", "a3"}; !slices.Equal(got, want) {
		t.Errorf("replay order %v, want %v", got, want)
	}
}
