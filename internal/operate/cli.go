package operate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
)

// Settings say where the command finds AWS: empty fields fall back to the
// SDK's default chain (AWS_REGION, AWS_PROFILE, AWS_ENDPOINT_URL, shared
// files, instance and container credentials).
type Settings struct {
	Region, Profile, EndpointURL string
}

// LoadConfig loads the AWS configuration with the standard credential chain.
func LoadConfig(ctx context.Context, s Settings) (aws.Config, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if s.Region != "" {
		opts = append(opts, awsconfig.WithRegion(s.Region))
	}
	if s.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(s.Profile))
	}
	if s.EndpointURL != "" {
		opts = append(opts, awsconfig.WithBaseEndpoint(s.EndpointURL))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w (check --profile and the AWS_* environment variables)", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region is set: pass --region, or set AWS_REGION, or region in the profile")
	}
	return cfg, nil
}

// CLI runs the outbox command.
type CLI struct {
	Stdout, Stderr io.Writer
	// Terminal is true when Stdout is a terminal: progress then redraws
	// one line in place.
	Terminal bool
	// Config loads the AWS configuration; nil means LoadConfig.
	Config func(context.Context, Settings) (aws.Config, error)
}

// Exit codes.
const (
	ExitOK = 0
	// ExitStuck: something is stuck, the wait timed out, or events could
	// not be published.
	ExitStuck = 1
	// ExitUsage: the command line is wrong.
	ExitUsage = 2
)

// exitError ends a subcommand with a code; its message, if any, goes to
// standard error.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func stuck(format string, args ...any) error {
	return &exitError{code: ExitStuck, msg: fmt.Sprintf(format, args...)}
}

func usageError(format string, args ...any) error {
	return &exitError{code: ExitUsage, msg: fmt.Sprintf(format, args...)}
}

// env is what a subcommand runs with.
type env struct {
	cli      *CLI
	clients  *Clients
	pipeline *Pipeline
	out      *tabwriter.Writer
	progress *progress
	now      time.Time
	// err is the first error writing the output.
	err error
}

// printf writes to the output, keeping the first error.
func (e *env) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.out, format, args...)
	}
}

// flush writes out the aligned output so far.
func (e *env) flush() {
	if err := e.out.Flush(); e.err == nil {
		e.err = err
	}
}

// findPermissions are the IAM actions of finding a pipeline (Find).
var findPermissions = []string{"lambda:GetFunctionConfiguration"}

// command is one subcommand.
type command struct {
	name, summary string
	// args describes the arguments after the pipeline's name.
	args string
	// help says more than summary; example is a full command line.
	help, example string
	// permissions are the IAM actions the subcommand calls, besides
	// findPermissions.
	permissions []string
	// flags declares the subcommand's flags and returns what runs it.
	flags func(fs *flag.FlagSet) func(ctx context.Context, e *env) error
}

// Run runs the command line args (without the program name) and returns
// the exit code.
func (c *CLI) Run(ctx context.Context, args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help" {
		if len(args) > 1 {
			return c.Run(ctx, []string{args[1], "--help"})
		}
		c.usage(c.Stdout)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return c.exit(c.runCommand(ctx, cmd, args[1:]))
		}
	}
	_, _ = fmt.Fprintf(c.Stderr, "outbox: unknown subcommand %q\n\n", args[0])
	c.usage(c.Stderr)
	return ExitUsage
}

func (c *CLI) exit(err error) int {
	var ee *exitError
	switch {
	case err == nil:
		return ExitOK
	case errors.Is(err, flag.ErrHelp):
		return ExitOK
	case errors.As(err, &ee):
		if ee.msg != "" {
			_, _ = fmt.Fprintln(c.Stderr, "outbox:", ee.msg)
		}
		return ee.code
	}
	_, _ = fmt.Fprintln(c.Stderr, "outbox:", err)
	return ExitStuck
}

