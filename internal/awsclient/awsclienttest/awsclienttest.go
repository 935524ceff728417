// Package awsclienttest gives a test an AWS environment of its own: the
// SDK's default configuration chain then reads only what the test sets,
// never a developer's profile, shared files or instance metadata.
package awsclienttest

import (
	"maps"
	"os"
	"slices"
	"testing"
)

// Env returns the variables of an isolated AWS environment: example
// credentials, no session token, profile, region or endpoint, empty
// configuration and credentials files, and no instance metadata. The
// entries of set replace or add to them (AWS_REGION, AWS_ENDPOINT_URL,
// another key pair).
func Env(set map[string]string) map[string]string {
	env := map[string]string{
		"AWS_ACCESS_KEY_ID":           "AKIDEXAMPLE",
		"AWS_SECRET_ACCESS_KEY":       "secret",
		"AWS_SESSION_TOKEN":           "",
		"AWS_PROFILE":                 "",
		"AWS_REGION":                  "",
		"AWS_DEFAULT_REGION":          "",
		"AWS_ENDPOINT_URL":            "",
		"AWS_CONFIG_FILE":             os.DevNull,
		"AWS_SHARED_CREDENTIALS_FILE": os.DevNull,
		"AWS_EC2_METADATA_DISABLED":   "true",
	}
	maps.Copy(env, set)
	return env
}

// Isolate sets the variables of Env(set) for the test (t.Setenv, so the
// test cannot be parallel).
func Isolate(t testing.TB, set map[string]string) {
	t.Helper()
	env := Env(set)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		t.Setenv(k, env[k])
	}
}

// Environ returns os.Environ with the variables of Env(set) appended, for
// a process the test starts: a later entry wins.
func Environ(set map[string]string) []string {
	env := Env(set)
	out := os.Environ()
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}
