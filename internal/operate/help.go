package operate

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
)

// writeUsage writes the command's help: what it does, the subcommands and
// the exit codes.
func writeUsage(w io.Writer) {
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
AWS_ENDPOINT_URL), uses the standard AWS credential chain, and prints its
result as JSON with --json. Results go to standard output; progress, notes
and errors to standard error.
Run "outbox <subcommand> --help" for its flags and an example.

`)
	writeExitCodes(w)
}

// writeExitCodes writes the exit codes and their meanings.
func writeExitCodes(w io.Writer) {
	_, _ = fmt.Fprintln(w, "Exit codes:")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, c := range exitCodes {
		_, _ = fmt.Fprintf(tw, "  %d\t%s\n", c.code, c.meaning)
	}
	_ = tw.Flush()
}

// writeCommandUsage writes the help of a subcommand, with its flags as
// declared in fs.
func writeCommandUsage(w io.Writer, cmd command, fs *flag.FlagSet) {
	_, _ = fmt.Fprintf(w, "Usage: outbox %s <pipeline>%s [flags]\n\n%s\n\n%s\n\nExample:\n  %s\n\nIAM permissions: %s\n\nFlags:\n",
		cmd.name, cmd.args, cmd.summary, cmd.help, cmd.example, strings.Join(slices.Concat(findPermissions, cmd.permissions), ", "))
	writeFlags(w, fs)
	_, _ = fmt.Fprintln(w)
	writeExitCodes(w)
}

// writeFlags lists the flags of fs as users of other CLIs read them:
// "--since DURATION|TIME", the placeholder being the usage's back-quoted
// word (flag.UnquoteUsage), and the default when it is not the zero value.
func writeFlags(w io.Writer, fs *flag.FlagSet) {
	tw := tabwriter.NewWriter(w, 0, 4, 3, ' ', 0)
	fs.VisitAll(func(f *flag.Flag) {
		placeholder, usage := flag.UnquoteUsage(f)
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() {
			placeholder = ""
		}
		name := "--" + f.Name
		if placeholder != "" {
			name += " " + placeholder
		}
		if !slices.Contains([]string{"", "false", "0", "0s"}, f.DefValue) {
			usage += " (default " + f.DefValue + ")"
		}
		_, _ = fmt.Fprintf(tw, "  %s\t%s\n", name, usage)
	})
	_ = tw.Flush()
}

// singleDash finds the flag names that the flag package's errors spell
// with one dash ("flag provided but not defined: -jsn").
var singleDash = regexp.MustCompile(`(defined: |for flag |for |argument: )-([A-Za-z])`)

// flagError rewrites an error of the flag package with the flags spelled
// as the help spells them.
func flagError(err error) string {
	return singleDash.ReplaceAllString(err.Error(), "${1}--${2}")
}

// CommandPermissions are the IAM actions of each subcommand, finding the
// pipeline's included, in the order of the help.
func CommandPermissions() []CommandPermission {
	var out []CommandPermission
	for _, c := range commands() {
		out = append(out, CommandPermission{Name: c.name, Actions: slices.Concat(findPermissions, c.permissions)})
	}
	return out
}

// CommandPermission is a subcommand and its IAM actions.
type CommandPermission struct {
	Name    string
	Actions []string
}