func (c *CLI) usage(w io.Writer) {
	_, _ = fmt.Fprint(w, `outbox operates a transactional outbox pipeline on AWS: it finds the
pipeline's table, relay, dead-letter queue and reconciler by the pipeline's
name, as the Terraform provider names them. Nothing needs Terraform state.

Usage:
  outbox <subcommand> <pipeline> [flags]

Subcommands:
`)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, cmd := range commands() {
		_, _ = fmt.Fprintf(tw, "  %s\t%s\n", cmd.name, cmd.summary)
	}
	_ = tw.Flush()
	_, _ = fmt.Fprint(w, `
Every subcommand takes --region, --profile and --endpoint-url (or
AWS_ENDPOINT_URL) and uses the standard AWS credential chain.
Run "outbox <subcommand> --help" for its flags and an example.
`)
}

func (c *CLI) runCommand(ctx context.Context, cmd command, args []string) error {
	fs := flag.NewFlagSet("outbox "+cmd.name, flag.ContinueOnError)
	fs.SetOutput(c.Stdout)
	var s Settings
	fs.StringVar(&s.Region, "region", "", "AWS region (default: AWS_REGION or the profile's)")
	fs.StringVar(&s.Profile, "profile", "", "shared configuration profile (default: AWS_PROFILE)")
	fs.StringVar(&s.EndpointURL, "endpoint-url", "", "endpoint of every AWS service, such as a local stack (default: AWS_ENDPOINT_URL)")
	run := cmd.flags(fs)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(c.Stdout, "Usage: outbox %s <pipeline>%s [flags]\n\n%s\n\n%s\n\nExample:\n  %s\n\nIAM permissions: %s\n\nFlags:\n",
			cmd.name, cmd.args, cmd.summary, cmd.help, cmd.example, strings.Join(slices.Concat(findPermissions, cmd.permissions), ", "))
		fs.PrintDefaults()
	}
	positional, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageError("%v (see outbox %s --help)", err, cmd.name)
	}
	if len(positional) != 1 {
		return usageError("outbox %s takes one pipeline name, got %d arguments (see outbox %s --help)", cmd.name, len(positional), cmd.name)
	}
	load := c.Config
	if load == nil {
		load = LoadConfig
	}
	cfg, err := load(ctx, s)
	if err != nil {
		return err
	}
	clients := NewClients(cfg)
	p, err := clients.Find(ctx, positional[0])
	if err != nil {
		return err
	}
	e := &env{cli: c, clients: clients, pipeline: p, now: time.Now(), out: tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)}
	e.progress = &progress{w: c.Stdout, terminal: c.Terminal, flush: e.flush}
	err = run(ctx, e)
	e.flush()
	if err == nil {
		err = e.err
	}
	return err
}

// parseInterspersed parses flags that come before or after the positional
// arguments, and returns the latter.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return positional, nil
		}
		positional = append(positional, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// timeFlag is a point in time given as an RFC 3339 time, a date, or an age
// ("90m", "24h", "7d": that long ago).
type timeFlag struct {
	t   *time.Time
	now func() time.Time
}

func (f timeFlag) String() string {
	if f.t == nil || f.t.IsZero() {
		return ""
	}
	return f.t.Format(time.RFC3339)
}

func (f timeFlag) Set(s string) error {
	t, err := parseTime(s, f.now())
	if err != nil {
		return err
	}
	*f.t = t
	return nil
}

func parseTime(s string, now time.Time) (time.Time, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil && n >= 0 {
			return now.Add(-time.Duration(n * 24 * float64(time.Hour))), nil
		}
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use an RFC 3339 time (2026-11-30T10:00:00Z), a date (2026-11-30) or an age (90m, 24h, 7d)", s)
}

// listFlag collects values given several times or comma-separated.
type listFlag struct{ values *[]string }

func (f listFlag) String() string {
	if f.values == nil {
		return ""
	}
	return strings.Join(*f.values, ",")
}

func (f listFlag) Set(s string) error {
	for v := range strings.SplitSeq(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			*f.values = append(*f.values, v)
		}
	}
	return nil
}
