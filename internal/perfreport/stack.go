package perfreport

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/outboxkit/terraform-provider-outbox/internal/stats"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/outboxkit/terraform-provider-outbox/internal/localaws"
	"github.com/outboxkit/terraform-provider-outbox/internal/provision"
	"github.com/outboxkit/terraform-provider-outbox/internal/relaypackage"
)

// Modes of the relay that the stack measurements compare.
const (
	ModeRelay = "relay"
	ModeNaive = "naive"
	// ModeCeiling is the relay with the largest batches and
	// parallelization, for the throughput ceiling.
	ModeCeiling = "ceiling"
)

// Scenarios of the stack measurements.
const (
	ScenarioLocal = "local stack"
	ScenarioModel = "AWS model"
)

// The mapping settings of the ceiling run: the largest batch a stream
// mapping's function usually takes and the highest parallelization.
const (
	CeilingBatchSize       = 1000
	CeilingParallelization = 10
)

// Options configure Measure.
type Options struct {
	// Root is the repository's root (the naive relay's zips, the
	// provider's sources).
	Root string
	// Terraform is the CLI used to time `terraform apply`; when empty or
	// missing, only provision.Create is timed.
	Terraform string
	// LatencyEvents is the number of events per relay in the latency run,
	// written by each relay's writer at random (exponential) intervals of
	// mean Interval.
	LatencyEvents int
	Interval      time.Duration
	// Burst is the number of events of a throughput run, BurstRuns the
	// runs per relay; CeilingBurst the events of a ceiling run.
	Burst        int
	BurstRuns    int
	CeilingBurst int
	// UnitEvents is the number of events whose write units are counted
	// per mode.
	UnitEvents int
	// ColdStarts is the number of fresh functions invoked per
	// architecture; Applies the number of applies timed.
	ColdStarts int
	Applies    int
	// Log receives progress.
	Log io.Writer
}

func (o *Options) defaults() {
	orDefault(&o.LatencyEvents, 400)
	orDefault(&o.Interval, 50*time.Millisecond)
	orDefault(&o.Burst, 1000)
	orDefault(&o.BurstRuns, 3)
	orDefault(&o.CeilingBurst, 5000)
	orDefault(&o.UnitEvents, 100)
	orDefault(&o.ColdStarts, 3)
	orDefault(&o.Applies, 3)
	if o.Log == nil {
		o.Log = io.Discard
	}
}

