package operate

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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
	if profile := (awsconfig.SharedConfigProfileNotExistError{}); errors.As(err, &profile) {
		return aws.Config{}, notFoundError{fmt.Errorf("the AWS profile %q does not exist: check --profile or AWS_PROFILE, and the shared configuration files: %w", profile.Profile, err)}
	}
	if err != nil {
		return aws.Config{}, fmt.Errorf("loading the AWS configuration: %w (check --profile and the AWS_* environment variables)", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, notFoundError{errors.New("no AWS region is set: pass --region, or set AWS_REGION, or region in the profile")}
	}
	// Credentials are resolved now, so that their absence is told apart
	// from a failed call (the SDK's errors do not type it).
	if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
		return aws.Config{}, notFoundError{fmt.Errorf("no AWS credentials were found: pass --profile, or set AWS_PROFILE, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY: %w", err)}
	}
	return cfg, nil
}

// CLI runs the outbox command.
type CLI struct {
	// Stdout receives the results (text or --json); Stderr the progress,
	// the notes for the person watching, and the errors.
	Stdout, Stderr io.Writer
	// Terminal is true when Stderr is a terminal (IsTerminal): progress
	// then draws a bar redrawn in place; otherwise it writes a plain line
	// every few seconds of long work.
	Terminal bool
	// Config loads the AWS configuration; nil means LoadConfig.
	Config func(context.Context, Settings) (aws.Config, error)
}

// env is what a subcommand runs with.
type env struct {
	cli      *CLI
	clients  *Clients
	pipeline *Pipeline
	// out is the results, on standard output.
	out *tabwriter.Writer
	// progress is on standard error.
	progress *progress
	// json is set by --json: the result is one JSON document.
	json bool
	now  time.Time
	// err is the first error writing the output.
	err error
}

// printf writes to the output, keeping the first error.
func (e *env) printf(format string, args ...any) {
	e.progress.clear()
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.out, format, args...)
	}
}

// notef writes a note for the person watching to standard error.
func (e *env) notef(format string, args ...any) {
	e.progress.clear()
	_, _ = fmt.Fprintf(e.cli.Stderr, format+"\n", args...)
}

// noteLeftOut says, on a multi-Region pipeline, which events (what) of
// other Regions were left out.
func (e *env) noteLeftOut(o *OriginsOutput, what string) {
	if note := o.leftOutNote(what); note != "" {
		e.notef("%s", note)
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
	flags func(fs *flag.FlagSet) action
}

// action is what a subcommand does with its flags.
type action struct {
	// check, when not nil, refuses flags that cannot be meant together,
	// before anything reaches AWS; its error is a usage error.
	check func() error
	run   func(ctx context.Context, e *env) error
}

// Run runs the command line args (without the program name) and returns
// the exit code.
func (c *CLI) Run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		writeUsage(c.Stderr)
		return ExitUsage
	}
	switch args[0] {
	case "-h", "--help", "-help", "help":
		if len(args) > 1 {
			return c.Run(ctx, []string{args[1], "--help"})
		}
		writeUsage(c.Stdout)
		return ExitOK
	}
	var names []string
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			return c.report(c.runCommand(ctx, cmd, args[1:]))
		}
		names = append(names, cmd.name)
	}
	return c.report(usageError("", "unknown subcommand %q: use one of %s", args[0], strings.Join(names, ", ")))
}

// report writes the error, if any, once to standard error, and returns
// the exit code.
func (c *CLI) report(err error) int {
	if err == nil {
		return ExitOK
	}
	code := exitCode(err)
	if msg := err.Error(); code == ExitInterrupted {
		_, _ = fmt.Fprintln(c.Stderr, "outbox: interrupted before the work was done:", msg)
	} else if msg != "" {
		_, _ = fmt.Fprintln(c.Stderr, "outbox:", msg)
	}
	if ee := (*exitError)(nil); errors.As(err, &ee) && ee.hint != "" {
		_, _ = fmt.Fprintln(c.Stderr, ee.hint)
	}
	return code
}

// commonFlags declares the flags of every subcommand.
func commonFlags(fs *flag.FlagSet, s *Settings, asJSON *bool) {
	fs.StringVar(&s.Region, "region", "", "the AWS `REGION` (default: AWS_REGION or the profile's region)")
	fs.StringVar(&s.Profile, "profile", "", "the shared configuration `PROFILE` (default: AWS_PROFILE)")
	fs.StringVar(&s.EndpointURL, "endpoint-url", "", "the `URL` of every AWS service, such as a local stack (default: AWS_ENDPOINT_URL)")
	fs.BoolVar(asJSON, "json", false, "print the result as one JSON document (its fields: the operations guide)")
}

func (c *CLI) runCommand(ctx context.Context, cmd command, args []string) error {
	fs := flag.NewFlagSet("outbox "+cmd.name, flag.ContinueOnError)
	// Errors are reported once, by report; the help is written on request.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	var s Settings
	var asJSON bool
	commonFlags(fs, &s, &asJSON)
	act := cmd.flags(fs)
	positional, err := parseInterspersed(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		writeCommandUsage(c.Stdout, cmd, fs)
		return nil
	}
	if err != nil {
		return usageError(cmd.name, "%s", flagError(err))
	}
	if len(positional) != 1 || positional[0] == "" {
		return usageError(cmd.name, "outbox %s takes one pipeline name, got %s", cmd.name, plural(len(positional), "argument", "arguments"))
	}
	if act.check != nil {
		if err := act.check(); err != nil {
			return usageError(cmd.name, "%v", err)
		}
	}
	load := c.Config
	if load == nil {
		load = LoadConfig
	}
	cfg, err := load(ctx, s)
	if err != nil {
		return err
	}
	return c.runAction(ctx, act, cfg, positional[0], asJSON)
}

// runAction finds the pipeline name with cfg and runs act on it.
func (c *CLI) runAction(ctx context.Context, act action, cfg aws.Config, name string, asJSON bool) error {
	clients := NewClients(cfg)
	p, err := clients.Find(ctx, name)
	if err != nil {
		return err
	}
	e := &env{cli: c, clients: clients, pipeline: p, json: asJSON, now: time.Now(), out: tabwriter.NewWriter(c.Stdout, 0, 4, 2, ' ', 0)}
	e.progress = newProgress(c.Stderr, c.Terminal)
	err = act.run(ctx, e)
	e.progress.clear()
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
