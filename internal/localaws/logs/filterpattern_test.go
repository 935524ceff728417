package logs

import (
	"slices"
	"testing"
)

// The log events and patterns below are the examples of CloudWatch Logs'
// filter pattern documentation ("Matching terms in unstructured log
// events", "Using filter patterns to match terms in JSON log events",
// "Using filter patterns to match terms in space-delimited log events"),
// with the events each pattern matches there.

var errorEvents = []string{
	"[ERROR 400] BAD REQUEST",
	"[ERROR 401] UNAUTHORIZED REQUEST",
	"[ERROR 419] MISSING ARGUMENTS",
	"[ERROR 420] INVALID ARGUMENTS",
}

const trailEvent = `{"eventType":"UpdateTrail","sourceIPAddress":"111.111.111.111","arrayKey":["value","another value"],` +
	`"objectList":[{"name":"a","id":1},{"name":"b","id":2}],"SomeObject":null,"ThisFlag":true,"latency":512.5}`

const usersEvent = `{"user":{"id":1,"email":"John.Doe@example.com"},"users":[{"id":2,"email":"John.Doe@example.com"},` +
	`{"id":3,"email":"Jane.Doe@example.com"}],"actions":["GET","PUT","DELETE"],"coordinates":[[0,1],[2,3]]}`

const accessEvent = `127.0.0.1 - frank [10/Oct/2000:13:25:15 -0700] "GET /apache_pb.gif HTTP/1.0" 200 1534`

