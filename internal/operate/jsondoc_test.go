package operate

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// jsonOutputs are the types each subcommand prints with --json.
var jsonOutputs = map[string]any{
	"status": Status{}, "failed": FailedList{}, "requeue": RequeueOutput{}, "skip": SkipOutput{},
	"drain": DrainOutput{}, "replay": ReplayOutput{}, "redrive": RedriveOutput{},
}

// jsonShapes are the types written by a MarshalJSON method of their own.
var jsonShapes = map[reflect.Type]reflect.Type{
	reflect.TypeFor[FailedEvent](): reflect.TypeFor[failedEventJSON](),
	reflect.TypeFor[DLQMessage]():  reflect.TypeFor[dlqMessageJSON](),
}

// jsonPaths lists the fields of t's JSON, nested ones as
// "pending.buckets[].label".
func jsonPaths(t reflect.Type, prefix string) []string {
	if shape, ok := jsonShapes[t]; ok {
		t = shape
	}
	switch t.Kind() {
	case reflect.Pointer:
		return jsonPaths(t.Elem(), prefix)
	case reflect.Slice:
		return jsonPaths(t.Elem(), prefix+"[]")
	case reflect.Struct:
		if t == reflect.TypeFor[time.Time]() {
			return nil
		}
	default:
		return nil
	}
	var paths []string
	for f := range t.Fields() {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" || !f.IsExported() {
			continue
		}
		path := name
		if prefix != "" {
			path = prefix + "." + name
		}
		paths = append(paths, path)
		paths = append(paths, jsonPaths(f.Type, path)...)
	}
	return paths
}

// The operations guide documents every field of every --json output, and
// every exit code.
func TestGuideDocumentsTheOutputs(t *testing.T) {
	t.Parallel()
	guide := readOperationsGuide(t)
	for _, name := range subcommands {
		heading := "#### `outbox " + name + " --json`\n"
		_, section, ok := strings.Cut(guide, heading)
		if !ok {
			t.Errorf("the operations guide has no section %q", heading)
			continue
		}
		if i := strings.Index(section, "\n#"); i >= 0 {
			section = section[:i]
		}
		paths := jsonPaths(reflect.TypeOf(jsonOutputs[name]), "")
		if len(paths) < 3 {
			t.Fatalf("%s --json has only the fields %v", name, paths)
		}
		for _, p := range paths {
			if !strings.Contains(section, "`"+p+"`") {
				t.Errorf("the guide's section on %s --json does not document `%s`", name, p)
			}
		}
	}
	_, codes, ok := strings.Cut(guide, "### Exit codes")
	if !ok {
		t.Fatal("the operations guide has no section on the exit codes")
	}
	for _, c := range exitCodes {
		if !strings.Contains(codes, "| "+strconv.Itoa(c.code)+" | ") {
			t.Errorf("the guide's exit codes lack %d", c.code)
		}
	}
}

// readOperationsGuide returns the text of the operations guide.
func readOperationsGuide(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("../../docs/guides/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
