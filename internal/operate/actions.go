package operate

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// This file is the second front end of the subcommands: Terraform's
// actions run a subcommand by its name with the options a configuration
// gives, through the same flags, checks and run as the command line, and
// receive its text and progress line by line.

// OptionKind is how a front end types an option.
type OptionKind int

const (
	// OptionString is any text the flag parses: a duration, a time, an id.
	OptionString OptionKind = iota
	// OptionBool is a switch such as --yes.
	OptionBool
	// OptionList is a flag that may be given several times (--id).
	OptionList
	// OptionNumber is a number (--rate).
	OptionNumber
)

// Option is one flag of a subcommand.
type Option struct {
	// Flag is the flag's name, without dashes ("dry-run").
	Flag string
	Kind OptionKind
	// Usage is the flag's help, without the back quotes of its placeholder.
	Usage string
	// Default is the flag's default as typed ("10m", "false"); empty when
	// the flag has none.
	Default string
	// Required is true when the subcommand refuses to run without it.
	Required bool
}

// Operation describes a subcommand for another front end.
type Operation struct {
	Name, Summary, Help string
	// Permissions are the IAM actions it calls, finding the pipeline
	// included, as its --help lists them.
	Permissions []string
	Options     []Option
}

// LookupOperation describes the subcommand name; false when there is none.
func LookupOperation(name string) (Operation, bool) {
	cmd, ok := lookupCommand(name)
	if !ok {
		return Operation{}, false
	}
	op := Operation{Name: cmd.name, Summary: cmd.summary, Help: cmd.help, Permissions: slices.Concat(findPermissions, cmd.permissions)}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.flags(fs)
	fs.VisitAll(func(f *flag.Flag) {
		_, usage := flag.UnquoteUsage(f)
		def := f.DefValue
		if def == "[]" {
			def = ""
		}
		op.Options = append(op.Options, Option{Flag: f.Name, Kind: optionKind(f.Value), Usage: usage, Default: def, Required: strings.Contains(usage, "(required)")})
	})
	return op, true
}

func lookupCommand(name string) (command, bool) {
	for _, cmd := range commands() {
		if cmd.name == name {
			return cmd, true
		}
	}
	return command{}, false
}

func optionKind(v flag.Value) OptionKind {
	switch v := v.(type) {
	case listFlag:
		return OptionList
	case parsedValue[float64]:
		return OptionNumber
	case interface{ IsBoolFlag() bool }:
		if v.IsBoolFlag() {
			return OptionBool
		}
	}
	return OptionString
}

// OptionError is a value that the flag Flag does not accept.
type OptionError struct {
	Flag string
	Err  error
}

func (e *OptionError) Error() string { return fmt.Sprintf("--%s: %v", e.Flag, e.Err) }

func (e *OptionError) Unwrap() error { return e.Err }

// Values are the options given to a subcommand: each flag's values, in
// the order given (several only for an OptionList).
type Values map[string][]string

// CheckOptions checks values as the command line checks its flags, before
// anything reaches AWS: each value is parsed by its flag (a bad one is an
// *OptionError), then the subcommand refuses options that cannot be meant
// together.
func CheckOptions(name string, values Values) error {
	_, err := prepare(name, values)
	return err
}

// CheckOption checks one value of the flag of the subcommand name, as the
// flag parses it (a bad one is an *OptionError).
func CheckOption(name, flagName, value string) error {
	cmd, ok := lookupCommand(name)
	if !ok {
		return fmt.Errorf("there is no subcommand %q", name)
	}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	cmd.flags(fs)
	return setValues(fs, name, Values{flagName: {value}})
}

// prepare declares the flags of the subcommand name, sets values on them
// and checks them.
func prepare(name string, values Values) (action, error) {
	cmd, ok := lookupCommand(name)
	if !ok {
		return action{}, fmt.Errorf("there is no subcommand %q", name)
	}
	fs := flag.NewFlagSet(cmd.name, flag.ContinueOnError)
	act := cmd.flags(fs)
	if err := setValues(fs, name, values); err != nil {
		return action{}, err
	}
	if act.check != nil {
		if err := act.check(); err != nil {
			return action{}, err
		}
	}
	return act, nil
}

// setValues sets values on the flags of fs, of the subcommand name.
func setValues(fs *flag.FlagSet, name string, values Values) error {
	flags := make([]string, 0, len(values))
	for f := range values {
		flags = append(flags, f)
	}
	slices.Sort(flags)
	for _, f := range flags {
		if fs.Lookup(f) == nil {
			return fmt.Errorf("outbox %s has no option %q", name, f)
		}
		for _, v := range values[f] {
			if err := fs.Set(f, v); err != nil {
				return &OptionError{Flag: f, Err: err}
			}
		}
	}
	return nil
}

// Invocation is one run of a subcommand by another front end.
type Invocation struct {
	// Command is the subcommand's name ("drain"); Pipeline the pipeline's.
	Command, Pipeline string
	Values            Values
	// Line receives each line the subcommand writes: its result as text,
	// its notes, and a progress line every few seconds of long work. It is
	// called from one goroutine at a time.
	Line func(string)
}

// Invoke runs the subcommand as the command line runs it, with cfg as the
// AWS configuration: the same checks, dry runs and refusals; an
// incomplete outcome (a drain that timed out, events left pending) is an
// error, as it is exit code 1 there.
func Invoke(ctx context.Context, cfg aws.Config, inv Invocation) error {
	act, err := prepare(inv.Command, inv.Values)
	if err != nil {
		return err
	}
	lines := &lineWriter{line: inv.Line}
	c := &CLI{Stdout: lines, Stderr: lines}
	err = c.runAction(ctx, act, cfg, inv.Pipeline, false)
	lines.close()
	return err
}

// lineWriter calls line with each complete line written to it.
type lineWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	line func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	for {
		i := bytes.IndexByte(w.buf.Bytes(), '\n')
		if i < 0 {
			return len(p), nil
		}
		w.emit(string(w.buf.Next(i + 1)))
	}
}

// close passes on the last line, if it had no newline.
func (w *lineWriter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.buf.Len() > 0 {
		w.emit(w.buf.String())
		w.buf.Reset()
	}
}

func (w *lineWriter) emit(s string) {
	if s = strings.TrimRight(s, " \r\n"); s != "" && w.line != nil {
		w.line(s)
	}
}
