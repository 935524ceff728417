package awsclienttest

import (
	"os"
	"slices"
	"testing"
)

func TestIsolate(t *testing.T) {
	t.Setenv("AWS_PROFILE", "developer")
	Isolate(t, map[string]string{"AWS_REGION": "eu-west-1"})
	for k, want := range map[string]string{"AWS_PROFILE": "", "AWS_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKIDEXAMPLE", "AWS_CONFIG_FILE": os.DevNull} {
		if got := os.Getenv(k); got != want {
			t.Errorf("%s = %q, want %q", k, got, want)
		}
	}
}

func TestEnvironAppendsTheIsolatedVariables(t *testing.T) {
	t.Parallel()
	env := Environ(map[string]string{"AWS_ACCESS_KEY_ID": "AKIDOTHER"})
	if !slices.Contains(env, "AWS_ACCESS_KEY_ID=AKIDOTHER") || !slices.Contains(env, "AWS_EC2_METADATA_DISABLED=true") {
		t.Errorf("Environ lacks the isolated variables: %v", env[len(env)-10:])
	}
}