func TestFilterPatterns(t *testing.T) {
	t.Parallel()
	tests := []struct {
		pattern string
		events  []string
		want    []int // indexes of the matching events
	}{
		// Terms.
		{`ERROR`, errorEvents, []int{0, 1, 2, 3}},
		{`ERROR ARGUMENTS`, errorEvents, []int{2, 3}},
		{`?ARGUMENTS ?REQUEST`, errorEvents, []int{0, 1, 2, 3}},
		{`?BAD ?MISSING`, errorEvents, []int{0, 2}},
		{`"BAD REQUEST"`, errorEvents, []int{0}},
		{`ERROR -ARGUMENTS`, errorEvents, []int{0, 1}},
		{`-"ERROR 4"`, errorEvents, nil},
		{`error`, errorEvents, nil},
		{``, errorEvents, []int{0, 1, 2, 3}},

		// JSON.
		{`{ $.eventType = "UpdateTrail" }`, []string{trailEvent}, []int{0}},
		{`{ $.eventType = UpdateTrail }`, []string{trailEvent}, []int{0}},
		{`{ $.eventType = "Update*" }`, []string{trailEvent}, []int{0}},
		{`{ $.eventType != "UpdateTrail" }`, []string{trailEvent}, nil},
		{`{ $.sourceIPAddress != 123.123.* }`, []string{trailEvent}, []int{0}},
		{`{ $.sourceIPAddress = 111.* }`, []string{trailEvent}, []int{0}},
		{`{ $.arrayKey[0] = "value" }`, []string{trailEvent}, []int{0}},
		{`{ $.arrayKey[1] = "value" }`, []string{trailEvent}, nil},
		{`{ $.objectList[1].id = 2 }`, []string{trailEvent}, []int{0}},
		{`{ $.objectList[1].id = 2.0 }`, []string{trailEvent}, []int{0}},
		{`{ $.objectList[5].id = 2 }`, []string{trailEvent}, nil},
		{`{ $.SomeObject IS NULL }`, []string{trailEvent}, []int{0}},
		{`{ $.eventType IS NULL }`, []string{trailEvent}, nil},
		{`{ $.SomeOtherObject NOT EXISTS }`, []string{trailEvent}, []int{0}},
		{`{ $.SomeObject NOT EXISTS }`, []string{trailEvent}, nil},
		{`{ $.ThisFlag IS TRUE }`, []string{trailEvent}, []int{0}},
		{`{ $.ThisFlag IS FALSE }`, []string{trailEvent}, nil},
		{`{ $.latency >= 500 }`, []string{trailEvent}, []int{0}},
		{`{ $.latency > 512.5 }`, []string{trailEvent}, nil},
		{`{ $.latency <= 512.5 && $.latency < 1000 }`, []string{trailEvent}, []int{0}},
		{`{ $.missing != 1 }`, []string{trailEvent}, nil},
		{`{ $.eventType = %Update[A-Z]rail% }`, []string{trailEvent}, []int{0}},
		{`{ ($.user.id = 1) && ($.users[0].email = "John.Doe@example.com") }`, []string{usersEvent}, []int{0}},
		{`{ ($.user.id = 2 && $.users[0].email = "John.Doe@example.com") || $.actions[2] = "GET" }`, []string{usersEvent}, nil},
		{`{ $.user.email = "John.Doe@example.com" || $.coordinates[0][1] = "nonmatch" && $.actions[2] = "nonmatch" }`, []string{usersEvent}, []int{0}},
		{`{ ($.user.email = "John.Doe@example.com" || $.coordinates[0][1] = "nonmatch") && $.actions[2] = "nonmatch" }`, []string{usersEvent}, nil},
		{`{ $.coordinates[1][0] = 2 }`, []string{usersEvent}, []int{0}},
		{`{ $.level = "INFO" }`, []string{`{"level":"INFO","msg":"a"}`, `{"level":"ERROR"}`, `level INFO`, `["INFO"]`}, []int{0}},

		// Space-delimited.
		{`[ip, user, username, timestamp, request, status_code, bytes]`, []string{accessEvent}, []int{0}},
		{`[ip, user, username, timestamp, request, status_code = 4*, bytes]`, []string{accessEvent}, nil},
		{`[ip, user, ..., status_code, bytes]`, []string{accessEvent}, []int{0}},
		{`[ip, user, ..., status_code = 2*, bytes > 1000]`, []string{accessEvent}, []int{0}},
		{`[ip, user, ..., status_code = 2*, bytes > 2000]`, []string{accessEvent}, nil},
		{`[ip, user, username, timestamp, request = *gif*, ...]`, []string{accessEvent}, []int{0}},
		{`[ip, user, username = frank, timestamp = 10/Oct*, ...]`, []string{accessEvent}, []int{0}},
		{`[ip = 127.0.0.1, ...]`, []string{accessEvent}, []int{0}},
		{`[ip != 10.*, ...]`, []string{accessEvent}, []int{0}},
		{`[ip, user, username]`, []string{accessEvent}, nil},
		{`[..., status_code = 404 || status_code = 200, bytes]`, []string{accessEvent}, []int{0}},
		{`[..., status_code >= 200 && status_code < 300, bytes]`, []string{accessEvent}, []int{0}},
	}
	for _, tc := range tests {
		match, err := compileFilter(tc.pattern)
		if err != nil {
			t.Errorf("%s: %v", tc.pattern, err)
			continue
		}
		var got []int
		for i, e := range tc.events {
			if match(e) {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s matches events %v, want %v", tc.pattern, got, tc.want)
		}
	}
}

func TestInvalidFilterPatterns(t *testing.T) {
	t.Parallel()
	for _, p := range []string{
		`{ $.a = }`,
		`{ a = 1 }`,
		`{ $.a = 1`,
		`{ $.a = 1 && }`,
		`{ ($.a = 1 }`,
		`{ $.a[x] = 1 }`,
		`[a, b`,
		`[a b, c]`,
		`"unterminated`,
		`{ $.a = %[% }`,
	} {
		if _, err := compileFilter(p); err == nil {
			t.Errorf("%s compiled, want an error", p)
		} else if err.Code != "InvalidParameterException" {
			t.Errorf("%s: error %v, want InvalidParameterException", p, err)
		}
	}
}
