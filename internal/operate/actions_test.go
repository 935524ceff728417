package operate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
)

// An operation is described from its subcommand: the options are its
// flags, with their kinds and defaults, and the permissions are those its
// --help lists.
func TestLookupOperation(t *testing.T) {
	t.Parallel()
	for _, cmd := range commands() {
		op, ok := LookupOperation(cmd.name)
		if !ok {
			t.Fatalf("LookupOperation(%q) found nothing", cmd.name)
		}
		if want := slices.Concat(findPermissions, cmd.permissions); !slices.Equal(op.Permissions, want) {
			t.Errorf("%s: permissions %v, want %v", cmd.name, op.Permissions, want)
		}
		if op.Summary != cmd.summary || op.Help != cmd.help {
			t.Errorf("%s: summary or help differ from the command's", cmd.name)
		}
		for _, o := range op.Options {
			if strings.Contains(o.Usage, "`") || o.Usage == "" {
				t.Errorf("%s --%s: usage %q keeps its back quotes or is empty", cmd.name, o.Flag, o.Usage)
			}
		}
	}
	if _, ok := LookupOperation("explode"); ok {
		t.Error("LookupOperation found a subcommand that does not exist")
	}
	tests := []struct {
		command, flag string
		want          Option
	}{
		{"drain", "timeout", Option{Flag: "timeout", Kind: OptionString, Default: "10m"}},
		{"drain", "interval", Option{Flag: "interval", Kind: OptionString, Default: "2s"}},
		{"requeue", "id", Option{Flag: "id", Kind: OptionList}},
		{"requeue", "dry-run", Option{Flag: "dry-run", Kind: OptionBool, Default: "false"}},
		{"replay", "rate", Option{Flag: "rate", Kind: OptionNumber, Default: "0"}},
		{"replay", "since", Option{Flag: "since", Kind: OptionString, Required: true}},
		{"skip", "event-id", Option{Flag: "event-id", Kind: OptionString, Required: true}},
		{"redrive", "visibility", Option{Flag: "visibility", Kind: OptionString, Default: "5m"}},
	}
	for _, tt := range tests {
		op, _ := LookupOperation(tt.command)
		i := slices.IndexFunc(op.Options, func(o Option) bool { return o.Flag == tt.flag })
		if i < 0 {
			t.Errorf("%s has no option %s", tt.command, tt.flag)
			continue
		}
		got := op.Options[i]
		got.Usage = ""
		if got != tt.want {
			t.Errorf("%s --%s: %+v, want %+v", tt.command, tt.flag, got, tt.want)
		}
	}
}

// Options are checked as the command line checks its flags: a value its
// flag refuses names the flag; options that cannot be meant together are
// refused by the subcommand's own check.
func TestCheckOptions(t *testing.T) {
	t.Parallel()
	tests := []struct {
		command string
		values  Values
		flag    string // of the *OptionError; "" for another error
		want    string // "" for no error
	}{
		{"drain", Values{"timeout": {"15m"}, "interval": {"1s"}}, "", ""},
		{"drain", Values{"timeout": {"0s"}}, "", "--timeout must be longer than 0s"},
		{"drain", Values{"interval": {"soon"}}, "interval", `"soon" is not a duration`},
		{"drain", Values{"yes": {"true"}}, "", `outbox drain has no option "yes"`},
		{"requeue", Values{"id": {"a", "b"}, "dry-run": {"true"}}, "", ""},
		{"requeue", Values{"dry-run": {"maybe"}}, "dry-run", "parse error"},
		{"requeue", Values{"since": {"2999-01-01"}}, "", "is in the future"},
		{"skip", Values{}, "", "skip needs --event-id"},
		{"replay", Values{"since": {"1h"}, "until": {"2h"}}, "", "the window is empty"},
		{"replay", Values{"since": {"1h"}, "rate": {"-1"}}, "rate", "is not a rate"},
		{"redrive", Values{"visibility": {"13h"}}, "", "--visibility 13h is out of range"},
		{"explode", Values{}, "", `there is no subcommand "explode"`},
	}
	for _, tt := range tests {
		err := CheckOptions(tt.command, tt.values)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s %v: %v", tt.command, tt.values, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s %v: error %v, want one saying %q", tt.command, tt.values, err, tt.want)
			continue
		}
		var oe *OptionError
		if got := errors.As(err, &oe); got != (tt.flag != "") || (got && oe.Flag != tt.flag) {
			t.Errorf("%s %v: %#v, want an *OptionError of %q", tt.command, tt.values, err, tt.flag)
		}
	}
	if err := CheckOption("drain", "timeout", "1x"); err == nil {
		t.Error(`CheckOption accepted --timeout 1x`)
	}
	if err := CheckOption("skip", "yes", "true"); err != nil {
		t.Errorf("CheckOption checked more than the flag: %v", err)
	}
}

// Invoke refuses bad options before anything reaches AWS: the
// configuration here points nowhere.
func TestInvokeChecksFirst(t *testing.T) {
	t.Parallel()
	var lines []string
	err := Invoke(context.Background(), aws.Config{Region: "us-east-1"}, Invocation{
		Command: "drain", Pipeline: "orders", Values: Values{"timeout": {"0s"}},
		Line: func(s string) { lines = append(lines, s) },
	})
	if err == nil || !strings.Contains(err.Error(), "--timeout must be longer than 0s") || len(lines) > 0 {
		t.Errorf("Invoke with --timeout 0s: %v, lines %q", err, lines)
	}
}

// Each complete line reaches Line once, without its end; blank lines are
// dropped; the last line without a newline is passed on at close.
func TestLineWriter(t *testing.T) {
	t.Parallel()
	var got []string
	w := &lineWriter{line: func(s string) { got = append(got, s) }}
	for _, s := range []string{"requeued 2 ", "events\n\nreconciler", " run 1\r\n", "left"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := []string{"requeued 2 events", "reconciler run 1"}; !slices.Equal(got, want) {
		t.Fatalf("before close: %q, want %q", got, want)
	}
	w.close()
	if want := []string{"requeued 2 events", "reconciler run 1", "left"}; !slices.Equal(got, want) {
		t.Errorf("after close: %q, want %q", got, want)
	}
}
