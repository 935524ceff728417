package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The test binary runs as the command when runAsCommand is set.
const runAsCommand = "OUTBOX_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runAsCommand) == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// outbox runs the command in a process of its own, with an environment
// holding no AWS configuration but extra, and its standard streams kept
// apart.
func outbox(t *testing.T, extra []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append([]string{runAsCommand + "=1", "PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(),
		"AWS_CONFIG_FILE=" + empty, "AWS_SHARED_CREDENTIALS_FILE=" + empty, "AWS_EC2_METADATA_DISABLED=true"}, extra...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("running outbox %v: %v", args, err)
	}
	return out.String(), errOut.String(), cmd.ProcessState.ExitCode()
}

// A script that pipes the output to jq gets nothing from a wrong command
// line; the person gets the error once, and where the usage is.
func TestBadFlagWritesOnlyToStandardError(t *testing.T) {
	t.Parallel()
	out, errOut, code := outbox(t, nil, "status", "orders", "--jsn")
	if code != 2 || out != "" {
		t.Errorf("outbox status orders --jsn: exit %d, stdout %q; want 2 and nothing", code, out)
	}
	want := "outbox: flag provided but not defined: --jsn\nRun \"outbox status --help\" for its flags and an example.\n"
	if errOut != want {
		t.Errorf("stderr = %q, want %q", errOut, want)
	}
}

// --help is asked for: it goes to standard output and exits 0.
func TestHelpGoesToStandardOutput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"--help"}, {"status", "--help"}, {"help", "replay"}} {
		out, errOut, code := outbox(t, nil, args...)
		if code != 0 || errOut != "" || !strings.Contains(out, "Exit codes:\n") {
			t.Errorf("outbox %v: exit %d, stderr %q, stdout %q", args, code, errOut, out)
		}
	}
}

// What cannot be found (the region, the credentials) exits 3, not 1 as a
// stuck pipeline does.
func TestNotFoundExitsThree(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{nil, "no AWS region is set: pass --region"},
		{[]string{"AWS_REGION=eu-west-1", "AWS_PROFILE=nosuch"}, `the AWS profile "nosuch" does not exist`},
		// No credentials anywhere; the endpoint is never reached.
		{[]string{"AWS_REGION=eu-west-1", "AWS_ENDPOINT_URL=http://127.0.0.1:9"}, "no AWS credentials were found: pass --profile"},
	} {
		out, errOut, code := outbox(t, tc.env, "status", "orders", "--json")
		if code != 3 || out != "" || !strings.Contains(errOut, tc.want) || strings.Count(errOut, "outbox: ") != 1 {
			t.Errorf("outbox status orders with %v: exit %d, stdout %q, stderr %q; want 3 and %q", tc.env, code, out, errOut, tc.want)
		}
	}
}