// orDefault sets *v to def when it is zero or negative: unset.
func orDefault[T int | time.Duration](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Results are the stack measurements.
type Results struct {
	Options Options
	// Local and Model are both relays measured in the same run, on the
	// stack as it is and with the AWS latency model added to every call.
	Local, Model Scenario
	// Ceiling is the relay's throughput per shard at its largest settings,
	// under the model.
	Ceiling    Ceiling
	Units      UnitsResult
	Apply      ApplyResult
	ColdStarts []ColdStart
	Zips       []ZipSize
	// Architecture of the two measured relay functions.
	Architecture string
	// Duration of the stack measurements.
	Duration time.Duration
}

// Scenario is both relays' latency and throughput under one latency model.
type Scenario struct {
	Name string
	// Model is the latency added to each call; nil for the stack as it is.
	Model        []CallLatency
	Relay, Naive ModeResult
}

// ThroughputRatio is the relay's median throughput over the naive relay's.
func (s Scenario) ThroughputRatio() float64 {
	if n := s.Naive.MedianThroughput(); n > 0 {
		return s.Relay.MedianThroughput() / n
	}
	return 0
}

// Ceiling is the relay's throughput through one shard with batch size
// BatchSize and parallelization ParallelizationFactor.
type Ceiling struct {
	BatchSize, ParallelizationFactor int32
	Bursts                           []Burst
}

// MedianThroughput is the median events per second of the runs.
func (c Ceiling) MedianThroughput() float64 {
	return ModeResult{Bursts: c.Bursts}.MedianThroughput()
}

// ModeResult is one relay's latency and throughput.
type ModeResult struct {
	Name string
	// Latencies from commit (TransactWriteItems returned) to receipt by the
	// subscription queue's consumer, one per event received.
	Latencies []time.Duration
	// Lost counts events of the latency run not received in time.
	Lost int
	// Duplicates counts events received more than once.
	Duplicates int
	// InvocationsPerEvent is the relay's invocations in the latency run
	// over its events.
	InvocationsPerEvent float64
	Bursts              []Burst
}

// Burst is one throughput run: Events written while the mapping was
// paused, then released at once.
type Burst struct {
	Events int
	// Drain is the time from resuming the mapping to the last event's
	// receipt.
	Drain       time.Duration
	Invocations int64
}

// EventsPerSecond is the run's throughput.
func (b Burst) EventsPerSecond() float64 { return float64(b.Events) / b.Drain.Seconds() }

// MedianThroughput is the median events per second of the runs.
func (m ModeResult) MedianThroughput() float64 {
	var xs []float64
	for _, b := range m.Bursts {
		xs = append(xs, b.EventsPerSecond())
	}
	return stats.MedianFloat(xs)
}

// MedianBatch is the median records per invocation of the runs.
func (m ModeResult) MedianBatch() float64 {
	var xs []float64
	for _, b := range m.Bursts {
		if b.Invocations > 0 {
			xs = append(xs, float64(b.Events)/float64(b.Invocations))
		}
	}
	return stats.MedianFloat(xs)
}

// ZipSize is the size of a deployment package.
type ZipSize struct {
	Name  string
	Bytes int64
	// Bootstrap is the uncompressed executable's size.
	Bootstrap int64
}

// ColdStart is the first invocations of fresh functions of one package.
type ColdStart struct {
	Arch     string
	Emulated bool
	// First is the first invocation of each fresh function, as the client
	// saw it; Init is the stack's Init Duration (process start to the
	// runtime's first request for work); Warm the second invocation.
	First, Init, Warm []time.Duration
}

// Measure runs every stack measurement on a local AWS stack of its own.
func Measure(ctx context.Context, o Options) (*Results, error) {
	o.defaults()
	start := time.Now()
	say := func(format string, args ...any) { _, _ = fmt.Fprintf(o.Log, format+"\n", args...) }
	res := &Results{Options: o, Architecture: string(nativeArch())}

	zips, err := zipSizes(o.Root)
	if err != nil {
		return nil, err
	}
	res.Zips = zips

	stack, err := localaws.Start(ctx, localaws.Options{Addr: "127.0.0.1:0", Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, fmt.Errorf("starting the local AWS stack: %w", err)
	}
	defer func() { _ = stack.Close() }()
	cfg := awsConfig(stack)
	say("local AWS stack at %s", stack.Endpoint())

	if err := res.measureRelays(ctx, o, stack, cfg, say); err != nil {
		return nil, err
	}
	say("counting write units...")
	if res.Units, err = measureUnits(ctx, cfg, o.UnitEvents); err != nil {
		return nil, fmt.Errorf("counting write units: %w", err)
	}
	say("cold starts...")
	if res.ColdStarts, err = measureColdStarts(ctx, cfg, o); err != nil {
		return nil, fmt.Errorf("measuring cold starts: %w", err)
	}
	say("apply times...")
	if res.Apply, err = measureApply(ctx, o, stack, cfg, say); err != nil {
		return nil, fmt.Errorf("timing apply: %w", err)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// nativeArch is the Lambda architecture that runs natively here.
func nativeArch() provision.Architecture {
	if runtime.GOARCH == "arm64" {
		return provision.ArchARM64
	}
	return provision.ArchX86_64
}

func awsConfig(stack *localaws.Stack) aws.Config {
	transport := awshttp.NewBuildableClient().GetTransport()
	transport.MaxIdleConnsPerHost = 64
	return aws.Config{
		Region:       stack.Options().Region,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOCALADMIN", "localadminsecret", ""),
		BaseEndpoint: aws.String(stack.Endpoint()),
		HTTPClient:   &http.Client{Transport: transport},
	}
}

// NaiveZipPath is where relaypackage/gen writes the naive relay's package.
func NaiveZipPath(root, arch string) string {
	return filepath.Join(root, "internal", "relaypackage", "dist", "_naive", "naive_"+arch+".zip")
}

// naiveCode is the naive relay's package, for a pipeline.
func naiveCode(root string) provision.RelayCode {
	return provision.RelayCode{
		Zip: func(arch string) ([]byte, error) { return os.ReadFile(NaiveZipPath(root, arch)) },
		SHA256: func(arch string) (string, error) {
			b, err := os.ReadFile(NaiveZipPath(root, arch))
			if err != nil {
				return "", err
			}
			sum := sha256.Sum256(b)
			return base64.StdEncoding.EncodeToString(sum[:]), nil
		},
	}
}

func relayCode() provision.RelayCode {
	return provision.RelayCode{Zip: relaypackage.Zip, SHA256: relaypackage.SHA256}
}

func zipSizes(root string) ([]ZipSize, error) {
	var out []ZipSize
	for _, arch := range relaypackage.Architectures {
		b, err := relaypackage.Zip(arch)
		if err != nil {
			return nil, err
		}
		name, _ := relaypackage.FileName(arch)
		out = append(out, ZipSize{Name: name, Bytes: int64(len(b)), Bootstrap: bootstrapSize(b)})
	}
	for _, arch := range relaypackage.Architectures {
		b, err := os.ReadFile(NaiveZipPath(root, arch))
		if err != nil {
			return nil, fmt.Errorf("the naive relay's package: %w (build it with go generate ./internal/relaypackage)", err)
		}
		out = append(out, ZipSize{Name: filepath.Base(NaiveZipPath(root, arch)), Bytes: int64(len(b)), Bootstrap: bootstrapSize(b)})
	}
	return out, nil
}

// lookPath reports whether a command is on PATH.
func lookPath(name string) bool {
	_, err := exec.LookPath(name)
	return err == nil
}

var errNoTerraform = errors.New("no Terraform CLI")

func terraformCLI(path string) (string, error) {
	if path == "" {
		return "", errNoTerraform
	}
	if _, err := os.Stat(path); err != nil {
		return "", fmt.Errorf("%w: %w", errNoTerraform, err)
	}
	return filepath.Abs(path)
}

// trimLines keeps the first n lines of s.
func trimLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}
